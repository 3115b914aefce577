"""Build the Serve application from the one pydantic config.

    Ingress ──► Triage (stream of TriageOutcome)
       ├──────► Layout (batched) ──► SmallReader (batched)
       └──────► LargeReader (escalation, may sleep at 0 replicas)

`build_app(cfg)` is used by `pagerouter serve` and by `serve run configs/serve.yaml` through
`app_builder(args)`. In-process conversion does not go through Serve: `pagerouter.Converter`
runs the same engines and the same `pipeline.convert_pages`. Per-deployment resources and
autoscaling come from `cfg.serve.<deployment>`; a Serve config YAML may override them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ray.serve import Application

from pagerouter.deployments.batched import Layout, SmallReader
from pagerouter.deployments.ingress import make_ingress
from pagerouter.deployments.large_reader import LargeReader
from pagerouter.deployments.triage import Triage
from pagerouter.config import PagerouterConfig, load_config
from pagerouter.config.serve import BatchedDeploymentSettings, DeploymentSettings, ServeConfig

GRPC_SERVICER = "pagerouter.wire.protos.pagerouter_pb2_grpc.add_PageRouterServicer_to_server"
DEPLOYMENT_NAMES = ("Ingress", "Triage", "Layout", "SmallReader", "LargeReader")


def deployment_options(s: DeploymentSettings) -> dict[str, Any]:
    """Serve deployment options for one deployment's settings."""
    autoscaling: dict[str, Any] = {
        "min_replicas": s.min_replicas,
        "max_replicas": s.max_replicas,
        "target_ongoing_requests": s.target_ongoing_requests,
        "upscale_delay_s": s.upscale_delay_s,
        "downscale_delay_s": s.downscale_delay_s,
        "look_back_period_s": s.look_back_period_s,
        "metrics_interval_s": s.metrics_interval_s,
    }
    if s.initial_replicas is not None:
        autoscaling["initial_replicas"] = s.initial_replicas
    if s.downscale_to_zero_delay_s is not None:
        autoscaling["downscale_to_zero_delay_s"] = s.downscale_to_zero_delay_s
    actor: dict[str, Any] = {"num_cpus": s.num_cpus}
    if s.num_gpus:
        actor["num_gpus"] = s.num_gpus
    if s.resources:
        actor["resources"] = dict(s.resources)
    return {
        "ray_actor_options": actor,
        "autoscaling_config": autoscaling,
        "max_ongoing_requests": s.max_ongoing_requests,
        "max_queued_requests": s.max_queued_requests,
    }


def build_app(cfg: PagerouterConfig, require_api_key: bool = False) -> Application:
    """A fresh Serve application for `cfg` (build one per run: Serve cannot run one twice).

    `require_api_key`: the Ingress refuses to start without an API key in its own environment
    (so a key set where the app is built cannot silently be missing where requests land).
    The key itself never goes into the application's arguments."""
    from ray.serve.config import BackpressureConfig

    data = cfg.model_dump(mode="json")
    s = cfg.serve
    metrics = s.metrics_enabled
    # A full queue answers 503 with Retry-After (HTTP), RESOURCE_EXHAUSTED/UNAVAILABLE (gRPC).
    refuse = BackpressureConfig(status_code=503, retry_after_s=cfg.limits.retry_after_s)

    def options(d: DeploymentSettings) -> dict[str, Any]:
        return {**deployment_options(d), "backpressure_config": refuse}

    triage = Triage.options(**options(s.triage)).bind(data)
    layout = Layout.options(**options(s.layout)).bind(data, True, metrics)
    reader = SmallReader.options(**options(s.small_reader)).bind(data, True, metrics)
    large = LargeReader.options(**options(s.large_reader)).bind(data)
    ingress_options = options(s.ingress)
    if s.ingress.max_queued_requests == -1:  # bounded by default: past it Serve answers 503 + Retry-After
        ingress_options["max_queued_requests"] = s.max_queued_requests
    ingress = make_ingress().options(**ingress_options)
    return ingress.bind(data, triage, layout, reader, large, require_api_key=require_api_key)


def app_builder(args: dict[str, Any]) -> Application:
    """`serve run` entry point: args `config` (a pagerouter config mapping) and/or
    `config_path` (a YAML file); `config` keys override the file's."""
    args = dict(args or {})
    unknown = set(args) - {"config", "config_path"}
    if unknown:
        raise ValueError(f"unknown application args {sorted(unknown)}; expected `config` and/or `config_path`")
    path = args.get("config_path")
    cfg = load_config(Path(path) if path else None, overrides=args.get("config") or None)
    if cfg.serve.replicas is not None:  # `serve run` builds inside the cluster's Ray: derive from the cluster
        from pagerouter.graph.replicas import derive_replicas, machine_now

        cfg.serve = derive_replicas(cfg.serve, machine_now(cluster=True), cfg.serve.replicas)
    from pagerouter.service.api_key import load_api_key

    return build_app(cfg, require_api_key=load_api_key() is not None)


def serve_start_options(s: ServeConfig, grpc_proxy: bool = True, head_only: bool = False) -> dict[str, Any]:
    """Keyword arguments of `serve.start` for this config's proxies and tracing.

    `grpc_proxy=False` leaves Serve's gRPC proxy off (it listens on `[::]:grpc_port` whatever
    serve.host says); `pagerouter serve` answers gRPC with graph/grpc_front.py instead.
    `head_only`: one HTTP proxy, on the head node (several nodes on one machine, as in
    load_tests' local cluster, would otherwise each try to bind the same port)."""
    from ray.serve.config import HTTPOptions, ProxyLocation, gRPCOptions

    out: dict[str, Any] = {
        "http_options": HTTPOptions(host=s.host, port=s.http_port, request_timeout_s=s.request_timeout_s),
    }
    if head_only:
        out["proxy_location"] = ProxyLocation.HeadOnly
    if grpc_proxy:
        out["grpc_options"] = gRPCOptions(
            port=s.grpc_port, grpc_servicer_functions=[GRPC_SERVICER], request_timeout_s=s.request_timeout_s
        )
    if s.tracing.enabled:
        from ray.serve.schema import TracingConfig

        out["tracing_config"] = TracingConfig(
            enabled=True, sampling_ratio=s.tracing.sampling_ratio, exporter_import_path=s.tracing.exporter_import_path
        )
    return out


__all__ = [
    "BatchedDeploymentSettings",
    "DEPLOYMENT_NAMES",
    "GRPC_SERVICER",
    "app_builder",
    "build_app",
    "deployment_options",
    "serve_start_options",
]
