"""Isolation of MuPDF's work on untrusted bytes: a pool of worker processes.

Opening a file, triaging its pages, reading their text layers and rendering pages for OCR
run in worker processes (`pagerouter.isolation`), so a segfault, an abort or a runaway loop in
the C parser kills one worker and fails one page, never the CLI or a Serve replica.
"""

from __future__ import annotations

from pydantic import Field

from .base import StrictModel


class IsolationConfig(StrictModel):
    enabled: bool = Field(
        default=True,
        description="Run MuPDF's work on input files (open, triage, text layer, render for OCR, figure export) in "
        "worker processes; false runs it in the calling process (faster to start, but a crash in MuPDF kills it).",
    )
    workers: int = Field(
        default=2, ge=1, description="Worker processes at most per converter or Triage replica (started on demand)."
    )
    pages_per_task: int = Field(
        default=64,
        ge=1,
        description="Pages one worker triages per task at most (a task also ends after 50 ms of work or at a page "
        "that needs OCR); the worker is handed back between tasks, so documents share the pool.",
    )
    parallel_part_pages: int = Field(
        default=32,
        ge=0,
        description="A document of at least twice this many pages is read in parts of this many pages, by up to "
        "`workers` workers at once (pages still come out in order); 0 reads every document on one worker at a time.",
    )
    page_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="Seconds one page's reading (triage, text layer, render for OCR) may take in a worker before the "
        "worker is killed and the page reported failed.",
    )
    open_timeout_s: float = Field(
        default=120.0, gt=0, description="Seconds opening (and if need be repairing) one file may take in a worker."
    )
    recycle_after_pages: int = Field(
        default=5000, ge=1, description="A worker is replaced after it has read this many pages (bounds slow leaks)."
    )
    recycle_rss_mb: int = Field(
        default=1024, ge=64, description="A worker is replaced after a task that leaves its resident memory above this, not counting "
        "what the documents it keeps open took when they were opened (a file's own bytes are no leak)."
    )
    trim_after_growth_mb: float = Field(
        default=64, ge=0,
        description="A closed document gives its freed memory back to the OS (malloc_trim, MuPDF's store emptied) "
        "when its file was large (16 MB or more) or the worker's resident memory grew by this much since the last "
        "time; 0: after every document (4.5 ms of CPU each, a third of a one-page request).",
    )
    cached_documents: int = Field(
        default=2,
        ge=1,
        description="Open documents a worker keeps (one per opened file, never shared by two requests), so a "
        "file's bytes cross to a worker once, not per task.",
    )
