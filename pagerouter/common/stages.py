"""Contracts between the stages of the page graph.

The same stages run in-process (CLI, tests) and as Ray Serve deployments; everything that
crosses a stage boundary is a plain picklable object defined here, so a stage can move to
another process or machine without changing what it receives or returns.

    source ──► Triage ──► text_layer / blank ──────────────────────────────► Page
                 │
                 └─► OcrTask ──► Layout ──► SmallReader ──► checks ──┬──► Page
                                                                     └─► Escalation ──► Page

Engines implement the small Protocols below (one file each, chosen by `kind` in config; see
`pagerouter.flow.engines`). The orchestration (`pagerouter.flow.pipeline`) calls them through `OcrCalls`:
in-process the calls run the engines in threads, in the Serve graph they are deployment handles.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from .geometry import BBox
from ..model import Attempt, Block, CheckResult, TriageDecision

RegionKind = Literal[
    "text", "title", "figure", "figure_caption", "table", "table_caption", "header", "footer", "reference", "equation"
]


@dataclass
class OcrTask:
    """A page that needs OCR (route `ocr`, or the picture regions of a `mixed` page)."""

    source: str  # file name, for error messages
    number: int  # 1-based page number
    width: float  # page size in points, as displayed
    height: float
    decision: TriageDecision
    image: np.ndarray  # RGB uint8 page render at the small reader's target size
    scale: float  # image pixels per page point (image px = point * scale)
    page_bytes: bytes  # the page alone (single-page PDF, or the image file) so any tier can re-render
    page_kind: Literal["pdf", "image"] = "pdf"
    text_blocks: list[Block] = field(default_factory=list)  # already-read text-layer blocks (mixed pages)
    ink: float = 0.0  # share of the page that is not background (from a cheap low-res render)
    # Tesseract packs this request asked for (`RequestOptions.languages`); () = the config's per-script packs
    languages: tuple[str, ...] = ()


@dataclass
class Region:
    """A layout region in page-image pixels of the (upright) task image."""

    kind: RegionKind
    bbox: BBox
    score: float
    order: int = 0


@dataclass
class LayoutResult:
    rotation: int  # clockwise degrees applied to the task image to make it upright (0/90/180/270)
    regions: list[Region]  # in reading order, in pixels of the rotated image
    engine: str = ""
    evidence: list[CheckResult] = field(default_factory=list)  # e.g. how orientation was decided


@dataclass
class Reading:
    """What a reader made of a page: blocks in page coordinates plus evidence."""

    blocks: list[Block]
    rotation: int = 0
    checks: list[CheckResult] = field(default_factory=list)
    engine: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    script: str | None = None  # script the reader found/assumed (Latin, Cyrillic, Han, ...)
    attempts: list[Attempt] = field(default_factory=list)  # VLM tries, accepted and rejected

    @property
    def flagged(self) -> bool:
        return any(not c.passed for c in self.checks)


@runtime_checkable
class LayoutEngine(Protocol):
    name: str
    version: str

    def detect_batch(self, tasks: list[OcrTask]) -> list[LayoutResult]:
        """Find regions and orientation for each task image."""
        ...


@runtime_checkable
class SmallReader(Protocol):
    name: str
    version: str

    def read_batch(self, tasks: list[OcrTask], layouts: list[LayoutResult]) -> list[Reading]:
        """Read every region of each task; one Reading per task, blocks in reading order."""
        ...


@runtime_checkable
class Escalator(Protocol):
    name: str
    version: str

    def escalate(self, task: OcrTask, first: Reading) -> Reading:
        """Re-read a flagged page with a stronger or independent reader."""
        ...


@dataclass
class OcrCalls:
    """The OCR-path stage calls the orchestration awaits; async so they can be local engines
    (run in worker threads) or Serve deployment handles. `escalate` is None when the
    escalation tier is off. `escalation_timeout_s` is this request's wait for the escalation
    tier (see `escalation_wait`; None = the config's interactive `serve.escalation_timeout_s`),
    `escalation_wait` says how it was chosen, for the timeout check's reason."""

    layout: Callable[[OcrTask], Awaitable[LayoutResult]]
    read: Callable[[OcrTask, LayoutResult], Awaitable[Reading]]
    escalate: Callable[[OcrTask, Reading], Awaitable[Reading]] | None = None
    escalation_timeout_s: float | None = None
    escalation_wait: str = ""
    # True when the calls report, with `page_work_started()`, when a page's first stage begins its
    # work (a Serve replica took it): the page's clock (serve.page_timeout_s) then starts there, not
    # while the page waits in a queue. False: the clock starts when the page's OCR starts.
    reports_start: bool = False


_PAGE_STARTED: ContextVar[asyncio.Event | None] = ContextVar("pagerouter_page_started", default=None)


def page_work_started() -> None:
    """Called by a stage call when the current page's work begins (see `OcrCalls.reports_start`)."""
    event = _PAGE_STARTED.get()
    if event is not None:
        event.set()
