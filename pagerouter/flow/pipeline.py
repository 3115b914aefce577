"""The page graph's orchestration, shared by the in-process `Converter` and the Serve ingress.

    source -> DocumentTriage (per page: triage, read text layer, or build an OcrTask)
           -> ocr_flow (layout -> small reader -> checks -> escalation with a timeout)
           -> Page, yielded strictly in page order

The stage *calls* are injected (`stages.OcrCalls`): in-process they run the engines of an
`engines.EngineSet` in threads; in the Serve graph they are deployment handles. The order of
work, the checks, the escalation rule (`escalates`), the timeout fallback and the page status
rules live here once, so the CLI, the server and the batch run's stages cannot disagree. Creating OCR work is `ocr.task`'s; running it is this module's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from ..config import PagerouterConfig
from ..intake.inputs import SourceDocument
from ..common.geometry import merge_overlapping
from ..common.memory import release_free_memory
from ..model import Block, CheckResult, Document, Page, TriageDecision
from ..ocr.task import make_ocr_task
from ..render.output import clean_model
from ..intake.page_limits import content_size_problem, page_text_problem
from .page_status import damage_found, failed_page, needs_ocr, ocr_mode_decision, ocr_off, unreadable_before_text
from ..common.pagetext import MUPDF_LOCK, extract_textdict
from ..common.stages import _PAGE_STARTED, LayoutResult, OcrCalls, OcrTask, Reading


OcrFlow = Callable[[OcrTask, OcrCalls, PagerouterConfig], Awaitable[Reading]]
"""How an OCR page's reading is made from its task and stage calls (`ocr_flow`)."""


@dataclass
class TriageOutcome:
    """What the triage stage made of one page: a finished page, or a page plus OCR work."""

    page: Page
    task: OcrTask | None = None


class DocumentTriage:
    """Walks a document's pages: triage each, read good text layers, package OCR work.

    Holds no rendered pages: each page is loaded, decided and dropped, so memory stays flat
    in page count. Header/footer detection pre-scans a sample of pages first.
    """

    def __init__(self, cfg: PagerouterConfig, ocr: str = "auto"):
        self.cfg = cfg
        self.ocr = ocr  # the request's `ocr` option (request_options.OcrMode)

    def iter_pages(
        self, src: SourceDocument, numbers: list[int], walk: list[int] | None = None, furniture_cache: dict | None = None
    ) -> Iterator[TriageOutcome]:
        """Triage `walk` (default: all of `numbers`); header/footer roles always come from a
        sample of `numbers`, so a walk resumed part-way (an isolation worker replaced after a
        crash, or one of several workers reading a long document a part each) reads its pages
        exactly as one walk over all of them would. `furniture_cache` (a dict the caller keeps
        per open document) holds the models learned, so a second walk of the same `numbers`
        does not pre-scan again."""
        from ..textlayer import FurnitureModel

        cache_key = ("furniture", tuple(numbers))
        if furniture_cache is not None and cache_key in furniture_cache:
            for n in numbers if walk is None else walk:
                yield self.triage_one(src, n, furniture_cache[cache_key])
            return

        # The pre-scan's text dicts (a bounded sample) are kept, with the MuPDF warnings their
        # extraction raised, so no page is extracted twice and damage is still reported.
        sampled: dict[int, tuple[dict, str]] = {}

        def keep(n: int, page: pymupdf.Page) -> dict:
            if content_size_problem(page, self.cfg.limits.max_content_stream_mb):
                return {"blocks": []}  # a bomb is no furniture sample: its own triage refuses it
            pymupdf.TOOLS.reset_mupdf_warnings()
            td = extract_textdict(page)
            sampled[n] = (td, pymupdf.TOOLS.mupdf_warnings())
            return td

        try:
            with MUPDF_LOCK:
                furniture = FurnitureModel.from_document(src.doc, numbers, self.cfg.text_layer, textdict_for=keep)
        except Exception:  # noqa: BLE001 - furniture is an optimisation of roles, never fatal
            furniture = None
        if furniture_cache is not None:
            furniture_cache[cache_key] = furniture
        for n in numbers if walk is None else walk:
            yield self.triage_one(src, n, furniture, sampled.pop(n, None))

    def triage_one(
        self, src: SourceDocument, number: int, furniture=None, extracted: tuple[dict, str] | None = None
    ) -> TriageOutcome:
        with MUPDF_LOCK:  # one page at a time per process: its MuPDF warnings are its own
            return self._triage_one(src, number, furniture, extracted)

    def _triage_one(
        self, src: SourceDocument, number: int, furniture=None, extracted: tuple[dict, str] | None = None
    ) -> TriageOutcome:
        from ..textlayer import read_text_layer
        from ..textlayer.forms import keep_layer_for_fields
        from ..triage import triage_page

        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        pymupdf.TOOLS.reset_mupdf_warnings()
        try:
            page = src.doc.load_page(number - 1)
            limits = self.cfg.limits
            # a truncated file's lost page (MuPDF hands out an empty page: never say it was read),
            # a page past the limits: before its text is extracted or the page rendered; a page
            # the pre-scan extracted passed the content-size check there (`keep`)
            problem = unreadable_before_text(page, limits, streams_checked=extracted is not None)
            if problem:
                return TriageOutcome(failed_page(src.name, number, "reading", ValueError(problem)))
            textdict, early_warnings = extracted if extracted else (extract_textdict(page), "")
            too_much = page_text_problem(textdict, limits.max_page_chars)
            if too_much:  # before its text is laid out, triaged or read
                return TriageOutcome(failed_page(src.name, number, "reading", ValueError(too_much)))
            early_warnings += "\n" + src.open_warnings
            decision = triage_page(page, textdict, self.cfg.triage, self.cfg.ocr)
            # a sparse page whose content is its filled form fields is read from the file (forms.py)
            decision = ocr_mode_decision(keep_layer_for_fields(page, decision, self.cfg.triage.min_chars_for_text_layer),
                                         self.ocr)
        except Exception as exc:  # noqa: BLE001 - one bad page must not lose the others
            return TriageOutcome(failed_page(src.name, number, "triage", exc))
        timings["triage"] = time.perf_counter() - t0
        out = Page(
            number=number,
            status="ok",
            route=decision.route,
            triage=decision,
            width=page.rect.width,
            height=page.rect.height,
            language=decision.script,
            timings=timings,
        )
        stage = "text layer"
        try:
            text_blocks: list[Block] = []
            if decision.route in ("text_layer", "mixed"):
                t1 = time.perf_counter()
                text_blocks = read_text_layer(
                    page, textdict, number, self.cfg.text_layer, furniture, skip_regions=decision.ocr_regions,
                    invisible_too=decision.hidden_layer,
                )
                timings["text_layer"] = time.perf_counter() - t1
            damaged = damage_found(page, early_warnings + "\n" + pymupdf.TOOLS.mupdf_warnings())
            if damaged:
                # MuPDF reads around broken content streams silently; a page that parsed with
                # syntax errors may have lost content, so say so instead of trusting the result.
                out.status = "flagged"
                out.flags.append("damaged_page")
                out.checks.append(CheckResult(name="damaged_page", passed=False, reason=f"{src.name}: page {number}: {damaged}"))
            if decision.route == "text_layer" and self.cfg.ocr.checks.unread_ink:
                decision = self._account_for_ink(page, textdict, text_blocks, out, timings)
            if decision.route in ("text_layer", "blank"):
                out.blocks = text_blocks
                return TriageOutcome(out)
            if self.ocr == "off":  # the request refused OCR: the text layer it has, flagged, never `ok`
                t1 = time.perf_counter()
                if decision.route == "ocr":  # a page triage judged unreadable: keep whatever layer it has
                    text_blocks = read_text_layer(page, textdict, number, self.cfg.text_layer, furniture,
                                                  invisible_too=True)
                timings["text_layer"] = timings.get("text_layer", 0.0) + time.perf_counter() - t1
                out.blocks = text_blocks
                return TriageOutcome(ocr_off(out, src.name, decision.route))
            # ocr or mixed: needs the OCR path
            if not self.cfg.ocr.enabled:
                out.blocks = text_blocks
                return TriageOutcome(needs_ocr(out, "the OCR path is disabled in config (ocr.enabled: false)"))
            stage = "render for OCR"
            out.blocks = text_blocks
            t2 = time.perf_counter()
            task = make_ocr_task(page, number, src.name, decision, text_blocks, self.cfg.ocr)
            timings["render"] = time.perf_counter() - t2
            out.blocks = text_blocks
            return TriageOutcome(out, task)
        except Exception as exc:  # noqa: BLE001 - the page fails, keeping what was already read
            out.status = "failed"
            out.error = failed_page(src.name, number, stage, exc).error
            return TriageOutcome(out)


    def _account_for_ink(self, page: pymupdf.Page, textdict: dict, blocks: list[Block], out: Page,
                         timings: dict[str, float]) -> TriageDecision:
        """Rows of letters the text-layer reading left out (`ocr.ink_accounting`): read by OCR
        (the page turns `mixed`, a region per row) or, with OCR off, the page is flagged with them."""
        from ..ocr.ink_accounting import account_for_ink, may_hold_unread_ink, net_pictures

        decision = out.triage
        if not may_hold_unread_ink(page, textdict):
            return decision
        t = time.perf_counter()
        tcfg = self.cfg.triage
        check = account_for_ink(page, blocks, self.cfg.ocr.checks, tcfg.image_dpi, tcfg.max_render_pixels,
                                self.cfg.text_layer.furniture_band, ocr=self.cfg.ocr,
                                pictures=net_pictures(page, tcfg.min_image_area_share, tcfg.min_image_side_pt))
        timings["ink_accounting"] = time.perf_counter() - t
        out.checks.append(check)
        if check.passed:
            return decision
        if self.cfg.ocr.enabled and self.ocr != "off":
            pad = 4.0
            regions = [(max(0.0, x0 - pad), max(0.0, y0 - pad), min(out.width, x1 + pad), min(out.height, y1 + pad))
                       for x0, y0, x1, y1 in check.regions]
            # regions that overlap are read as one: the detector's lines of one screenshot often
            # overlap once padded, and each region read apart gave their words twice
            decision = decision.model_copy(update={
                "route": "mixed", "ocr_regions": merge_overlapping([*decision.ocr_regions, *regions]),
                "reasons": [*decision.reasons, f"after reading the layer: {check.reason}; those rows are OCR'd"],
            })
            out.route, out.triage = "mixed", decision
            out.checks.remove(check)  # the OCR reading's own unread_ink check has the last word
            return decision
        out.status = "flagged"
        out.flags.append("unread_ink")
        return decision


async def ocr_flow(task: OcrTask, calls: OcrCalls, cfg: PagerouterConfig) -> Reading:
    """layout -> read -> checks -> (if flagged) escalation with a timeout and fallback."""
    first = await first_reading(task, calls, cfg)
    if calls.escalate is None or not escalates(first, cfg):
        return first
    return await escalated_reading(task, first, calls, cfg)


def escalates(first: Reading, cfg: PagerouterConfig) -> bool:
    """The escalation rule: a first reading its checks flagged goes to the escalation tier,
    when the tier is on (`ocr.escalation.enabled`). The batch run's stages ask it too."""
    return first.flagged and cfg.ocr.escalation.enabled


async def first_reading(task: OcrTask, calls: OcrCalls, cfg: PagerouterConfig) -> Reading:
    """layout -> small reader -> checks: the reading `escalates` judges."""
    from ..ocr.checks import check_reading
    from ..ocr.layer_spacing import apply_layer_spacing

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    layout = _checked(await calls.layout(task), LayoutResult, "layout")
    timings["layout"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    first = _checked(await calls.read(task, layout), Reading, "small reader")
    timings["read"] = time.perf_counter() - t1
    first.rotation = first.rotation or layout.rotation
    # a hidden text layer, where it holds the reading's characters, says where the spaces go
    spaced = apply_layer_spacing(task, first, cfg.triage.max_invisible_text_share)
    # The reader's own evidence (orientation, script, suppressed characters) stays with its checks.
    first.checks = list(first.checks) + ([spaced] if spaced else []) + check_reading(task, first, cfg.ocr.checks)
    first.timings = {**first.timings, **timings}
    return first


async def escalated_reading(task: OcrTask, first: Reading, calls: OcrCalls, cfg: PagerouterConfig) -> Reading:
    """The escalation tier's reading of a page `escalates` sent there, within this request's wait
    for it; the first reading, with the reason, when the tier answers too late or fails."""
    from ..ocr.checks import check_reading

    t2 = time.perf_counter()
    if calls.escalation_timeout_s is not None:
        timeout, why = calls.escalation_timeout_s, calls.escalation_wait or "requested wait"
    else:
        timeout, why = cfg.serve.escalation_timeout_s, "interactive wait"
    try:
        second = _checked(await asyncio.wait_for(calls.escalate(task, first), timeout=timeout), Reading, "escalation tier")
    except (asyncio.TimeoutError, TimeoutError):
        first.checks.append(
            CheckResult(
                name="escalation_timeout",
                passed=False,
                score=timeout,
                threshold=timeout,
                reason=f"escalation did not answer within {timeout:g} s ({why}); kept the small reader's reading",
            )
        )
        first.timings["escalate"] = time.perf_counter() - t2
        return first
    except Exception as exc:  # noqa: BLE001 - a failing tier must not lose the page
        first.checks.append(CheckResult(name="escalation_error", passed=False, reason=f"escalation failed: {exc}"[:300]))
        first.timings["escalate"] = time.perf_counter() - t2
        return first
    if not second.checks:
        second.checks = check_reading(task, second, cfg.ocr.checks)
    # the escalator reports the rotation it read at (0 is a real answer: a VLM may undo a wrong turn)
    second.attempts = list(first.attempts) + [a for a in second.attempts if a not in first.attempts]
    # One key per stage: the escalator's own figures are parts of `escalate` and would count twice.
    second.timings = {**first.timings, "escalate": time.perf_counter() - t2}
    return second


def _checked(value, kind: type, stage: str):
    """`value` if it is a `kind`; else a one-line error (an engine that returned garbage fails its
    page with a reason instead of an AttributeError deep in the checks)."""
    if not isinstance(value, kind):
        raise TypeError(f"the {stage} returned {type(value).__name__}, not a {kind.__name__}")
    return value


def finish_ocr_page(page: Page, reading: Reading) -> Page:
    page.blocks = reading.blocks
    page.rotation = reading.rotation
    page.checks.extend(reading.checks)
    page.timings.update(reading.timings)
    page.attempts.extend(reading.attempts)
    failed = [c for c in reading.checks if not c.passed]
    if failed:
        page.status = "flagged"
        page.flags.extend(c.name for c in failed if c.name not in page.flags)
    return page


async def triage_outcomes(
    src: SourceDocument, numbers: list[int], cfg: PagerouterConfig, ocr: str = "auto", walk: list[int] | None = None
) -> AsyncIterator[TriageOutcome]:
    """Run the triage stage in a worker thread (keeps an event loop responsive).

    Pages are pulled in small batches: a thread hand-off per page cost more than triaging a
    plain born-digital page. A batch ends early at an OCR page so OCR starts at once. `walk`
    (a part of `numbers`, e.g. one page range of a Ray Data batch) is read as in a walk of all.
    """
    it = DocumentTriage(cfg, ocr).iter_pages(src, numbers, walk)
    loop = asyncio.get_running_loop()

    def next_batch(budget_s: float = 0.05, max_pages: int = 64) -> list[TriageOutcome]:
        batch: list[TriageOutcome] = []
        t0 = time.perf_counter()
        for outcome in it:
            batch.append(outcome)
            if outcome.task is not None or len(batch) >= max_pages or time.perf_counter() - t0 > budget_s:
                break
        return batch

    while True:
        batch = await loop.run_in_executor(None, next_batch)
        if not batch:
            return
        for outcome in batch:
            yield outcome


async def convert_pages(
    outcomes: AsyncIterator[TriageOutcome],
    source: str,
    cfg: PagerouterConfig,
    calls: OcrCalls | None,
    *,
    concurrency: int = 1,
    languages: tuple[str, ...] = (),
    images: bool = False,
    flow: OcrFlow = ocr_flow,
) -> AsyncIterator[Page]:
    """Yield each page, in page order, as soon as it and all pages before it are done.

    `outcomes` come from the triage stage (local: `triage_outcomes`; served: the Triage
    deployment's stream). OCR pages run concurrently up to `concurrency`; finished text-layer
    pages are not held back by OCR of later pages, only by earlier ones (page order).
    `languages` (the request's Tesseract packs) ride on each OcrTask to the readers; `images`
    cuts each OCR page's figure blocks from its render (text-layer pages' figures are rendered
    by whoever holds the document: `attach_figure_pngs`). `flow` makes an OCR page's reading
    from its task and `calls` (default `ocr_flow`, all of it; the batch run's stages run its
    parts stage by stage and pass the part still to run here).
    """
    sem = asyncio.Semaphore(max(1, concurrency))
    pending: list[asyncio.Task[Page] | Page] = []

    async def run_ocr(outcome: TriageOutcome) -> Page:
        async with sem:
            assert outcome.task is not None and calls is not None
            if languages:
                outcome.task.languages = tuple(languages)
            try:
                reading = await _timed_flow(outcome.task, calls, cfg, flow)
            except Exception as exc:  # noqa: BLE001 - one page's failure never loses the others
                if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) and not str(exc):
                    exc = TimeoutError(f"no result within serve.page_timeout_s={cfg.serve.page_timeout_s:g} s")
                # keep what the page already has (a mixed page's text layer, its flags)
                page = outcome.page
                page.status = "failed"
                page.error = failed_page(source, page.number, "OCR", exc).error
                return page
            else:
                page = finish_ocr_page(outcome.page, reading)
                if images:
                    from .figure_export import crop_figures, figure_problem

                    try:
                        crop_figures(page, outcome.task)
                    except Exception as exc:  # noqa: BLE001 - a bad figure box flags its page, never loses the document
                        figure_problem(page, source, exc)
                return page
            finally:
                outcome.task = None  # drop the page render now, not when the document ends
                release_free_memory()

    try:
        async for page in _in_page_order(outcomes, pending, run_ocr, calls, concurrency):
            yield clean_model(page)  # every route's page leaves here: no control characters in its text
    finally:  # the consumer went away (client disconnect, error): stop the OCR still running
        for t in pending:
            if isinstance(t, asyncio.Task) and not t.done():
                t.cancel()


class _PageClock:
    """A page's work clock, shared with its stage calls through `_PAGE_CLOCK`: a stage call that
    is retried because its replica died (`stage_retried`) restarts it once per retry, so the
    page's time lost with the dead replica (and the wait for a replacement) does not fail the
    retry; the reason stays with the page if it still times out."""

    def __init__(self) -> None:
        self.restarted = asyncio.Event()
        self.notes: list[str] = []


_PAGE_CLOCK: ContextVar[_PageClock | None] = ContextVar("pagerouter_page_clock", default=None)
_MAX_CLOCK_RESTARTS = 3  # one retry per stage call (layout, read, escalate)


def stage_retried(why: str) -> None:
    """Called by a stage call that retries on a live replica after its replica died."""
    clock, started = _PAGE_CLOCK.get(), _PAGE_STARTED.get()
    if started is not None:
        started.clear()  # set again when the retry is taken by a replica (before it starts: no race)
    if clock is not None:
        clock.notes.append(why)
        clock.restarted.set()


async def _timed_flow(task: OcrTask, calls: OcrCalls, cfg: PagerouterConfig, flow: OcrFlow = ocr_flow) -> Reading:
    """`flow` (`ocr_flow`) within serve.page_timeout_s of work: counted from when its first stage call
    began work (`page_work_started`) where the calls report it, so a page that waited in a
    replica's queue under load still gets its full time; else from now. Restarted when a stage
    call is retried after its replica died (`stage_retried`)."""
    started, clock = asyncio.Event(), _PageClock()
    tokens = _PAGE_STARTED.set(started), _PAGE_CLOCK.set(clock)
    try:
        running = asyncio.ensure_future(flow(task, calls, cfg))  # the task copies the context
    finally:
        _PAGE_CLOCK.reset(tokens[1])
        _PAGE_STARTED.reset(tokens[0])
    try:
        if calls.reports_start:
            waiter = asyncio.ensure_future(started.wait())
            try:
                await asyncio.wait({running, waiter}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        timeout = cfg.serve.page_timeout_s
        while True:
            clock.restarted.clear()
            restart = asyncio.ensure_future(clock.restarted.wait())
            try:
                done, _ = await asyncio.wait({running, restart}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                restart.cancel()
            if running in done:
                return running.result()
            if restart not in done or len(clock.notes) > _MAX_CLOCK_RESTARTS:
                why = f" ({'; '.join(clock.notes)})" if clock.notes else ""
                raise TimeoutError(f"no result within serve.page_timeout_s={timeout:g} s{why}")
            if calls.reports_start:
                # Waiting for a replacement replica is queueing, not the page's work: the new clock
                # starts when the retry is taken (up to one more page_timeout_s of waiting).
                waiter = asyncio.ensure_future(started.wait())
                try:
                    await asyncio.wait({running, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
    finally:
        if not running.done():
            running.cancel()


async def _in_page_order(outcomes, pending, run_ocr, calls, concurrency) -> AsyncIterator[Page]:
    async for outcome in outcomes:
        if outcome.task is None:
            pending.append(outcome.page)
        elif calls is None:
            pending.append(needs_ocr(outcome.page, "no OCR engine is available in this run"))
        else:
            pending.append(asyncio.create_task(run_ocr(outcome)))
        while pending and (isinstance(pending[0], Page) or pending[0].done()):
            head = pending.pop(0)
            yield head if isinstance(head, Page) else head.result()
        # Bound the in-flight window so a long document doesn't queue every page's render.
        while len(pending) > max(2, 2 * concurrency) and not isinstance(pending[0], Page):
            yield await pending.pop(0)  # type: ignore[misc]
    for head in pending:
        yield head if isinstance(head, Page) else await head


def new_document(src: SourceDocument) -> Document:
    doc = Document(source=Path(src.name).name if src.name != "-" else "-", page_count=src.page_count)
    return clean_model(doc)  # a file name may carry control characters too


__all__ = [
    "DocumentTriage",
    "TriageOutcome",
    "convert_pages",
    "escalated_reading",
    "escalates",
    "first_reading",
    "triage_outcomes",
    "failed_page",
    "stage_retried",
    "finish_ocr_page",
    "needs_ocr",
    "new_document",
    "ocr_flow",
]
