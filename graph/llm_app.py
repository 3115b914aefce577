"""A VLM tier served by Ray Serve LLM (`ray.serve.llm`): vLLM engines in their own Serve
deployment, speaking the OpenAI API, autoscaled (scale to zero) by Serve.

This is the other way to run a tier in the served graph: instead of the SmallReader or
LargeReader replica owning its vLLM engine (`engine.kind: vllm`), the tier's engine is
`kind: openai_server` pointed at this application, and the pagerouter deployment stays a thin
CPU client. One pagerouter config drives both applications: the LLM app takes the model,
dtype, context length, quantization, memory and vLLM arguments from the tier's `vlm.engine`
fields, and its replica resources and autoscaling from `serve.<tier deployment>`.

    applications:
      - name: pagerouter      # escalation.vlm.engine: {kind: openai_server, base_url: http://127.0.0.1:8000/llm/v1, ...}
        import_path: pagerouter.graph.builder:app_builder
        args: {config_path: my.yaml}
      - name: llm
        route_prefix: /llm
        import_path: pagerouter.graph.llm_app:llm_app_builder
        args: {config_path: my.yaml, tier: escalation}

Needs `ray.serve.llm`'s own dependencies (vLLM and pyarrow: the `vlm-cpu` or `gpu` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pagerouter.graph.builder import deployment_options
from pagerouter.config import PagerouterConfig, load_config
from pagerouter.config.serve import DeploymentSettings
from pagerouter.config.vlm import VlmTierConfig

Tier = Literal["small_reader", "escalation"]


def tier_of(cfg: PagerouterConfig, tier: Tier) -> tuple[VlmTierConfig, DeploymentSettings]:
    if tier == "small_reader":
        return cfg.ocr.small_reader.vlm, cfg.serve.small_reader
    if tier == "escalation":
        return cfg.ocr.escalation.vlm, cfg.serve.large_reader
    raise ValueError(f"tier must be small_reader or escalation, not {tier!r}")


def llm_config_for(tier: VlmTierConfig, settings: DeploymentSettings):
    """A Ray Serve LLM `LLMConfig` for one tier's engine settings."""
    from ray.serve.llm import LLMConfig

    e = tier.engine
    if not e.model:
        raise ValueError("the tier's vlm.engine.model must name the model directory or hub name the LLM app serves")
    engine_kwargs: dict[str, Any] = {
        "dtype": e.dtype, "max_model_len": e.max_model_len, "enforce_eager": e.enforce_eager,
        "limit_mm_per_prompt": {"image": e.images_per_prompt, "video": 0},
        "trust_remote_code": e.trust_remote_code, "seed": e.seed,
    }
    if e.revision:
        engine_kwargs["revision"] = e.revision
    if e.quantization:
        engine_kwargs["quantization"] = e.quantization
    if e.max_num_seqs:
        engine_kwargs["max_num_seqs"] = e.max_num_seqs
    env: dict[str, str] = {}
    if settings.num_gpus:
        engine_kwargs["gpu_memory_utilization"] = e.gpu_memory_utilization
        accelerator: dict[str, Any] = {}
    else:
        accelerator = {"accelerator_config": {"kind": "cpu"}}
        if e.cpu_kv_cache_gib:
            env["VLLM_CPU_KVCACHE_SPACE"] = str(max(1, round(e.cpu_kv_cache_gib)))
    engine_kwargs.update(e.engine_kwargs)
    serve_opts = deployment_options(settings)  # the same autoscaling numbers as our own deployments
    return LLMConfig(
        model_loading_config={"model_id": e.model_name(), "model_source": e.model},
        engine_kwargs=engine_kwargs,
        deployment_config={k: serve_opts[k] for k in ("autoscaling_config", "max_ongoing_requests", "max_queued_requests")},
        runtime_env={"env_vars": env} if env else None,
        **accelerator,
    )


def build_llm_app(cfg: PagerouterConfig, tier: Tier = "escalation"):
    """The OpenAI-compatible Serve LLM application for `tier`."""
    from ray.serve.llm import build_openai_app

    from pagerouter.vlm.model_limits import resolve_limits

    vlm, settings = tier_of(cfg, tier)
    # the model's own limits (a null max_model_len, a max_new_tokens that does not fit) before the app starts
    vlm = resolve_limits(cfg.ocr, vlm, f"ocr.{tier}.vlm", region=tier == "small_reader")
    return build_openai_app({"llm_configs": [llm_config_for(vlm, settings)]})


def llm_app_builder(args: dict[str, Any]):
    """`serve run` entry point: args `config` and/or `config_path` (as pagerouter.graph.builder.app_builder)
    and `tier` (`escalation` or `small_reader`)."""
    args = dict(args or {})
    unknown = set(args) - {"config", "config_path", "tier"}
    if unknown:
        raise ValueError(f"unknown application args {sorted(unknown)}; expected `config`, `config_path`, `tier`")
    path = args.get("config_path")
    cfg = load_config(Path(path) if path else None, overrides=args.get("config") or None)
    return build_llm_app(cfg, args.get("tier", "escalation"))
