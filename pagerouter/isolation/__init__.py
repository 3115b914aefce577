"""Where MuPDF's work on untrusted input runs: in this process, or in a pool of worker processes.

The triage stage (the in-process `Converter`, the Serve `Triage` deployment) reaches MuPDF only
through a `PageWork`:

    work = page_work(cfg)                       # IsolatedPages if cfg.isolation.enabled
    src = work.open(data, name, password, ahead=WalkAhead(pages, ocr))  # raises InputError, like inputs.open_source
    async for outcome in work.outcomes(src, numbers):   # pipeline.TriageOutcome, in page order
        ...
    pngs = work.figure_pngs(src, number, clips, dpi)    # figure export (--images)
    work.warm()                                 # optional: load now what first pages would load
    work.close()

`InProcessPages` runs `inputs.open_source` and `pipeline.DocumentTriage` here, as before.
`IsolatedPages` (`pool.py`) runs the very same code in worker processes (`worker.py`): a
segfault, an abort or a runaway loop kills one worker, and the page it was reading comes back
`failed` with the reason ("worker crashed (SIGSEGV) while reading page 3", "page 3 took longer
than 30 s to read"); the other pages and the next request are served by a fresh worker.
A `SourceDocument` opened by the caller itself (with a `doc`) is always read in-process.
`ahead` (optional) names the walk the caller will ask for next: the worker that opens the file
reads its first pages at once, in the same round trip (see `WalkAhead`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

import pymupdf

from ..config import PagerouterConfig
from ..intake.inputs import SourceDocument, open_source
from ..common.pagetext import MUPDF_LOCK
from ..flow.pipeline import TriageOutcome, triage_outcomes

FAULT_ENV = "PAGEROUTER_FAULT_INJECTION_FOR_TESTS"
"""Test-only fault injection hook, read by the pool and applied in its workers only (never in
the calling process): comma-separated `KIND@WHERE`, KIND one of segv, abort, hang, exit, raise or
`sleepSECONDS` (a slow page); WHERE a page number, `page` (every page), `open`, `prescan` (the
header/footer pre-scan) or `figures`.
Example: PAGEROUTER_FAULT_INJECTION_FOR_TESTS=segv@3,hang@5"""


@dataclass(frozen=True)
class WalkAhead:
    """The walk a caller will ask for right after `open`: `pages` (a selection like "1-3", None
    for all) in the `ocr` mode. An isolation worker then reads the first task of it as soon as
    the file is open, so a short document costs one round trip to the worker, not two (a served
    one-page request: open, then walk, each a thread hop and a pipe round trip). A walk asked for
    with other pages or another mode reads as always; what was read ahead is dropped."""

    pages: str | None = None
    ocr: str = "auto"


class PageWork(Protocol):
    isolated: bool

    def open(self, data: bytes, name: str, password: str | None = None, ahead: WalkAhead | None = None) -> SourceDocument: ...

    def outcomes(
        self, src: SourceDocument, numbers: list[int], ocr: str = "auto", span: tuple[int, int] | None = None
    ) -> AsyncIterator[TriageOutcome]:
        """Triage outcomes of `numbers` in page order; `span` (start, stop) indices into `numbers`
        walks only that part (a page range), read exactly as a walk of all of them reads it."""
        ...

    def figure_pngs(self, src: SourceDocument, number: int, clips: list, dpi: int) -> list[bytes | None]: ...

    def warm(self) -> list[dict]:
        """Load now what the first pages would load (the hidden-layer proof's recogniser), in
        every worker; never raises. Each worker's (or this process's) `layer_proof.prepare` answer."""
        ...

    def close(self) -> None: ...


def render_figures(doc: pymupdf.Document, number: int, clips: list, dpi: int) -> list[bytes | None]:
    """PNG bytes of each clip (page coordinates) of page `number`; None where a clip is empty."""
    pg = doc.load_page(number - 1)
    out: list[bytes | None] = []
    for bbox in clips:
        clip = pymupdf.Rect(bbox) & pg.rect
        out.append(None if clip.is_empty else pg.get_pixmap(clip=clip, dpi=dpi).tobytes("png"))
    return out


class InProcessPages:
    """MuPDF in this process (`isolation.enabled: false`)."""

    isolated = False

    def __init__(self, cfg: PagerouterConfig):
        self.cfg = cfg

    def open(self, data: bytes, name: str, password: str | None = None, ahead: WalkAhead | None = None) -> SourceDocument:
        # in this process the walk starts when asked for: nothing to save by reading ahead
        return open_source(data=data, name=name, password=password)

    def outcomes(
        self, src: SourceDocument, numbers: list[int], ocr: str = "auto", span: tuple[int, int] | None = None
    ) -> AsyncIterator[TriageOutcome]:
        return triage_outcomes(src, numbers, self.cfg, ocr, walk=numbers[span[0]:span[1]] if span else None)

    def figure_pngs(self, src: SourceDocument, number: int, clips: list, dpi: int) -> list[bytes | None]:
        with MUPDF_LOCK:
            return render_figures(src.doc, number, clips, dpi)

    def warm(self) -> list[dict]:
        from ..triage.layer_proof import prepare

        return [prepare(self.cfg.triage, self.cfg.ocr)]

    def close(self) -> None:
        pass


def page_work(cfg: PagerouterConfig) -> PageWork:
    """The configured PageWork: a worker pool when `isolation.enabled`, else this process."""
    if cfg.isolation.enabled:
        from .pool import IsolatedPages

        return IsolatedPages(cfg)
    return InProcessPages(cfg)


__all__ = ["FAULT_ENV", "InProcessPages", "PageWork", "WalkAhead", "page_work", "render_figures"]
