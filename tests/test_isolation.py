"""Isolation: MuPDF's work on input files runs in worker processes, so a crash, an abort or a
runaway loop while reading one page fails that page (with the reason) and nothing else; and a
truncated PDF never loses pages silently.

Faults are injected in the workers with the test-only hook `PAGEROUTER_FAULT_INJECTION_FOR_TESTS`
(`pagerouter.isolation.FAULT_ENV`): real SIGSEGV, SIGABRT and busy loops, never in this process.
"""

from __future__ import annotations

import asyncio

import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.intake.inputs import InputError
from pagerouter.isolation import FAULT_ENV

from . import textlayer_fixtures as F

PAGES = 6


def _cfg(**isolation) -> PagerouterConfig:
    return PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"page_timeout_s": 2, **isolation}})


def _text(page) -> str:
    return "\n".join(b.text for b in page.blocks)


def _strip(doc):
    return [p.model_dump(exclude={"timings"}) for p in doc.pages]


@pytest.fixture(scope="module")
def pdf_bytes() -> bytes:
    d = pymupdf.open()
    for i in range(PAGES):
        synth.add_text_page(
            d, [f"Page {i + 1} says: the quick brown fox jumps over the lazy dog. " * 3],
            title=f"Section {i + 1}", header="Annual report", footer=str(i + 1),
        )
    data = d.tobytes(garbage=3, deflate=True)
    d.close()
    return data


@pytest.fixture(scope="module")
def conv():
    with Converter(_cfg()) as c:
        yield c


@pytest.fixture(scope="module")
def reference(pdf_bytes):
    return Converter(_cfg(enabled=False)).convert(pdf_bytes, name="doc.pdf")


def test_isolated_pages_equal_in_process_pages(conv, reference, pdf_bytes, monkeypatch):
    monkeypatch.delenv(FAULT_ENV, raising=False)
    assert conv.pages.isolated
    assert _strip(conv.convert(pdf_bytes, name="doc.pdf")) == _strip(reference)
    # a page image (opened, converted and read in the worker) and a page selection
    png = F.png_bytes()
    assert _strip(conv.convert(png, name="p.png")) == _strip(Converter(_cfg(enabled=False)).convert(png, name="p.png"))
    assert [p.number for p in conv.convert(pdf_bytes, name="doc.pdf", pages="2,5").pages] == [2, 5]


def test_segfault_abort_and_runaway_loop_fail_one_page_each_and_the_converter_keeps_serving(
    conv, reference, pdf_bytes, monkeypatch
):
    monkeypatch.setenv(FAULT_ENV, "segv@2,abort@4,hang@5")
    doc = conv.convert(pdf_bytes, name="doc.pdf")
    status = {p.number: p.status for p in doc.pages}
    assert status == {1: "ok", 2: "failed", 3: "ok", 4: "failed", 5: "failed", 6: "ok"}
    errors = {p.number: p.error for p in doc.pages if p.error}
    assert errors[2] == "doc.pdf: page 2: worker crashed (SIGSEGV) while reading page 2"
    assert errors[4] == "doc.pdf: page 4: worker crashed (SIGABRT) while reading page 4"
    assert errors[5] == "doc.pdf: page 5: page 5 took longer than 2 s to read (its worker was stopped)"
    # the pages around the faults read exactly as without isolation (furniture roles included)
    for p, ref in zip(doc.pages, reference.pages):
        if p.status == "ok":
            assert p.model_dump(exclude={"timings"}) == ref.model_dump(exclude={"timings"})
    # the same converter serves the next request in full
    monkeypatch.delenv(FAULT_ENV)
    assert _strip(conv.convert(pdf_bytes, name="doc.pdf")) == _strip(reference)


def test_a_crash_in_the_header_footer_prescan_reads_on_without_it(conv, pdf_bytes, monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "segv@prescan")
    doc = conv.convert(pdf_bytes, name="doc.pdf")
    assert [p.status for p in doc.pages] == ["ok"] * PAGES
    assert all(f"Page {p.number} says" in _text(p) for p in doc.pages)


def test_a_crash_while_opening_is_a_clean_input_error(conv, pdf_bytes, monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "segv@open")
    with pytest.raises(InputError, match=r"^doc\.pdf: cannot open: worker crashed \(SIGSEGV\) while opening it$"):
        conv.convert(pdf_bytes, name="doc.pdf")
    monkeypatch.setenv(FAULT_ENV, "hang@open")
    slow = Converter(_cfg(open_timeout_s=1))
    with pytest.raises(InputError, match="opening it took longer than 1 s"):
        slow.convert(pdf_bytes, name="doc.pdf")
    monkeypatch.delenv(FAULT_ENV)
    assert [p.status for p in slow.convert(pdf_bytes, name="doc.pdf").pages] == ["ok"] * PAGES
    with pytest.raises(InputError, match="not a PDF"):  # bad input is still the one-line error
        conv.convert(b"no pdf here", name="junk.pdf")


def test_workers_are_recycled_and_a_fresh_worker_gets_the_bytes_again(reference, pdf_bytes, monkeypatch):
    monkeypatch.delenv(FAULT_ENV, raising=False)
    with Converter(_cfg(pages_per_task=2, recycle_after_pages=3, workers=1)) as c:
        assert _strip(c.convert(pdf_bytes, name="doc.pdf")) == _strip(reference)
        # tasks of at most 2 pages; the first worker retires once it has read 3 or more, and the
        # next, which never saw the file, asks for its bytes and reads on at the right page
        assert c.pages.started >= 2


@pytest.mark.slow
def test_a_file_larger_than_the_memory_bound_does_not_retire_its_worker_every_task(monkeypatch):
    """`recycle_rss_mb` bounds what a worker holds beyond the documents it keeps open. A scan
    whose file is near the bound (a 1 GB, 270-page scan against the default 1,024 MB) counted
    in retired the worker after every task, and each successor took the whole file's bytes
    again: 271 workers for 270 pages. Here a 400 MB file against a bound 300 MB above what a
    worker holds after a small file: at most one replacement, every page comes out (before:
one worker per task)."""
    import numpy as np

    monkeypatch.delenv(FAULT_ENV, raising=False)
    import pagerouter.isolation.pool as pool_mod

    seen: list[float] = []
    release = pool_mod.IsolatedPages._release

    def spy(self, w, healthy):
        seen.append(w.rss_mb)
        return release(self, w, healthy)

    monkeypatch.setattr(pool_mod.IsolatedPages, "_release", spy)
    rng = np.random.default_rng(5)

    def scan(pages: int) -> bytes:  # incompressible pictures: 4 MB of file a page
        d = pymupdf.open()
        for _ in range(pages):
            pix = pymupdf.Pixmap(pymupdf.csRGB, 1000, 1400, rng.integers(0, 256, 4_200_000, dtype=np.uint8).tobytes(), False)
            d.new_page(width=500, height=700).insert_image(pymupdf.Rect(0, 0, 500, 700), pixmap=pix)
        return d.tobytes()

    # the small file first: the workers' fork server starts with this process still small
    # (a forked worker's resident memory counts the pages it shares with its parent)
    with Converter(_cfg(workers=1, page_timeout_s=30)) as c:
        c.convert(scan(3), name="small.pdf")
    bound = int(max(seen) + 300)  # room for MuPDF's store of decoded pictures (256 MB at most)
    data = scan(100)
    assert len(data) > 390 * 2**20
    with Converter(_cfg(workers=1, page_timeout_s=30, recycle_rss_mb=bound)) as c:
        doc = c.convert(data, name="big.pdf")
        assert [p.number for p in doc.pages] == list(range(1, 101))
        # the first task may end above the bound (what opening the file left in use is only
        # given back later): one replacement, which then reads on to the end
        assert c.pages.started <= 2, (c.pages.started, bound, seen)


def test_stream_closed_early_frees_the_worker(pdf_bytes, monkeypatch):
    monkeypatch.delenv(FAULT_ENV, raising=False)
    with Converter(_cfg(workers=1, pages_per_task=64)) as c:
        it = c.iter_pages(pdf_bytes, name="doc.pdf")
        assert next(it).number == 1
        it.close()
        assert [p.status for p in c.convert(pdf_bytes, name="doc.pdf").pages] == ["ok"] * PAGES


def test_figures_are_rendered_in_the_worker(tmp_path, monkeypatch):
    d = pymupdf.open()
    page = d.new_page()
    F.put(page, 56, 80, "Text above the picture.", 10)
    page.insert_image(pymupdf.Rect(100, 120, 400, 320), stream=F.png_bytes())
    F.put(page, 56, 360, "Figure 1: A picture of nothing.", 10)
    data = d.tobytes()
    monkeypatch.delenv(FAULT_ENV, raising=False)
    with Converter(_cfg()) as c:
        doc = c.convert(data, name="fig.pdf", images_dir=tmp_path / "img")
        (fig,) = [b for b in doc.pages[0].blocks if b.role == "figure"]
        assert fig.image and pymupdf.open(fig.image).page_count == 1
        monkeypatch.setenv(FAULT_ENV, "abort@figures")
        doc = c.convert(data, name="fig.pdf", images_dir=tmp_path / "img2")
    page = doc.pages[0]
    assert "figure_not_saved" in page.flags
    assert "worker crashed (SIGABRT) while rendering the figures of page 1" in page.checks[-1].reason


def test_the_triage_deployment_keeps_serving_after_a_crash(pdf_bytes, monkeypatch):
    """The Serve Triage deployment's own code (its class, called without starting Ray Serve)
    reads through the same pool: a segfault fails one page, the next request is whole."""
    from pagerouter.deployments.triage import Triage
    from pagerouter.flow.pipeline import TriageOutcome

    replica = Triage.func_or_class(_cfg().model_dump())

    async def run() -> list[TriageOutcome]:
        return [o async for o in replica.outcomes(pdf_bytes, "doc.pdf", None, None) if isinstance(o, TriageOutcome)]

    monkeypatch.setenv(FAULT_ENV, "segv@3")
    first = asyncio.run(run())
    assert [o.page.status for o in first] == ["ok", "ok", "failed", "ok", "ok", "ok"]
    assert "worker crashed (SIGSEGV) while reading page 3" in first[2].page.error
    monkeypatch.delenv(FAULT_ENV)
    assert [o.page.status for o in asyncio.run(run())] == ["ok"] * PAGES
    replica.pages.close()


# ---------------------------------------------------------------------------- truncated files
@pytest.mark.parametrize("isolated", [True, False], ids=["isolated", "in-process"])
def test_a_truncated_pdf_never_loses_pages_silently(pdf_bytes, isolated, monkeypatch):
    """Every page of a cut-off PDF either has its own text, or says it lost it: `flagged`
    (damaged_page) or `failed`; never `ok` and blank (pages after the cut used to be)."""
    monkeypatch.delenv(FAULT_ENV, raising=False)
    conv = Converter(_cfg(enabled=isolated))
    lost = 0
    for frac in (0.15, 0.3, 0.45, 0.6, 0.75, 0.9):
        cut = pdf_bytes[: int(len(pdf_bytes) * frac)]
        try:
            doc = conv.convert(cut, name="cut.pdf")
        except InputError:
            continue
        assert [p.number for p in doc.pages] == list(range(1, doc.page_count + 1))
        for p in doc.pages:
            if p.status == "ok":
                assert f"Page {p.number} says" in _text(p), (frac, p.number, p.route)
            else:
                lost += 1
                assert p.status == "failed" or "damaged_page" in p.flags, (frac, p.number)
                assert p.error or any(c.name == "damaged_page" for c in p.checks)
    assert lost  # the cuts did lose pages, and said so
    conv.close()


def test_workers_started_beside_other_threads_come_from_the_fork_server(reference, pdf_bytes, monkeypatch):
    """A single-threaded caller forks workers directly (fast start); with other threads alive (a
    Serve replica) a fork could copy a held lock, so the fork server starts them. Both kinds
    fail one page on a crash and read the others exactly."""
    import threading

    from pagerouter.isolation.process import _Process

    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        with Converter(_cfg()) as c:
            monkeypatch.setenv(FAULT_ENV, "segv@3")
            doc = c.convert(pdf_bytes, name="doc.pdf")
            assert [p.number for p in doc.pages if p.status == "failed"] == [3]
            workers = list(c.pages._all)
            assert workers and all(isinstance(w.proc, _Process) for w in workers)
    finally:
        stop.set()
        other.join()
    with Converter(_cfg()) as c:  # no other thread now: forked directly
        monkeypatch.delenv(FAULT_ENV)
        assert _strip(c.convert(pdf_bytes, name="doc.pdf")) == _strip(reference)
        assert c.pages._all and not any(isinstance(w.proc, _Process) for w in c.pages._all)


def test_a_long_document_read_in_parts_on_several_workers_reads_as_one_walk(reference, pdf_bytes, monkeypatch):
    # parts of 2 pages: 3 parts, two workers reading at once; pages come out in order and read
    # exactly as one walk over the document (the header/footer model is the same in each part)
    monkeypatch.delenv(FAULT_ENV, raising=False)
    with Converter(_cfg(parallel_part_pages=2, pages_per_task=1)) as c:
        assert _strip(c.convert(pdf_bytes, name="doc.pdf")) == _strip(reference)
        assert c.pages.started == 2
        # a fault in a later part fails its page alone, in its place
        monkeypatch.setenv(FAULT_ENV, "segv@3,abort@6")
        doc = c.convert(pdf_bytes, name="doc.pdf")
        assert [p.number for p in doc.pages] == list(range(1, PAGES + 1))
        assert [p.status for p in doc.pages] == ["ok", "ok", "failed", "ok", "ok", "failed"]
        for p, ref in zip(doc.pages, reference.pages):
            if p.status == "ok":
                assert p.model_dump(exclude={"timings"}) == ref.model_dump(exclude={"timings"})
        # a stream closed part-way frees both workers: the next request is read in full
        monkeypatch.delenv(FAULT_ENV)
        it = c.iter_pages(pdf_bytes, name="doc.pdf")
        assert next(it).number == 1
        it.close()
        assert _strip(c.convert(pdf_bytes, name="doc.pdf")) == _strip(reference)


def test_a_long_document_gets_all_its_workers_forked_before_the_parts_start(reference, pdf_bytes, monkeypatch):
    """A single-threaded caller (the CLI) opening a document long enough for parts forks every
    worker it will read them with right away, directly: started later, from the reading
    threads, the second would come from the fork server, which imports the page code again
    (it cost `pagerouter convert` half its speed on long documents)."""
    import threading

    from pagerouter.isolation.process import _Process

    monkeypatch.delenv(FAULT_ENV, raising=False)
    assert threading.active_count() == 1, "this test needs a single-threaded test process"
    with Converter(_cfg(parallel_part_pages=2, pages_per_task=1)) as c:
        assert _strip(c.convert(pdf_bytes, name="doc.pdf")) == _strip(reference)
        assert c.pages.started == 2
        assert not any(isinstance(w.proc, _Process) for w in c.pages._all)
    with Converter(_cfg(parallel_part_pages=4)) as c:  # 6 pages: too short for parts, one worker
        assert _strip(c.convert(pdf_bytes, name="doc.pdf")) == _strip(reference)
        assert c.pages.started == 1


def test_warm_starts_every_worker_with_the_hidden_layer_proof_loaded(monkeypatch):
    """`Converter.warm` (a Triage replica at start, the benchmark before its clock) starts every
    isolation worker and loads the hidden-layer proof's recogniser in each. Before, the first
    hidden-layer page on each worker paid for it (0.8-0.9 s: RapidOCR's import and its model),
    and `pagerouter bench` booked that as OCR-route time. Warmed workers read as before."""
    monkeypatch.delenv(FAULT_ENV, raising=False)
    lines = ["The committee reviewed the quarterly figures and agreed",
             "that the new routing policy reduced the cost of reading",
             "each page. Most documents in the archive were born digital,",
             "so their embedded text could be used directly. Scanned",
             "letters, however, needed optical character recognition."]
    d = pymupdf.open()
    synth.add_scanned_page(d, lines, hidden_text="\n".join(lines), noise=0.02, dpi=150)
    data = d.tobytes()
    cfg = PagerouterConfig.model_validate({"ocr": {"escalation": {"enabled": False}}, "isolation": {"workers": 2}})
    with Converter(cfg) as c:
        answers = c.warm()
        assert c.pages.started == 2 and len(answers) == 2
        assert all(a == {"proof_recogniser": True, "error": None} for a in answers), answers
        assert c.warm() == answers and c.pages.started == 2  # again: the same workers, nothing new
        page = c.convert(data, name="hidden.pdf").pages[0]
    assert page.route == "text_layer" and page.triage.hidden_layer, page.triage.reasons
    assert "5 of 5 sampled lines agree" in page.triage.reasons[0]


def test_a_closed_document_trims_the_heap_only_when_it_leaves_memory_to_give(monkeypatch):
    """malloc_trim walks the whole heap (4.5 ms a close: a third of a served one-page request),
    so a worker trims after a large file or once its memory grew, not after every small one."""
    from pagerouter.isolation import worker

    rss = [300.0]
    trims = []
    monkeypatch.setattr(worker, "_rss_mb", lambda: rss[0])
    monkeypatch.setattr(worker, "release_free_memory", lambda: trims.append(rss[0]))
    trim = worker._Trim(64)
    trim.after_close(200_000)  # a small page: nothing to give back
    rss[0] = 340.0
    trim.after_close(200_000)  # grew 40 MB: not yet
    assert trims == []
    trim.after_close(worker.LARGE_INPUT_BYTES)  # a large upload's bytes: always
    assert trims == [340.0]
    rss[0] = 410.0  # 70 MB over the level after the last trim
    trim.after_close(1000)
    assert trims == [340.0, 410.0]
    every = worker._Trim(0)  # 0: after every document, as before
    every.after_close(1000)
    assert len(trims) == 3


def _walk(work, src, numbers, ocr="auto"):
    async def run():
        return [o.page async for o in work.outcomes(src, numbers, ocr)]
    return asyncio.run(run())


def test_the_walk_named_at_open_is_read_by_the_opening_worker(reference, pdf_bytes, monkeypatch):
    """`open(..., ahead=WalkAhead(pages, ocr))`: the worker that opens the file reads the first
    pages of that walk in the same round trip (a served one-page request paid two: open, then
    walk). The pages are the ones a separate walk reads; another walk than the one named reads
    as always; a crash or a hang in the read-ahead fails that page with the reason, once, and is
    never an open error; a document closed unwalked drops what was read for it."""
    from pagerouter.isolation import WalkAhead
    from pagerouter.isolation import pool as pool_module
    from pagerouter.isolation.pool import IsolatedPages

    monkeypatch.delenv(FAULT_ENV, raising=False)
    # A walk task ends after its time budget (50 ms): on a busy machine the read-ahead task could end
    # after page 2 and leave page 3 to the walk, so what `open` read would depend on the machine's
    # speed. With a generous budget the task ends where the walk named at open ends, on any machine;
    # the budget is what `open` sends the worker, so nothing is read ahead unless the worker reads it.
    monkeypatch.setattr(pool_module, "_TASK_BUDGET_S", 60.0)
    ref = {p.number: p.model_dump(exclude={"timings"}) for p in reference.pages}
    work = IsolatedPages(_cfg())

    def plain(numbers):  # the same walk, opened without naming it
        src = work.open(pdf_bytes, "doc.pdf")
        try:
            return [p.model_dump(exclude={"timings"}) for p in _walk(work, src, numbers)]
        finally:
            src.close()

    try:
        src = work.open(pdf_bytes, "doc.pdf", None, WalkAhead("2-3", "auto"))
        walk, read = work._read_ahead[src.digest]
        assert [o.page.number for o in read] == [2, 3] and walk.finished  # read before any walk was asked for
        pages = _walk(work, src, [2, 3])
        assert [p.model_dump(exclude={"timings"}) for p in pages] == plain([2, 3])
        assert "Page 2 says" in _text(pages[0]) and "Page 3 says" in _text(pages[1])
        assert src.digest not in work._read_ahead
        src.close()

        src = work.open(pdf_bytes, "doc.pdf", None, WalkAhead("1", "auto"))
        assert [p.model_dump(exclude={"timings"}) for p in _walk(work, src, [4])] == plain([4])  # not the walk named
        src.close()
        src = work.open(pdf_bytes, "doc.pdf", None, WalkAhead("1", "auto"))
        src.close()  # never walked
        assert work._read_ahead == {}
        # a selection the caller refuses (past the end) is not read ahead: the caller names the mistake
        src = work.open(pdf_bytes, "doc.pdf", None, WalkAhead("99", "auto"))
        assert src.page_count == PAGES and src.digest not in work._read_ahead
        src.close()

        monkeypatch.setenv(FAULT_ENV, "segv@1")
        src = work.open(pdf_bytes, "doc.pdf", None, WalkAhead("1", "auto"))  # opened: no InputError
        [page] = _walk(work, src, [1])
        assert page.status == "failed"
        assert page.error == "doc.pdf: page 1: worker crashed (SIGSEGV) while reading page 1"
        src.close()
        monkeypatch.setenv(FAULT_ENV, "hang@1")
        # every worker a walk loses (a crash, a page timeout) passes through `_DocumentWalk._lost`: the
        # page the read-ahead hung on is failed after one timeout, not read again for a second one
        lost = []
        lose = pool_module._DocumentWalk._lost

        def counted_lost(walk, w, exc, batch):
            lost.append((walk.numbers[walk.pos], exc.timed_out))
            return lose(walk, w, exc, batch)

        monkeypatch.setattr(pool_module._DocumentWalk, "_lost", counted_lost)
        src = work.open(pdf_bytes, "doc.pdf", None, WalkAhead("1-2", "auto"))
        pages = _walk(work, src, [1, 2])
        assert [p.status for p in pages] == ["failed", "ok"]
        assert pages[0].error == "doc.pdf: page 1: page 1 took longer than 2 s to read (its worker was stopped)"
        assert "Page 2 says" in _text(pages[1])
        assert lost == [(1, True)]  # one page timeout, not a second one for a re-read
        monkeypatch.setattr(pool_module._DocumentWalk, "_lost", lose)
        src.close()
        monkeypatch.delenv(FAULT_ENV)
        src = work.open(pdf_bytes, "doc.pdf", None, WalkAhead(None, "auto"))
        assert [p.model_dump(exclude={"timings"}) for p in _walk(work, src, list(range(1, PAGES + 1)))] == \
            [ref[n] for n in range(1, PAGES + 1)]
        src.close()
    finally:
        work.close()
