"""One request's conversion over the served stages: the items the ingress answers with.

DocumentHead (or InputProblem and stop), every Page in page order, DocumentTail with the
engines used. The triage walk (the Triage deployment's stream, or the ingress's own walk of a
small request) and the OCR stage calls (deployment-handle calls) are the caller's; the page
orchestration is the core's `pagerouter.flow.pipeline.convert_pages`, as in the in-process
Converter. Here is what joins them for one request: its escalation wait, the head worded for an
API caller, and the end: the walk is cancelled however the items end (client gone, request
cancelled, a stage failed), so no replica triages the rest of a document for nobody.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Protocol

import pymupdf

from pagerouter.common.memory import release_after
from pagerouter.common.stages import OcrCalls
from pagerouter.config import PagerouterConfig
from pagerouter.flow.escalation_wait import EscalationWait, resolve_escalation_wait
from pagerouter.flow.options import RequestOptions
from pagerouter.flow.pipeline import TriageOutcome, convert_pages
from pagerouter.model import Page
from pagerouter.wire.items import DocumentHead, DocumentTail, InputProblem

from .api_problems import for_api


class TriageWalk(Protocol):
    """A started triage walk (see walk_head.WalkHead)."""

    finished: bool

    async def head(self) -> DocumentHead | InputProblem: ...

    def outcomes(self) -> AsyncIterator[TriageOutcome]: ...

    def cancel(self) -> None: ...


async def conversion_items(
    cfg: PagerouterConfig, name: str, size: int, opts: RequestOptions, wait: str | None, escalation_wait_s: float | None,
    *, start_walk: Callable[[], TriageWalk], ocr_calls: Callable[[dict[str, str], EscalationWait], OcrCalls | None],
    concurrency: int, page_done: Callable[[Page], None],
) -> AsyncIterator[DocumentHead | InputProblem | Page | DocumentTail]:
    """The items of one request of `size` bytes. `wait` (interactive | bulk) and `escalation_wait_s`
    set how long its flagged pages wait for the escalation tier (capped at the mode's configured
    bound); a bad value is an InputProblem `bad_request` before the walk starts. `opts` bring the
    languages and images to the pages; `ocr_calls(used, wait)` adds each engine's version to `used`."""
    try:
        escalation = resolve_escalation_wait(cfg.serve, wait, escalation_wait_s)
    except ValueError as exc:
        yield InputProblem("bad_request", f"{name}: {exc}", name, None, str(exc))
        return
    triage = start_walk()
    try:
        first = await triage.head()
        yield for_api(first) if isinstance(first, InputProblem) else first
        if triage.finished:  # the walk stops after an InputProblem
            return
        used: dict[str, str] = {"pymupdf": pymupdf.VersionBind}
        converted = convert_pages(
            triage.outcomes(), name, cfg, ocr_calls(used, escalation), concurrency=concurrency,
            languages=tuple(opts.languages or ()), images=opts.images,
        )
        async with aclosing(converted):  # closing it cancels the page OCR still running
            async for page in converted:
                page_done(page)
                yield page
        yield DocumentTail(engines=used)
    finally:
        triage.cancel()
        release_after(size)  # a large upload's buffers back to the OS (pagerouter.common.memory)
