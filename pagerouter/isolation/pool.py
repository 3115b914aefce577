"""The isolation pool: MuPDF's work on untrusted bytes in worker processes (`worker.py`).

Workers are forked from a fork server that has the page code imported (cheap to start, and no
threads of the caller are forked), started on demand up to `isolation.workers`, and replaced
when one dies, stops answering within `isolation.page_timeout_s`, has read
`recycle_after_pages` pages or holds more than `recycle_rss_mb` beyond its open documents. A document's pages go to a
worker `pages_per_task` at a time; outcomes stream back page by page, so a crash costs one
page: the page being read is reported `failed` with the reason, and the walk goes on at the
next page in a fresh worker (which re-opens the document from the bytes kept here). How a
worker process is started and talked to is `process.py`; what it runs, `worker.py`.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import os
import threading
import weakref
from collections.abc import AsyncIterator
from functools import partial

from ..config import PagerouterConfig
from ..intake.inputs import InputError, SourceDocument
from ..model import Page
from ..flow.pipeline import TriageOutcome, triage_outcomes
from . import FAULT_ENV, WalkAhead, render_figures
from .process import WorkerLost, WorkerProcess, stop_all, worker_context
from .worker import MARK_OPEN, MARK_PRESCAN

log = logging.getLogger(__name__)



class IsolatedPages:
    """The worker pool; one per converter or Triage replica (see `isolation.PageWork`)."""

    isolated = True

    def __init__(self, cfg: PagerouterConfig):
        self.cfg, self.icfg = cfg, cfg.isolation
        self._cfg_json = cfg.model_dump_json()
        self._ctx = worker_context(cfg)
        self._cond = threading.Condition()
        self._idle: list[WorkerProcess] = []
        self._all: set[WorkerProcess] = set()
        self._starting = 0
        self._closed = False
        self.started = 0  # workers started so far (tests and figures read it)
        self._opens = itertools.count(1)
        # digest -> (walk, its first batch) read by the opening worker (`WalkAhead`), until walked
        self._read_ahead: dict[str, tuple[_DocumentWalk, list[TriageOutcome]]] = {}
        self._finalizer = weakref.finalize(self, stop_all, self._all)

    # ------------------------------------------------------------------ workers
    def _acquire(self, digest: str, walk: tuple | None = None) -> WorkerProcess:
        """An idle worker (preferring the one whose live walk of this document is at `walk`,
        then one holding the document), a new one if the pool has room, else wait."""
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("the isolation pool is closed")
                for pick in ([w for w in self._idle if walk is not None and w.walk == walk],
                             [w for w in self._idle if digest in w.docs]):
                    if pick:
                        self._idle.remove(pick[-1])
                        return pick[-1]
                if self._idle:
                    return self._idle.pop()
                if len(self._all) + self._starting < self.icfg.workers:
                    self._starting += 1
                    break
                self._cond.wait()
        try:
            w = WorkerProcess(self._ctx, self._cfg_json)
        finally:
            with self._cond:
                self._starting -= 1
                self._cond.notify()
        with self._cond:
            self._all.add(w)
            self.started += 1
        return w

    def _prestart(self, want: int) -> None:
        """Start workers up to `want` now, idle, if this process still has one thread: they are
        forked directly, like the first. Started later, when the parts of a long document are
        read at once, the executor's threads are up and a worker comes from the fork server,
        whose start imports the page code again (1.3 s of CPU on a 240-page convert, and the
        second worker joins half way: `pagerouter convert` used 12 ms of CPU a page, not 6)."""
        if threading.active_count() != 1:
            return
        while True:
            with self._cond:
                if self._closed or len(self._all) + self._starting >= min(want, self.icfg.workers):
                    return
                self._starting += 1
            try:
                w = WorkerProcess(self._ctx, self._cfg_json)
            finally:
                with self._cond:
                    self._starting -= 1
            with self._cond:
                self._all.add(w)
                self.started += 1
                self._idle.append(w)
                self._cond.notify()

    def warm(self) -> list[dict]:
        """Start every worker now and have each load what its first pages would otherwise load
        (the hidden-layer proof's recogniser, about 0.9 s a worker): a server replica does this
        before its first request, a benchmark before its clock starts. Nothing is raised: a
        worker lost here is replaced on demand, and a model that will not load is reported by
        the pages that need it. Returns each worker's answer (`layer_proof.prepare`)."""
        taken: list[WorkerProcess] = []
        answers: list[dict] = []
        try:
            for _ in range(self.icfg.workers):  # none released before all are taken: each is another
                taken.append(self._acquire(""))
        except RuntimeError:  # closed meanwhile
            pass
        sent = []
        for w in taken:
            try:
                w.send({"op": "warm"})
                sent.append(w)
            except WorkerLost:
                self._release(w, False)
        for w in sent:
            healthy = False
            try:
                reply = w.recv(self.icfg.open_timeout_s)
                healthy = True
                if reply[0] == "warm":
                    answers.append(reply[1])
                    if reply[1].get("error"):
                        log.warning("pagerouter: an isolation worker could not load the hidden-layer proof's "
                                    "recogniser: %s", reply[1]["error"])
            except WorkerLost as exc:
                log.warning("pagerouter: an isolation worker was lost while warming up: %s", exc.reason)
            finally:
                self._release(w, healthy)
        return answers

    def _release(self, w: WorkerProcess, healthy: bool) -> None:
        i = self.icfg
        retire = not healthy or self._closed or w.pages >= i.recycle_after_pages or w.rss_mb > i.recycle_rss_mb
        if retire:
            w.stop(kill=not healthy)
        with self._cond:
            if retire:
                self._all.discard(w)
            else:
                self._forget_stale(w)
                self._idle.append(w)
            self._cond.notify()

    def close(self) -> None:
        self._read_ahead.clear()
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            for w in idle:
                self._all.discard(w)
        for w in idle:
            w.stop(kill=False)

    def _forget(self, digest: str) -> None:
        """A closed document leaves every worker: idle ones now, busy ones when released (else
        a busy worker would keep a large file's bytes until its cache evicted them)."""
        self._read_ahead.pop(digest, None)  # never walked: its pages (a scan's render) go now
        with self._cond:
            idle = set(map(id, self._idle))
            for w in self._all:
                if digest in w.docs:
                    w.stale.add(digest)
                    if id(w) in idle:
                        self._forget_stale(w)

    @staticmethod
    def _forget_stale(w: WorkerProcess) -> None:
        for digest in w.stale:
            w.docs.discard(digest)
            try:
                w.conn.send({"op": "forget", "digest": digest})
            except OSError:
                pass
        w.stale.clear()

    # ------------------------------------------------------------------ PageWork
    def open(self, data: bytes, name: str, password: str | None = None, ahead: WalkAhead | None = None) -> SourceDocument:
        # One key per open, not per content: two requests with the same bytes (a retry, a duplicate) must
        # not share one MuPDF document in a worker. MuPDF caches what it decoded per document, so the
        # second reader of a shared document saw no decode warnings and called a page whose image could
        # not be decoded `ok` and blank instead of `damaged_page` (found by tests/test_hostile.py).
        digest = f"{hashlib.sha256(data).hexdigest()}-{next(self._opens)}"
        w = self._acquire(digest)
        healthy = walking = False
        try:
            w.send({"op": "open", "digest": digest, "name": name, "password": password, "fault": _fault(),
                    "ahead": self._ahead_task(ahead)}, data)
            reply = w.recv(self.icfg.open_timeout_s)
            healthy = True
        except WorkerLost as exc:
            t = self.icfg.open_timeout_s
            why = f"opening it took longer than {t:g} s" if exc.timed_out else f"{exc.reason} while opening it"
            raise InputError(name, f"cannot open: {why}") from None
        finally:
            if healthy and reply[0] == "opened":
                w.docs.add(digest)
                walking = reply[1].get("ahead") is not None  # its first walk task follows: the worker stays ours
            if not walking:
                self._release(w, healthy)
        if reply[0] == "input_error":
            raise InputError(reply[1], reply[2], reply[3])
        if reply[0] != "opened":
            raise InputError(name, f"cannot open: {reply[1] if len(reply) > 1 else reply[0]}")
        meta = reply[1]
        src = SourceDocument(
            name=name, doc=None, kind=meta["kind"], opened_with=meta["opened_with"], pages=meta["pages"], data=data,
            digest=digest, password=password, on_close=partial(self._forget, digest),
        )
        if walking:
            walk, batch = _DocumentWalk(self, src, meta["ahead"], ahead.ocr), []
            walk.finish_task(w, batch)  # hands the worker back, whatever happens
            self._read_ahead[digest] = (walk, batch)
            return src
        if self._in_parts(meta["pages"]):
            self._prestart(min(self.icfg.workers, -(-meta["pages"] // self.icfg.parallel_part_pages)))
        return src

    def _parts_from(self) -> int:
        """Pages from which a walk is read in parts, on several workers at once (0: never)."""
        part = self.icfg.parallel_part_pages
        return 2 * part if self.icfg.workers >= 2 and part > 0 else 0

    def _in_parts(self, pages: int) -> bool:
        return 0 < self._parts_from() <= pages

    def _ahead_task(self, ahead: WalkAhead | None) -> dict | None:
        """The first walk task an `open` carries (worker.py reads it after opening), or None."""
        if ahead is None:
            return None
        return {"pages": ahead.pages, "ocr": ahead.ocr, "count": self.icfg.pages_per_task, "budget_s": _TASK_BUDGET_S,
                # from this many pages on `outcomes` reads the document in parts, each its own walk
                "single_below": self._parts_from()}

    async def outcomes(
        self, src: SourceDocument, numbers: list[int], ocr: str = "auto", span: tuple[int, int] | None = None
    ) -> AsyncIterator[TriageOutcome]:
        if src.doc is not None:  # opened by the caller in this process: read it here
            walk_only = numbers[span[0]:span[1]] if span else None
            async for outcome in triage_outcomes(src, numbers, self.cfg, ocr, walk=walk_only):
                yield outcome
            return
        start, stop = span if span else (0, len(numbers))
        part = self.icfg.parallel_part_pages
        if not self._in_parts(stop - start):
            walk, first = self._walk_from_open(src, numbers, ocr, span)
            loop = asyncio.get_running_loop()
            try:
                for outcome in first:
                    yield outcome
                while not walk.finished:  # no thread hop to learn that a finished walk has no more pages
                    batch = await loop.run_in_executor(None, walk.next_batch)
                    if not batch:
                        return
                    for outcome in batch:
                        yield outcome
            finally:  # the consumer went away: a task in flight ends, no further task starts
                walk.close()
            return
        async for outcome in self._parallel_outcomes(src, numbers, ocr, start, stop, part):
            yield outcome

    def _walk_from_open(
        self, src: SourceDocument, numbers: list[int], ocr: str, span: tuple[int, int] | None
    ) -> tuple[_DocumentWalk, list[TriageOutcome]]:
        """The walk `open` began (`WalkAhead`) and the pages it read, when it is this walk; else a new one."""
        read = self._read_ahead.pop(src.digest, None)
        if read is not None and span is None and read[0].numbers == numbers and read[0].ocr == ocr:
            return read
        return _DocumentWalk(self, src, numbers, ocr, span), []

    async def _parallel_outcomes(
        self, src: SourceDocument, numbers: list[int], ocr: str, start: int, stop: int, part: int
    ) -> AsyncIterator[TriageOutcome]:
        """A long document in parts of `part` pages, up to `workers` parts read at once, each by
        its own walk (a worker keeps the header/footer model, so a part does not pre-scan
        again); pages come out in order. A part ahead of the consumer holds at most a few
        batches (`_AHEAD_BATCHES`), so a scan's renders do not pile up while earlier pages are
        read; it holds no worker while it waits."""
        loop = asyncio.get_running_loop()
        spans = [(s, min(s + part, stop)) for s in range(start, stop, part)]
        walks = [_DocumentWalk(self, src, numbers, ocr, sp) for sp in spans]
        queues: list[asyncio.Queue] = [asyncio.Queue(maxsize=_AHEAD_BATCHES) for _ in spans]
        tasks: list[asyncio.Task] = []

        async def produce(i: int) -> None:
            try:
                while True:
                    batch = await loop.run_in_executor(None, walks[i].next_batch)
                    await queues[i].put(batch)
                    if not batch:
                        return
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer, in page order
                await queues[i].put(exc)

        try:
            for i in range(len(spans)):
                while len(tasks) < min(len(spans), i + self.icfg.workers):
                    tasks.append(asyncio.ensure_future(produce(len(tasks))))
                while True:
                    batch = await queues[i].get()
                    if isinstance(batch, BaseException):
                        raise batch
                    if not batch:
                        break
                    for outcome in batch:
                        yield outcome
        finally:  # the consumer went away: tasks in flight end, no further task starts
            for w in walks:
                w.close()
            for t in tasks:
                t.cancel()

    def figure_pngs(self, src: SourceDocument, number: int, clips: list, dpi: int) -> list[bytes | None]:
        if src.doc is not None:
            return render_figures(src.doc, number, clips, dpi)
        w = self._acquire(src.digest)
        healthy = False
        msg = {"op": "figures", "digest": src.digest, "name": src.name, "password": src.password, "number": number,
               "clips": clips, "dpi": dpi, "fault": _fault(), "has_data": False}
        try:
            w.send(msg)
            reply = w.recv(self.icfg.page_timeout_s)
            if reply[0] == "missing":
                w.send({**msg, "has_data": True}, src.data)
                reply = w.recv(self.icfg.page_timeout_s)
            healthy = True
        except WorkerLost as exc:
            raise RuntimeError(f"{exc.reason} while rendering the figures of page {number}") from None
        finally:
            if healthy:
                w.docs.add(src.digest)
            self._release(w, healthy)
        if reply[0] != "figures":
            raise RuntimeError(f"cannot render the figures of page {number}: {reply[-1]}")
        return reply[1]


_TASK_BUDGET_S = 0.05
"""Seconds of pages one walk task reads before it hands its worker back (a batch ends early at
an OCR page, so OCR starts at once), like `pipeline.triage_outcomes`' batches."""

_AHEAD_BATCHES = 4
"""Batches a part of a document read ahead of the consumer may hold (a batch of a scan is one
page and its render)."""


def _fault() -> str:
    return os.environ.get(FAULT_ENV, "")


class _DocumentWalk:
    """One document's pages through the pool, in page order (runs in executor threads).

    Each `next_batch` is one task: a worker triages pages until `pages_per_task`, its time
    budget or an OCR page (like `pipeline.triage_outcomes`' batches), this thread reads them
    all and hands the worker back. A worker is never held while the caller is busy with the
    pages (OCR, a slow client), so documents share the pool task by task."""

    def __init__(self, pool: IsolatedPages, src: SourceDocument, numbers: list[int], ocr: str = "auto",
                 span: tuple[int, int] | None = None):
        self.pool, self.src, self.numbers, self.ocr = pool, src, numbers, ocr
        self.key = (len(numbers), hash(tuple(numbers)), ocr)
        # `span`: only the pages numbers[start:stop] (a page range); the worker's header/footer
        # pre-scan still samples all of `numbers`, so the range reads as it would in a whole walk
        self.pos, self.stop = span if span else (0, len(numbers))  # pos: index of the next page to deliver
        self.furniture = True
        self._closed = False

    def close(self) -> None:
        self._closed = True  # a task in flight finishes; no new one starts

    @property
    def finished(self) -> bool:
        return self._closed or self.pos >= self.stop

    def _task(self, budget_s: float) -> dict:
        return {"op": "walk", "digest": self.src.digest, "name": self.src.name, "password": self.src.password,
                "numbers": self.numbers, "start": self.pos,
                "count": min(self.pool.icfg.pages_per_task, self.stop - self.pos),
                "budget_s": budget_s, "furniture": self.furniture, "fault": _fault(), "has_data": False,
                "ocr": self.ocr}

    def next_batch(self, budget_s: float = _TASK_BUDGET_S) -> list[TriageOutcome]:
        batch: list[TriageOutcome] = []
        while not batch and not self._closed and self.pos < self.stop:
            self._run_task(batch, budget_s)
        return batch

    def _run_task(self, batch: list[TriageOutcome], budget_s: float) -> None:
        w = self.pool._acquire(self.src.digest, walk=(self.src.digest, self.key, self.pos))
        try:
            w.send(self._task(budget_s))
        except WorkerLost as exc:
            self._lost(w, exc, batch)
            return
        except BaseException:
            self.pool._release(w, healthy=False)
            raise
        self.finish_task(w, batch, budget_s)

    def finish_task(self, w: WorkerProcess, batch: list[TriageOutcome], budget_s: float = _TASK_BUDGET_S) -> None:
        """Read the replies of the task `w` is running for this walk into `batch`, then hand `w`
        back to the pool (on every path). The task was sent by `_run_task`, or came with the
        document's `open` (`WalkAhead`)."""
        pool, icfg = self.pool, self.pool.icfg
        try:
            while True:
                reply = w.recv(icfg.page_timeout_s)
                if reply[0] == "missing":  # a fresh worker: the document's bytes cross once
                    w.send({**self._task(budget_s), "has_data": True}, self.src.data)
                    w.docs.add(self.src.digest)
                elif reply[0] == "page":
                    batch.append(reply[1])
                    self.pos += 1
                    w.pages += 1
                elif reply[0] == "done":
                    w.rss_mb = reply[1]
                    w.walk = (self.src.digest, self.key, self.pos)
                    pool._release(w, healthy=True)
                    return
                else:  # an error escaped the page handlers in the worker: fail the page it was on
                    pool._release(w, healthy=False)
                    batch.append(self._failed(f"reading failed in the worker: {reply[-1]}"))
                    return
        except WorkerLost as exc:
            self._lost(w, exc, batch)
        except BaseException:
            pool._release(w, healthy=False)
            raise

    def _lost(self, w: WorkerProcess, exc: WorkerLost, batch: list[TriageOutcome]) -> None:
        """`w` died or hung on this walk's task: the page it was on fails (or, lost in the
        header/footer pre-scan of several pages, the walk goes on without that pre-scan)."""
        pool, icfg = self.pool, self.pool.icfg
        mark = w.marker.value
        pool._release(w, healthy=False)
        if mark == MARK_PRESCAN and self.furniture and len(self.numbers) > 1:
            # with one page the pre-scan was reading that very page: it is failed below at once,
            # not read again for a second full timeout (a stream bomb held a worker twice as long)
            log.warning("%s: the header/footer pre-scan: %s; reading on without it", self.src.name, exc.reason)
            self.furniture = False
            return
        n = self.numbers[self.pos]
        if exc.timed_out:
            what = "to re-open" if mark == MARK_OPEN else "to read"
            why = f"page {n} took longer than {icfg.page_timeout_s:g} s {what} (its worker was stopped)"
        else:
            why = f"{exc.reason} while {'re-opening the file for' if mark == MARK_OPEN else 'reading'} page {n}"
        batch.append(self._failed(why))

    def _failed(self, why: str) -> TriageOutcome:
        n = self.numbers[self.pos]
        self.pos += 1
        # info, not warning: the page carries the error and every caller reports it (the CLI prints it
        # once as a warning; a second copy from here made two lines for one failed page)
        log.info("%s: page %d: %s", self.src.name, n, why)
        return TriageOutcome(Page(number=n, status="failed", route=None, error=f"{self.src.name}: page {n}: {why}"))


__all__ = ["IsolatedPages", "WorkerLost"]
