"""The isolation worker process: opens documents and triages pages for `pool.IsolatedPages`.

Messages are dicts from the pool (`op`: open, walk, figures, warm, forget, quit); replies are tuples.
An `open` may name the walk that will follow (`ahead`, from `isolation.WalkAhead`): its first
task is then read right after the ("opened", meta) reply, as if the walk had been sent.
A file's bytes follow an `open` (or a `walk`/`figures` marked `has_data`) as one raw message,
and the opened document stays cached here by its key (`isolation.cached_documents`): the content hash and
the open's serial, so two requests with the same bytes never share one MuPDF document.
A walk task streams one ("page", TriageOutcome) per page, up to `count` pages, its time budget
or an OCR page, then ("done", rss_mb); a live walk is resumed by the next task of the same
document, so the header/footer pre-scan runs once.

`marker` (shared memory) says what the worker is doing: a page number, -1 for the pre-scan,
-2 for opening. When the worker dies or stops answering, the pool reads it to name the page.
"""

from __future__ import annotations

import os
import signal
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

# Imported here so the fork server loads them once and every worker starts warm.
import pymupdf  # noqa: F401

from .. import ocr, textlayer, triage  # noqa: F401
from ..config import PagerouterConfig
from ..intake.inputs import InputError, SourceDocument, check_page_count, open_source, parse_pages
from ..common.memory import LARGE_INPUT_BYTES, release_free_memory
from ..ocr import task  # noqa: F401
from ..flow.pipeline import DocumentTriage, TriageOutcome
from ..triage.layer_proof import prepare
from . import render_figures

MARK_IDLE, MARK_PRESCAN, MARK_OPEN = 0, -1, -2


def inject_fault(spec: str, where: str) -> None:
    """The test-only fault injection hook (see `isolation.FAULT_ENV`); a no-op unless `spec` names `where`."""
    if not spec:
        return
    for item in spec.split(","):
        kind, _, at = item.strip().partition("@")
        if at != where and not (at == "page" and where.isdigit()):  # `page`: every page
            continue
        if kind.startswith("sleep"):  # `sleep0.5@page`: a slow page (back-pressure and timeout tests)
            time.sleep(float(kind[5:] or 1))
            continue
        if kind == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif kind == "abort":
            os.abort()
        elif kind == "hang":
            while True:  # a runaway loop, as a malformed stream might cause
                pass
        elif kind == "exit":
            os._exit(3)
        elif kind == "raise":
            raise RuntimeError(f"injected fault at {where}")


class _MarkedTriage(DocumentTriage):
    """`DocumentTriage` that keeps the marker current (and honours the fault hook)."""

    def __init__(self, cfg: PagerouterConfig, marker, furniture: bool, ocr: str = "auto"):
        super().__init__(cfg, ocr)
        self.marker, self.furniture, self.fault = marker, furniture, ""

    def iter_pages(self, src, numbers, walk=None, furniture_cache=None):
        self.marker.value = MARK_PRESCAN
        if self.furniture:
            inject_fault(self.fault, "prescan")
            yield from super().iter_pages(src, numbers, walk, furniture_cache)
            return
        # The pre-scan crashed or hung before: walk without header/footer roles.
        for n in numbers if walk is None else walk:
            yield self.triage_one(src, n)

    def triage_one(self, src, number, furniture=None, extracted=None):
        self.marker.value = number
        inject_fault(self.fault, str(number))
        return super().triage_one(src, number, furniture, extracted)


@dataclass
class _Walk:
    key: tuple
    triage: _MarkedTriage
    pages: Any  # the live generator
    next: int  # index into the walk's numbers of the page it yields next


@dataclass
class _Doc:
    src: SourceDocument
    walk: _Walk | None = None
    extra: dict = field(default_factory=dict)
    nbytes: int = 0  # the file's size
    held_mb: float = 0.0  # resident memory its bytes and opening took (the pool's recycle test leaves it out)


class _Trim:
    """Freed memory back to the OS when a closed document leaves some to give: its file was
    large, or the worker's resident memory grew by `isolation.trim_after_growth_mb` since the
    last trim (a scan's decoded images, a long document's text). Not after every document:
    `malloc_trim` walks the whole heap, 4.5 ms of CPU per close, a third of what a served
    one-page request cost (`benchmarks/bench_serve.py`: in-process one-page convert 12.3 ->
    7.7 ms without it)."""

    def __init__(self, growth_mb: float):
        self.growth_mb = growth_mb
        self.base = _rss_mb()

    def after_close(self, nbytes: int) -> None:
        if nbytes >= LARGE_INPUT_BYTES or _rss_mb() - self.base >= self.growth_mb:
            release_free_memory()  # the file's bytes and MuPDF's store
            self.base = _rss_mb()


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def serve(conn, cfg_json: str, marker) -> None:
    """The worker's loop: answer the pool until it says quit or goes away."""
    import faulthandler

    # a forked worker inherits the caller's fault handler (pytest's, say), which would dump a
    # traceback to the shared stderr on every crash; the pool reports the crash on the page
    faulthandler.disable()
    cfg = PagerouterConfig.model_validate_json(cfg_json)
    docs: OrderedDict[str, _Doc] = OrderedDict()
    trim = _Trim(cfg.isolation.trim_after_growth_mb)

    def load(msg: dict) -> _Doc:
        before = _rss_mb()
        data = conn.recv_bytes()
        marker.value = MARK_OPEN
        inject_fault(msg.get("fault", ""), "open")
        src = open_source(data=data, name=msg["name"], password=msg.get("password"))
        doc = docs[msg["digest"]] = _Doc(src, nbytes=len(data), held_mb=max(0.0, _rss_mb() - before))
        while len(docs) > cfg.isolation.cached_documents:
            evicted = docs.popitem(last=False)[1]
            evicted.src.close()
            trim.after_close(evicted.nbytes)
        return doc

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        op = msg["op"]
        if op == "quit":
            return
        if op == "forget":
            gone = docs.pop(msg["digest"], None)
            if gone is not None:
                gone.src.close()
                nbytes = gone.nbytes
                del gone
                trim.after_close(nbytes)
            continue
        try:
            if op == "warm":  # what its first pages would otherwise load (pool.IsolatedPages.warm)
                conn.send(("warm", prepare(cfg.triage, cfg.ocr)))
                continue
            if op == "open":
                doc = load(msg)
                s = doc.src
                ahead, numbers = msg.get("ahead"), _ahead_numbers(cfg, s, msg.get("ahead"))
                conn.send(("opened", {"kind": s.kind, "opened_with": s.opened_with, "pages": s.page_count,
                                      "ahead": numbers}))
                if numbers is not None:
                    _walk(conn, cfg, doc, {"numbers": numbers, "start": 0, "count": ahead["count"],
                                           "budget_s": ahead["budget_s"], "furniture": True,
                                           "fault": msg.get("fault", ""), "ocr": ahead["ocr"]}, marker,
                          _held_mb(docs))
                continue
            doc = load(msg) if msg.get("has_data") else docs.get(msg["digest"])
            if doc is None:
                conn.send(("missing",))
                continue
            docs.move_to_end(msg["digest"])
            if op == "figures":
                marker.value = msg["number"]
                inject_fault(msg.get("fault", ""), "figures")
                conn.send(("figures", render_figures(doc.src.doc, msg["number"], msg["clips"], msg["dpi"])))
            elif op == "walk":
                _walk(conn, cfg, doc, msg, marker, _held_mb(docs))
            else:
                conn.send(("error", f"unknown request {op!r}"))
        except InputError as exc:
            conn.send(("input_error", exc.source, exc.message, exc.page))
        except Exception as exc:  # noqa: BLE001 - reported to the pool, which fails the page
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            conn.send(("error", text[:300]))
        finally:
            marker.value = MARK_IDLE
            # the loop's own reference to the last document would keep its file's bytes alive
            # after the pool forgets it (a 150 MB upload held by an idle worker)
            doc = s = None  # noqa: F841


def _ahead_numbers(cfg: PagerouterConfig, src: SourceDocument, ahead: dict | None) -> list[int] | None:
    """The pages of the walk an `open` named (`ahead`), when one walk will read them: None when
    there is none, when the selection or the page limit refuses it (the caller reports that
    before any page is read) or when the pool reads the document in parallel parts."""
    if not ahead:
        return None
    try:
        numbers = check_page_count(parse_pages(ahead["pages"], src.page_count, src.name), cfg.limits.max_pages, src.name)
    except InputError:
        return None
    below = ahead["single_below"]
    return numbers if numbers and (not below or len(numbers) < below) else None


def _held_mb(docs: dict[str, _Doc]) -> float:
    """Resident memory the documents a worker keeps open took when they were opened."""
    return sum(d.held_mb for d in docs.values())


def _walk(conn, cfg: PagerouterConfig, doc: _Doc, msg: dict, marker, held_mb: float = 0.0) -> None:
    numbers, start, count = msg["numbers"], msg["start"], msg["count"]
    ocr = msg.get("ocr", "auto")  # the request's ocr option: a walk in another mode is another walk
    key = (len(numbers), hash(tuple(numbers)), msg["furniture"], ocr)
    w = doc.walk
    if w is None or w.key != key or w.next != start:
        t = _MarkedTriage(cfg, marker, msg["furniture"], ocr)
        # doc.extra keeps the header/footer model: a walk that starts elsewhere in the same
        # pages (the pool reads a long document in parts on several workers) does not pre-scan again
        w = doc.walk = _Walk(key, t, t.iter_pages(doc.src, numbers, walk=numbers[start:], furniture_cache=doc.extra), start)
    w.triage.fault = msg.get("fault", "")
    t0 = time.perf_counter()
    for _ in range(count):
        outcome: TriageOutcome | None = next(w.pages, None)
        if outcome is None:
            break
        w.next += 1
        conn.send(("page", outcome))
        # like pipeline.triage_outcomes' batches: OCR work goes out at once, and a task is short
        if outcome.task is not None or time.perf_counter() - t0 > msg.get("budget_s", 0.05):
            break
    marker.value = MARK_IDLE
    # what the worker holds beyond its open documents: a 1 GB scan's bytes are no leak, and
    # counted in, every task on it retired the worker, whose successor took the bytes again
    conn.send(("done", max(0.0, _rss_mb() - held_mb)))


__all__ = ["serve", "inject_fault"]
