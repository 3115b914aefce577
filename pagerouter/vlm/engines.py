"""VLM engines by `kind` (one file each), built from a `VlmEngineConfig`.

`shared_vlm_engine` hands out one engine per identical engine config in a process: when both
tiers name the same model with the same settings (a CPU try-out, one small GPU), the region
reader and the page escalator share one vLLM engine instead of starting and holding two; the
engine closes when the last of its users releases it.
"""

from __future__ import annotations

import importlib
import threading

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


_SHARED_LOCK = threading.Lock()
_SHARED: dict[str, list] = {}  # engine config JSON -> [engine, users]


def shared_vlm_engine(cfg: VlmEngineConfig) -> VlmEngine:
    """The process's engine for `cfg` (built on first use); pair with `release_vlm_engine`."""
    key = cfg.model_dump_json()
    with _SHARED_LOCK:
        entry = _SHARED.get(key)
        if entry is None:
            entry = _SHARED[key] = [build_vlm_engine(cfg), 0]
        entry[1] += 1
        return entry[0]


def release_vlm_engine(engine: VlmEngine) -> None:
    """One user is done with `engine`: the last one closes it (an engine not from
    `shared_vlm_engine` is closed at once)."""
    with _SHARED_LOCK:
        key = next((k for k, e in _SHARED.items() if e[0] is engine), None)
        if key is not None:
            _SHARED[key][1] -= 1
            if _SHARED[key][1] > 0:
                return
            del _SHARED[key]
    engine.close()
