"""The one walk of a document: open it, choose its pages, triage them in page order, close it.

    walk = walk_document(work, data, name="in.pdf", pages="1-3", max_pages=cfg.limits.max_pages)
    async with aclosing(walk):
        async for item in walk:    # an OpenedDocument first, then one TriageOutcome per page
            ...

Every front end reads its documents through this function: the in-process `Converter`, the
served graph's triage (`deployments/triage.py`: the Triage deployment, and the ingress's own
triage of small requests) and the batch run's Ray stages (`batch/ray_stages.py`: the open task,
then one page range per triage task). So the read-ahead at open, the page selection and its
limit, and which pages get their figures rendered where the file is held are decided once.

The file is opened through an isolation `PageWork` (MuPDF in worker processes unless
`isolation.enabled: false`) and closed when the walk ends, however it ends (the consumer
stopped early, an error). `InputError` is raised before the first item, for a file that does
not open (plain `InputError`) or a selection it cannot have (`PageSelectionError`,
`PageLimitError`: both carry a `code`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass

from ..flow.figure_export import figures_of_text_pages
from ..flow.pipeline import TriageOutcome, new_document
from ..intake.inputs import SourceDocument, check_page_count, parse_pages
from ..isolation import PageWork, WalkAhead
from ..model import Document


@dataclass
class OpenedDocument:
    """The head of a walk: the open file (open until the walk ends), the page numbers selected
    and the document the pages will go into (pages still empty)."""

    src: SourceDocument
    numbers: list[int]
    document: Document


async def walk_document(
    work: PageWork,
    source: bytes | SourceDocument,
    *,
    max_pages: int,
    name: str = "-",
    password: str | None = None,
    pages: str | None = None,
    ocr: str = "auto",
    images: bool = False,
    span: tuple[int, int] | None = None,
    open_off_loop: bool = True,
) -> AsyncIterator[OpenedDocument | TriageOutcome]:
    """`OpenedDocument`, then one `TriageOutcome` per selected page in page order (`pages` a
    selection like "1-3,7", None for all; at most `max_pages` of them, `limits.max_pages`).

    `source`: the file's bytes, opened here and closed when the walk ends; or a document the
    caller opened (`SourceDocument`), walked and left open. `ocr` is the request's triage mode;
    `images` renders the figures of text-layer pages here, where the file is held (OCR pages
    get theirs cut from their render later, in `pipeline.convert_pages`). `span` (start, stop)
    walks only those indices into the selected pages (a page range of a batch run), read as a
    walk of all of them reads them; without it the worker that opens the file reads the first
    pages at once (`isolation.WalkAhead`: one round trip for a short document).

    The file is opened off the event loop (opening may repair a broken PDF with pypdf for
    seconds), unless `open_off_loop` is False: the Converter's loop serves only this walk, and
    a single-threaded caller (the CLI) forks its isolation workers directly, not through the
    fork server, only while no other thread is alive (`isolation.process`)."""
    if isinstance(source, SourceDocument):
        src, owned = source, False
    else:
        ahead = WalkAhead(pages, ocr) if span is None else None  # a range's first pages are not the walk's
        opening = (bytes(source), name, password, ahead)
        src = await asyncio.to_thread(work.open, *opening) if open_off_loop else work.open(*opening)
        owned = True
    try:
        numbers = check_page_count(parse_pages(pages, src.page_count, src.name), max_pages, src.name)
        yield OpenedDocument(src, numbers, new_document(src))
        outcomes = work.outcomes(src, numbers, ocr, span)
        if images:
            outcomes = figures_of_text_pages(outcomes, src, work)
        async with aclosing(outcomes) as walk:  # a walk left early stops its pages still queued
            async for outcome in walk:
                yield outcome
    finally:
        if owned:
            src.close()


__all__ = ["OpenedDocument", "walk_document"]
