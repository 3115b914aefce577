"""Ray Serve settings: endpoints, per-deployment resources and autoscaling, batching, tracing.

The graph builder (graph/builder.py) turns each `DeploymentSettings` into Serve deployment
options; a Serve config YAML may still override them per deployment (Serve applies the YAML
last). Defaults fit a 2-core CPU-only machine: fractional CPUs so all five deployments fit,
and a LargeReader that scales to zero when idle.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from .base import StrictModel
from .jobs import JobsConfig


class DeploymentSettings(StrictModel):
    """Resources, replicas and autoscaling of one deployment."""

    num_cpus: float = Field(default=0.25, ge=0, description="Logical CPUs reserved per replica (fractions allowed).")
    num_gpus: float = Field(
        default=0.0,
        ge=0,
        description="GPUs reserved per replica. On a cluster without GPUs a replica asking for one never starts: "
        "only the LargeReader tolerates that (its calls time out and pages fall back, flagged).",
    )
    resources: dict[str, float] = Field(
        default_factory=dict,
        description="Custom Ray resources per replica, to pin a deployment to a node type "
        "(e.g. {triage_node: 0.01} with cluster.yaml's CPU workers).",
    )
    min_replicas: int = Field(default=1, ge=0, description="Autoscaling floor (0 = scale to zero when idle).")
    max_replicas: int = Field(default=1, ge=1, description="Autoscaling ceiling.")
    initial_replicas: int | None = Field(
        default=None, ge=0, description="Replicas at deploy time (default: min_replicas)."
    )
    target_ongoing_requests: float = Field(
        default=2.0, gt=0, description="Autoscaling target of in-flight requests per replica."
    )
    max_ongoing_requests: int = Field(
        default=8,
        ge=1,
        description="In-flight requests one replica accepts; for batched deployments it must be >= max_batch_size "
        "or batches can never fill.",
    )
    max_queued_requests: int = Field(
        default=-1, description="Requests queued at callers beyond capacity before failing fast (-1 = unbounded)."
    )
    upscale_delay_s: float = Field(default=3.0, ge=0, description="Seconds of sustained load before adding replicas.")
    downscale_delay_s: float = Field(default=60.0, ge=0, description="Seconds of low load before removing replicas.")
    downscale_to_zero_delay_s: float | None = Field(
        default=None, ge=0, description="Seconds idle before going from 1 replica to 0 (default: downscale_delay_s)."
    )
    look_back_period_s: float = Field(default=10.0, gt=0, description="Window over which load is averaged.")
    metrics_interval_s: float = Field(default=2.0, gt=0, description="How often replicas report their load.")

    @model_validator(mode="after")
    def _replicas_consistent(self):
        if self.max_replicas < max(self.min_replicas, 1):
            raise ValueError(f"max_replicas ({self.max_replicas}) < min_replicas ({self.min_replicas})")
        if self.initial_replicas is not None and not self.min_replicas <= self.initial_replicas <= self.max_replicas:
            raise ValueError("initial_replicas must lie between min_replicas and max_replicas")
        return self


class BatchedDeploymentSettings(DeploymentSettings):
    """A deployment whose engine takes a batch of pages (Layout, SmallReader)."""

    max_batch_size: int = Field(default=4, ge=1, description="Pages per engine call at most.")
    batch_wait_timeout_s: float = Field(
        default=0.02, ge=0, description="Seconds a partial batch waits for more pages before running."
    )
    fill_while_busy: bool = Field(
        default=True,
        description="Pages that arrive while the engine runs a batch wait for it and then go into the next batch "
        "together (up to max_batch_size). False leaves it to Serve, which (2.60) forms a batch of whatever arrived "
        "within batch_wait_timeout_s even while the engine is busy and queues it: under steady load most batches "
        "then hold one page.",
    )

    @model_validator(mode="after")
    def _batch_fits(self):
        if self.max_ongoing_requests < self.max_batch_size:
            raise ValueError(
                f"max_ongoing_requests ({self.max_ongoing_requests}) must be >= max_batch_size ({self.max_batch_size})"
            )
        return self


class TracingSettings(StrictModel):
    """Serve's built-in OpenTelemetry tracing; pagerouter adds one span per stage per page."""

    enabled: bool = Field(default=False, description="Turn Serve tracing on (spans for requests and stages).")
    sampling_ratio: float = Field(default=1.0, ge=0, le=1, description="Share of requests traced.")
    exporter_import_path: str = Field(
        default="",
        description="`module:function` returning a list of OTel SpanProcessors; empty = Serve's file exporter "
        "(JSON spans under the Ray session's logs/serve/spans/).",
    )


def _ingress() -> DeploymentSettings:
    return DeploymentSettings(num_cpus=0.1, max_ongoing_requests=64, target_ongoing_requests=16)


def _triage() -> DeploymentSettings:
    return DeploymentSettings(num_cpus=0.25, max_ongoing_requests=16, target_ongoing_requests=4)


def _batched() -> BatchedDeploymentSettings:
    return BatchedDeploymentSettings(num_cpus=0.5, max_ongoing_requests=16, target_ongoing_requests=4)


def _small_reader() -> BatchedDeploymentSettings:
    # Measured (load_tests/run_profile.py, 16 users on single-page scans from 4 addresses): with
    # fill_while_busy, pages leave Layout in groups; a 0.1 s wait lets a group (and a second one
    # while the reader is busy, up to 8) arrive before the batch runs. 0.02 s split the groups
    # (read mean 2.05 vs Layout's 2.97); 0.1 s gave 3.07, the same as Layout's groups.
    return BatchedDeploymentSettings(
        num_cpus=0.5, max_ongoing_requests=16, target_ongoing_requests=4, max_batch_size=8, batch_wait_timeout_s=0.1
    )


def _large() -> DeploymentSettings:
    return DeploymentSettings(
        num_cpus=0.5, min_replicas=0, max_replicas=1, max_ongoing_requests=4, target_ongoing_requests=1,
        downscale_delay_s=300.0,
    )


class ServeConfig(StrictModel):
    """Ray Serve deployments and endpoints (owned by graph/ and deployments/)."""

    http_port: int = Field(default=8000, description="HTTP port of the Serve proxy.")
    grpc_port: int = Field(
        default=9000,
        description="gRPC port: of pagerouter's gRPC front under `pagerouter serve`, of Serve's gRPC proxy under "
        "`serve run` (which listens on every interface whatever `host` says).",
    )
    host: str = Field(
        default="127.0.0.1",
        description="Address HTTP and gRPC listen on under `pagerouter serve` (its --host). Anything but loopback "
        "without an API key (env PAGEROUTER_API_KEY or PAGEROUTER_API_KEY_FILE, never in this config) is warned about.",
    )
    escalation_timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Interactive bound: seconds a page waits for the escalation tier (including its wake-up "
        "from zero replicas) before keeping the small reader's reading, flagged `escalation_timeout`. "
        "Applies to requests with wait `interactive` (the default).",
    )
    escalation_timeout_bulk_s: float = Field(
        default=900.0,
        gt=0,
        description="Bulk bound: the same wait for requests with wait `bulk` (batch jobs that would rather wait "
        "for a cold GPU tier than keep a flagged reading). Must be >= escalation_timeout_s. A caller's explicit "
        "escalation_wait_s is capped at the bound of its mode.",
    )
    page_timeout_s: float = Field(
        default=1200.0,
        gt=0,
        description="Seconds one OCR page (layout, read, checks, escalation) may take before it is marked "
        "failed with what it already has; must exceed both escalation bounds.",
    )
    app_name: str = Field(default="pagerouter", description="Serve application name (gRPC `application` metadata).")
    route_prefix: str = Field(default="/", description="HTTP route prefix of the application.")
    request_timeout_s: float | None = Field(
        default=1500.0,
        gt=0,
        description="Seconds one request may take end to end (HTTP and gRPC; None = wait forever). Must exceed "
        "page_timeout_s + deadline_margin_s (a page's timeout covers its escalation), so a page's own timeout "
        "fires first. The "
        "ingress stops deadline_margin_s earlier and says so: a 504 `timeout` error, or a stream's closing error "
        "line naming the pages not delivered.",
    )
    deadline_margin_s: float = Field(
        default=5.0,
        gt=0,
        description="Seconds before request_timeout_s at which the ingress ends a request with a `timeout` error "
        "of its own (the proxy's cut would end a stream silently).",
    )
    max_queued_requests: int = Field(
        default=64,
        ge=1,
        description="Requests Serve queues in front of the ingress beyond its max_ongoing_requests; past that a "
        "caller gets 503 with Retry-After (gRPC UNAVAILABLE) at once instead of waiting in an unbounded queue. "
        "Used for the ingress unless ingress.max_queued_requests is set.",
    )
    max_upload_mb: float = Field(default=200.0, gt=0, description="Largest accepted upload; bigger is a 413 error.")
    ingress_triage_max_pages: int = Field(
        default=4,
        ge=0,
        description="A request that names at most this many pages (`/v1/pages`, ConvertPage, or a `pages` "
        "selection like `1-3`) with an upload of at most ingress_triage_max_mb is opened and triaged by the ingress "
        "itself, in its own isolation workers, instead of through the Triage deployment: one hop fewer, so a "
        "born-digital page that needs no model tier is answered by the ingress alone (pages that need OCR still go "
        "to Layout/SmallReader). Whole-document requests always use the Triage deployment. 0 = never.",
    )
    ingress_triage_max_mb: float = Field(
        default=4.0,
        ge=0,
        description="Largest upload (MB) the ingress triages itself (see ingress_triage_max_pages).",
    )
    ray_num_cpus: int | None = Field(
        default=None,
        ge=1,
        description="Logical CPUs `pagerouter serve` gives a local Ray (default: 2x the machine's cores, so the "
        "fractional replicas fit while the engines' own threads share the real cores).",
    )
    replicas: Literal["auto"] | int | None = Field(
        default=None,
        description="Replica counts of Ingress, Triage, Layout and SmallReader: None = each deployment's own "
        "min/max_replicas and num_cpus as written; `auto` = derived from the machine (or the Ray cluster `pagerouter "
        "serve --address` joins): autoscaling ceilings from its cores and memory, fractional num_cpus so every "
        "ceiling fits in Ray's logical CPUs (graph/replicas.py); an integer N = a ceiling of N for Triage, Layout "
        "and SmallReader, num_cpus fitted the same way. The floor is 1; the LargeReader keeps its own settings. "
        "`pagerouter serve --replicas` overrides it.",
    )
    metrics_enabled: bool = Field(default=True, description="Export pagerouter's custom Serve metrics.")
    tracing: TracingSettings = Field(default_factory=TracingSettings, description="OpenTelemetry tracing.")
    ingress: DeploymentSettings = Field(default_factory=_ingress, description="HTTP/gRPC ingress (fans pages out).")
    triage: DeploymentSettings = Field(default_factory=_triage, description="Opens inputs, triages, reads text layers.")
    layout: BatchedDeploymentSettings = Field(default_factory=_batched, description="Layout detection (batched).")
    small_reader: BatchedDeploymentSettings = Field(
        default_factory=_small_reader, description="The small reader, CPU OCR today (batched)."
    )
    large_reader: DeploymentSettings = Field(
        default_factory=_large, description="The escalation tier; min_replicas 0 lets it sleep when idle."
    )
    jobs: JobsConfig = Field(default_factory=JobsConfig, description="Asynchronous jobs for long documents (/v1/jobs).")

    @field_validator("replicas")
    @classmethod
    def _replicas_positive(cls, v):
        if isinstance(v, int) and v < 1:
            raise ValueError(f"replicas must be `auto` or an integer >= 1, not {v}")
        return v

    @model_validator(mode="after")
    def _timeouts_consistent(self):
        if self.escalation_timeout_bulk_s < self.escalation_timeout_s:
            raise ValueError(
                f"escalation_timeout_bulk_s ({self.escalation_timeout_bulk_s:g}) must be >= "
                f"escalation_timeout_s ({self.escalation_timeout_s:g}): bulk callers wait at least as long"
            )
        if self.page_timeout_s <= self.escalation_timeout_bulk_s:
            raise ValueError(
                f"page_timeout_s ({self.page_timeout_s:g}) must exceed the largest escalation bound "
                f"(escalation_timeout_bulk_s = {self.escalation_timeout_bulk_s:g}), or a waiting page fails "
                "instead of falling back"
            )
        if self.request_timeout_s is not None:
            # a page's own timeout covers all of it, escalation included (checked just above)
            need = self.page_timeout_s + self.deadline_margin_s
            if self.request_timeout_s <= need:
                raise ValueError(
                    f"request_timeout_s ({self.request_timeout_s:g}) must exceed page_timeout_s + "
                    f"deadline_margin_s ({self.page_timeout_s:g} + {self.deadline_margin_s:g} = {need:g}), or "
                    "requests are cut before a slow page's own timeout can fire"
                )
        return self

    def ingress_deadline_s(self) -> float | None:
        """Seconds the ingress gives one request before ending it with a `timeout` error."""
        if self.request_timeout_s is None:
            return None
        return self.request_timeout_s - self.deadline_margin_s

    def escalation_bound(self, mode: str) -> float:
        """The configured escalation wait of a wait mode (`interactive` or `bulk`)."""
        return self.escalation_timeout_bulk_s if mode == "bulk" else self.escalation_timeout_s
