"""Jobs for long documents (`POST /v1/jobs`, gRPC SubmitJob): where their state lives and how
long it is kept. The state is files (pagerouter/jobs/store.py) so any ingress replica, a
restarted one included, finds and resumes a job; on a multi-node cluster `dir` must be a
filesystem every node running an ingress replica shares (NFS, a mounted bucket with locking)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, model_validator

from .base import StrictModel


def default_jobs_dir() -> str:
    """`$XDG_CACHE_HOME/pagerouter/jobs`, else `~/.cache/pagerouter/jobs`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "pagerouter" / "jobs")


class JobsConfig(StrictModel):
    """Asynchronous jobs: state directory, retention, queue bound, leases."""

    enabled: bool = Field(default=True, description="Serve /v1/jobs and the gRPC job rpcs.")
    dir: str = Field(
        default_factory=default_jobs_dir,
        description="Directory holding one folder per job (input, options, status JSON, finished pages as JSONL). "
        "Every ingress replica must see the same directory: on a multi-node cluster a shared filesystem.",
    )
    ttl_s: float = Field(
        default=86400.0, gt=0,
        description="Seconds a finished (done, failed or cancelled) job and its result are kept before deletion.",
    )
    max_queued: int = Field(
        default=16, ge=1,
        description="Jobs waiting or running at once (all replicas); one more is refused with 503 `jobs_full` "
        "and Retry-After (gRPC RESOURCE_EXHAUSTED).",
    )
    max_running_per_replica: int = Field(
        default=1, ge=1,
        description="Jobs one ingress replica converts at once; the others wait queued (each job's pages still "
        "run ocr.pages_in_flight at a time).",
    )
    lease_s: float = Field(
        default=30.0, gt=0,
        description="Seconds a replica's claim on a running job lasts without a heartbeat; a job whose lease ran "
        "out (its replica died) is resumed by the next replica that looks, without re-reading finished pages.",
    )
    heartbeat_s: float = Field(
        default=5.0, gt=0, description="Seconds between a running job's heartbeats (lease renewal, cancel check)."
    )
    max_runs: int = Field(
        default=3, ge=1,
        description="Runs one job may start: a job whose replica died this many times (a document that kills "
        "its replica, e.g. by memory) is failed instead of resumed again, so it cannot crash-loop the ingress.",
    )
    poll_s: float = Field(
        default=2.0, gt=0,
        description="Seconds between a replica's scans of the directory for queued or orphaned jobs and expired ones.",
    )

    @model_validator(mode="after")
    def _heartbeat_inside_lease(self):
        if self.heartbeat_s >= self.lease_s:
            raise ValueError(
                f"jobs.heartbeat_s ({self.heartbeat_s:g}) must be < jobs.lease_s ({self.lease_s:g}), or a live "
                "replica loses its own jobs"
            )
        return self
