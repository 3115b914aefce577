"""The job store and scheduler without Ray: atomic status, pages once each, the resume plan after
a run dies, leases, cancel, TTL, and a scheduler running jobs through a stand-in conversion."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from pagerouter.config.jobs import JobsConfig
from pagerouter.jobs import JobNotFound, JobScheduler, JobStore, LeaseLost, job_document, page_numbers_text
from pagerouter.jobs import store as store_mod
from pagerouter.model import Document, Page
from pagerouter.wire.items import DocumentHead, DocumentTail, InputProblem


def _page(n: int, route: str = "text_layer", status: str = "ok") -> dict:
    return Page(number=n, status=status, route=route, blocks=[]).model_dump(mode="json")


def _head(n: int) -> dict:
    return Document(source="long.pdf", page_count=n).model_dump(mode="json")


def test_create_get_and_unknown_ids(tmp_path):
    store = JobStore(tmp_path)
    job = store.create(b"%PDF-1.7 data", "long.pdf", {"format": "md", "password": "s3cret"})
    assert len(job.id) == 32 and job.state == "queued"
    assert store.get(job.id) == job and store.input(job.id) == b"%PDF-1.7 data"
    assert store.options(job.id) == {"format": "md", "password": "s3cret"}
    assert (os.stat(tmp_path / job.id / "options.json").st_mode & 0o777) == 0o600  # may hold a password
    for bad in ("0" * 32, "../etc", "x" * 32, ""):
        with pytest.raises(JobNotFound):
            store.get(bad)
    assert store.pending() == 1 and store.claimable() == [job.id]


def test_status_writes_are_atomic_and_leave_no_temp_files(tmp_path, monkeypatch):
    store = JobStore(tmp_path)
    job = store.create(b"x", "a.pdf", {})
    store.claim(job.id, "me", 30)
    real_replace = os.replace

    def crash(src, dst):  # the process dies between writing the temp file and the rename
        raise OSError("power cut")

    monkeypatch.setattr(store_mod.os, "replace", crash)
    with pytest.raises(OSError):
        store.heartbeat(job.id, "me", 30)
    monkeypatch.setattr(store_mod.os, "replace", real_replace)
    assert store.get(job.id).state == "running"  # the old status, whole
    assert not [p for p in (tmp_path / job.id).iterdir() if p.name.endswith(".tmp")]


def test_resume_plan_after_a_run_dies_mid_write(tmp_path):
    store = JobStore(tmp_path)
    job = store.create(b"x", "long.pdf", {})
    assert store.remaining(job.id) is None  # never opened: everything
    store.claim(job.id, "first", lease_s=10, now=1000)
    store.set_head(job.id, _head(6), [1, 2, 3, 4, 5, 6], "first")
    for n in (1, 2, 3):
        store.add_page(job.id, _page(n), "first")
    with open(tmp_path / job.id / "pages.jsonl", "ab") as f:  # killed inside the write of page 4
        f.write(b'{"number": 4, "status": "o')
    assert store.remaining(job.id) == [4, 5, 6]
    # the lease still runs: nobody else may take it
    assert store.claim(job.id, "second", lease_s=10, now=1005) is None
    status = store.claim(job.id, "second", lease_s=10, now=1011)
    assert status.owner == "second" and status.runs == 2 and status.pages_done == 3
    assert status.pages_by_route == {"text_layer": 3} and "lease ran out" in status.errors[-1]
    with pytest.raises(LeaseLost):  # the first owner wakes up late: its page does not count
        store.add_page(job.id, _page(4), "first")
    for n in (4, 5, 6):
        store.add_page(job.id, _page(n), "second")
    store.add_page(job.id, _page(3), "second")  # a duplicate line is never a second page
    pages = store.pages(job.id)
    assert [p["number"] for p in pages] == [1, 2, 3, 4, 5, 6]
    lines = (tmp_path / job.id / "pages.jsonl").read_bytes().split(b"\n")
    assert all(json.loads(line) for line in lines if line)  # the torn line was cut, not continued
    assert store.remaining(job.id) == []
    assert page_numbers_text([4, 5, 6, 9, 11, 12]) == "4-6,9,11-12"


def test_a_job_whose_runs_keep_dying_is_failed_not_resumed_forever(tmp_path):
    store = JobStore(tmp_path)
    job = store.create(b"x", "poison.pdf", {})
    now = 1000.0
    for run in (1, 2):
        assert store.claim(job.id, f"replica{run}", lease_s=5, now=now, max_runs=2).runs == run
        now += 6  # the replica died: its lease runs out
    assert store.claim(job.id, "replica3", lease_s=5, now=now, max_runs=2) is None
    status = store.get(job.id)
    assert status.state == "failed" and status.finished_at == now and store.claimable(now=now + 100) == []
    assert status.errors[0] == ("poison.pdf: 2 runs of this job stopped without finishing (its replica died each "
                                "time); not resumed again")


def test_cancel_finish_and_ttl(tmp_path):
    store = JobStore(tmp_path)
    a, b = store.create(b"x", "a.pdf", {}), store.create(b"y", "b.pdf", {})
    store.claim(a.id, "me", 30)
    assert store.cancel(a.id).state == "cancelled"
    with pytest.raises(LeaseLost):
        store.heartbeat(a.id, "me", 30)
    store.claim(b.id, "me", 30)
    done = store.finish(b.id, "me", "done")
    assert store.cancel(b.id).state == "done"  # a finished job stays finished
    assert store.pending() == 0 and store.claimable() == []
    assert store.expire(ttl_s=60, now=done.finished_at + 30) == []
    assert sorted(store.expire(ttl_s=60, now=done.finished_at + 61)) == sorted([a.id, b.id])
    assert store.ids() == [] and not any(tmp_path.iterdir())
    with pytest.raises(JobNotFound):
        store.get(a.id)


# ---------------------------------------------------------------------------------- scheduler
def _fake_convert(n_pages: int, delay: float, calls: list, fail_at: int | None = None):
    """A stand-in conversion: opens an n-page document and yields the selected pages."""

    async def convert(data, source, options, selection):
        numbers = list(range(1, n_pages + 1))
        if selection:
            numbers = [int(x) for part in selection.split(",") for x in _expand(part)]
        calls.append(selection)
        if data == b"bad":
            yield InputProblem("bad_input", f"{source}: not a PDF", source)
            return
        yield DocumentHead(Document(source=source, page_count=n_pages), numbers)
        for n in numbers:
            await asyncio.sleep(delay)
            if n == fail_at:
                raise RuntimeError("stage died\nwith a traceback")
            yield Page(number=n, status="ok", route="ocr", blocks=[])
        yield DocumentTail(engines={"fake": "1"})

    return convert


def _expand(part: str) -> list[int]:
    lo, _, hi = part.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def _cfg(**kw) -> JobsConfig:
    return JobsConfig(**{"lease_s": 1.0, "heartbeat_s": 0.2, "poll_s": 0.05, **kw})


async def _until(pred, timeout=10.0):
    t0 = time.monotonic()
    while not pred():
        assert time.monotonic() - t0 < timeout, "timed out"
        await asyncio.sleep(0.02)


def test_scheduler_runs_queued_jobs_one_at_a_time_and_fails_bad_ones(tmp_path):
    async def main():
        store, calls = JobStore(tmp_path), []
        sched = JobScheduler(store, _cfg(), _fake_convert(3, 0.01, calls))
        good, bad = store.create(b"ok", "good.pdf", {}), store.create(b"bad", "bad.pdf", {})
        sched.start()
        await _until(lambda: all(store.get(j.id).finished for j in (good, bad)))
        await sched.stop()
        return store, good, bad, calls

    store, good, bad, calls = asyncio.run(main())
    doc, status = job_document(store, good.id)
    assert status.state == "done" and status.pages_done == 3 and status.pages_by_route == {"ocr": 3}
    assert [p.number for p in doc.pages] == [1, 2, 3] and doc.engines == {"fake": "1"}
    failed = store.get(bad.id)
    assert failed.state == "failed" and failed.errors == ["bad.pdf: not a PDF"]
    assert calls == [None, None]


def test_a_run_that_dies_is_resumed_without_rereading_or_duplicating_pages(tmp_path):
    async def main():
        store, calls = JobStore(tmp_path), []
        job = store.create(b"ok", "long.pdf", {})
        first = JobScheduler(store, _cfg(), _fake_convert(6, 0.05, calls), owner="first")
        first.start()
        await _until(lambda: store.get(job.id).pages_done >= 2)
        # the replica dies: its tasks vanish without a word (no finish, no more heartbeats)
        for t in [first._loop_task, *first.tasks.values()]:
            t.cancel()
        await asyncio.sleep(0.1)
        done_before = [p["number"] for p in store.pages(job.id)]
        second = JobScheduler(store, _cfg(), _fake_convert(6, 0.01, calls), owner="second")
        second.start()
        await _until(lambda: store.get(job.id).finished)
        await second.stop()
        return store, job, calls, done_before

    store, job, calls, done_before = asyncio.run(main())
    status = store.get(job.id)
    assert status.state == "done" and status.runs == 2 and status.pages_done == 6
    assert [p["number"] for p in store.pages(job.id)] == [1, 2, 3, 4, 5, 6]
    lines = [ln for ln in (tmp_path / job.id / "pages.jsonl").read_text().splitlines() if ln]
    assert len(lines) == 6  # every page exactly once
    assert calls[0] is None and calls[1] == page_numbers_text(list(range(len(done_before) + 1, 7)))


def test_cancel_stops_the_conversion_and_a_stage_error_fails_the_job_in_one_line(tmp_path):
    async def main():
        store, calls = JobStore(tmp_path), []
        closed = []
        inner = _fake_convert(50, 0.05, calls)

        async def convert(*args):
            try:
                async for item in inner(*args):
                    yield item
            finally:
                closed.append(True)  # the ingress's convert_items cancels Triage here

        sched = JobScheduler(store, _cfg(), convert)
        job = store.create(b"ok", "long.pdf", {})
        sched.start()
        await _until(lambda: store.get(job.id).pages_done >= 1)
        store.cancel(job.id)  # from another replica: seen at the next page or heartbeat
        await _until(lambda: not sched.tasks)
        n = store.get(job.id).pages_done
        assert n == len(store.pages(job.id))  # the cancelled status counts exactly the pages kept
        await asyncio.sleep(0.3)
        assert store.get(job.id).pages_done == n < 50 and closed == [True]
        sched.convert = _fake_convert(4, 0.01, calls, fail_at=3)
        broken = store.create(b"ok", "broken.pdf", {})
        sched.kick()
        await _until(lambda: store.get(broken.id).finished)
        await sched.stop()
        return store, job, broken

    store, job, broken = asyncio.run(main())
    assert store.get(job.id).state == "cancelled"
    status = store.get(broken.id)
    assert status.state == "failed" and status.errors == ["broken.pdf: RuntimeError: stage died"]
    assert status.pages_done == 2  # the pages before the failure are kept


def test_jobs_config_is_checked():
    with pytest.raises(ValueError, match="heartbeat_s"):
        JobsConfig(lease_s=5, heartbeat_s=5)
    with pytest.raises(ValueError):
        JobsConfig(unknown=1)
    assert JobsConfig().dir.endswith(str(Path("pagerouter") / "jobs"))
