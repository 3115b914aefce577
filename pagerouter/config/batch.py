"""`pagerouter batch --ray`: how the Ray Data pipeline cuts the work and sizes its stages.

Files are opened by CPU tasks and cut into page ranges; each range is triaged (text layers
read) by one CPU task; only pages that need a model tier flow, one row each, through the
actor pool of the CPU model stages (layout, small reader, escalation) or, for a stage that asks
a GPU, that stage's own pool (`pagerouter/batch/ray_stages.py`). None of
this changes what a page reads as, so this section never counts in the batch journal's
config hash: a run resumed with other pool sizes skips what an earlier run finished.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from .base import StrictModel


class PoolSettings(StrictModel):
    """One actor pool of the Ray Data pipeline (Ray Data's `ActorPoolStrategy`)."""

    min_size: int = Field(default=1, ge=1, description="Actors the pool keeps (Ray Data's pools start at one or more).")
    max_size: int = Field(
        default=2,
        ge=1,
        description="Actors the pool autoscales up to while pages queue. An actor it adds stays until the stage has "
        "had all its input (each start is a process and a model load), not only while pages queue.",
    )
    num_cpus: float = Field(
        default=0.5,
        ge=0,
        description="Logical CPUs each actor reserves (fractions allowed). The pools hold theirs for the whole run, "
        "so on a small cluster their sum must leave room for the open and triage tasks.",
    )
    num_gpus: float = Field(
        default=0.0,
        ge=0,
        description="GPUs each actor reserves (1 for a vLLM engine of `ocr.escalation.kind: vlm` or a region VLM). "
        "A run whose cluster has fewer GPUs than one actor asks for is refused before it starts: Ray Data would "
        "wait for them forever.",
    )
    batch_size: int = Field(default=4, ge=1, description="Pages per engine call at most.")

    @model_validator(mode="after")
    def _sizes(self):
        if self.max_size < self.min_size:
            raise ValueError(f"max_size ({self.max_size}) < min_size ({self.min_size})")
        return self


class BatchConfig(StrictModel):
    """Cutting and sizing of `pagerouter batch --ray` (the `--local` and `--endpoint` modes ignore it)."""

    pages_per_range: int = Field(
        default=128,
        ge=1,
        description="Pages one triage task reads (a 2,000-page PDF becomes 16 tasks that run on any node). Each "
        "task opens the file itself (its bytes are read again, never carried in rows) and samples the header/footer "
        "pages of the whole selection, so a range reads exactly as the whole file would.",
    )
    files_per_open_task: int = Field(
        default=16, ge=1, description="Files one open task hashes, checks against the journal and cuts into ranges."
    )
    open_num_cpus: float = Field(default=0.25, gt=0, description="Logical CPUs an open task reserves.")
    triage_num_cpus: float = Field(
        default=0.5, gt=0, description="Logical CPUs a triage task reserves (it reads MuPDF in an isolation worker)."
    )
    cpu_pool: PoolSettings = Field(
        default_factory=PoolSettings,
        description="The one actor pool of the model stages that ask no GPU (`num_gpus: 0`): layout, small reader "
        "and escalation run one after another in the same actor, so their models load once per actor and a page "
        "render is not copied from actor to actor. A stage that asks a GPU runs in its own pool (its own settings "
        "below) and splits the stages around it into pools of these settings. Its batch_size is the pages per "
        "layout call.",
    )
    layout: PoolSettings = Field(
        default_factory=lambda: PoolSettings(num_cpus=0.25),
        description="The layout stage's own actor pool, used when it asks a GPU (else it runs in `cpu_pool`).",
    )
    small_reader: PoolSettings = Field(
        default_factory=PoolSettings,
        description="The small reader's own actor pool, used when it asks a GPU (else it runs in `cpu_pool`).",
    )
    escalation: PoolSettings = Field(
        default_factory=lambda: PoolSettings(min_size=1, max_size=1, num_cpus=0.25, batch_size=2),
        description="The escalation tier's own actor pool (flagged pages only), used when it asks a GPU (a VLM; "
        "else it runs in `cpu_pool`).",
    )
    max_retries: int = Field(
        default=3,
        ge=0,
        description="Retries of a task, or an actor's batch, whose process or node died (the actor is restarted "
        "first). A batch still failing after them is dropped by Ray Data and its pages come out `failed`, with "
        "the reason, while the run goes on.",
    )
    scheduler_wait_s: float = Field(
        default=0.5,
        gt=0,
        le=5,
        description="How long Ray Data's scheduling loop in the driver waits for its running tasks before it looks "
        "again (Ray Data's own is 0.1 s). Its loop was most of the driver's CPU; our tasks and batches run for "
        "seconds with more queued per actor, so a longer wait idles no worker. A finished document reaches the "
        "driver at most this much later.",
    )
    max_errored_blocks: int = Field(
        default=-1,
        description="Blocks Ray Data may drop after their retries before it stops the whole run (-1: no limit; "
        "their pages are `failed` in the outputs either way).",
    )
