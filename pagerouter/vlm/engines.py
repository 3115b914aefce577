"""VLM engines by `kind` (one file each), built from a `VlmEngineConfig`."""

from __future__ import annotations

import importlib

from ..config.vlm import VlmEngineConfig
from .base import VlmEngine

VLM_ENGINE_KINDS: dict[str, str] = {
    "vllm": "pagerouter.vlm.engine_vllm:VllmEngine",
    "openai_server": "pagerouter.vlm.engine_openai:OpenAiServerEngine",
}


def build_vlm_engine(cfg: VlmEngineConfig) -> VlmEngine:
    try:
        target = VLM_ENGINE_KINDS[cfg.kind]
    except KeyError:
        raise ValueError(f"vlm engine kind {cfg.kind!r} is not known (known: {', '.join(VLM_ENGINE_KINDS)})") from None
    module, _, attr = target.partition(":")
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        extra = "vlm-cpu (CPU) or gpu" if cfg.kind == "vllm" else "serve"
        raise RuntimeError(
            f"vlm engine kind {cfg.kind!r} cannot load: {exc}; install the `{extra}` extra (see README)"
        ) from exc
    return getattr(mod, attr)(cfg)
