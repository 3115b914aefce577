"""Clients against a busy server: a 429/503 (gRPC UNAVAILABLE / RESOURCE_EXHAUSTED) with a retry hint
is asked again after at least the hint, in every client path (HTTP and gRPC, sync and async,
streams, jobs and their polling, `pagerouter batch --endpoint`), and every file finishes. The
servers are fakes (tests/fake_busy_server.py); the waits are measured where the server sees the
calls arrive. Plus the retry loop's bounds, with an injected sleep."""

from __future__ import annotations

import asyncio
import itertools
import time

import grpc
import pymupdf
import pytest

from pagerouter.clients.errors import PagerouterClientError
from pagerouter.clients.retry import call, parse_retry_after, retryable
from pagerouter.clients.retry_policy import RetryPolicy
from tests.fake_busy_server import (
    FakeBusyGrpcServer,
    FakeBusyHttpServer,
    Plan,
    document,
)

HINT_S = 1.0
BUSY = (503, "overloaded", "1")
TOO_MANY = (429, "too_many_requests", "1")
JOBS_FULL = (503, "jobs_full", "1")
G_BUSY = (grpc.StatusCode.UNAVAILABLE, "overloaded", "1")
G_FULL = (grpc.StatusCode.RESOURCE_EXHAUSTED, "jobs_full", "1")


def assert_waited(plan: Plan, route: str, name: str, calls: int) -> None:
    """The server saw `calls` arrivals of the file on the route, each at least the hint after the last
    (the client adds at most 10 % jitter; the upper bound catches a client that backs off wildly)."""
    times = plan.arrivals(route, name)
    assert len(times) == calls, (route, name, plan.log)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(HINT_S <= g < HINT_S * 1.1 + 1.5 for g in gaps), (route, name, gaps)


def assert_doc(doc, name: str) -> None:
    assert doc.model_dump() == document(name).model_dump()


# ---------------------------------------------------------------------------- the loop itself
class Refuser:
    """Refuses `n` times with `exc`, then answers 'ok'; counts its calls."""

    def __init__(self, n: int, exc: PagerouterClientError):
        self.n, self.exc, self.calls = n, exc, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.n:
            raise self.exc
        return "ok"


def busy(status=503, code="overloaded", hint: float | None = 2.0) -> PagerouterClientError:
    return PagerouterClientError(status, code, "at capacity", "rid", retry_after_s=hint)


def test_waits_at_least_the_hint_each_time():
    slept: list[float] = []
    fn = Refuser(3, busy(hint=2.0))
    assert call(RetryPolicy(max_attempts=4), fn, sleep=slept.append) == "ok"
    assert fn.calls == 4 and len(slept) == 3 and all(2.0 <= s <= 2.2 for s in slept), slept


def test_backs_off_exponentially_without_a_hint():
    slept: list[float] = []
    fn = Refuser(4, busy(hint=None))
    assert call(RetryPolicy(max_attempts=5, backoff_s=0.5, max_backoff_s=3.0), fn, sleep=slept.append) == "ok"
    # 0.5, 1, 2, then capped at 3, each plus up to 0.5 of jitter
    lows = [0.5, 1.0, 2.0, 3.0]
    assert all(lo <= s <= lo + 0.5 for lo, s in zip(lows, slept, strict=True)), slept


def test_gives_up_after_max_attempts_naming_the_last_status():
    slept: list[float] = []
    fn = Refuser(99, busy(429, "too_many_requests", 1.0))
    with pytest.raises(PagerouterClientError) as err:
        call(RetryPolicy(max_attempts=3), fn, sleep=slept.append)
    assert fn.calls == 3 and len(slept) == 2
    e = err.value
    assert (e.status, e.code) == (429, "too_many_requests")
    assert "gave up after 3 attempts (max_attempts 3)" in e.message and "last answer: 429 too_many_requests" in e.message


def test_a_hint_past_the_deadline_gives_up_at_once():
    slept: list[float] = []
    fn = Refuser(99, busy(hint=100.0))
    with pytest.raises(PagerouterClientError) as err:
        call(RetryPolicy(max_attempts=10, deadline_s=30), fn, sleep=slept.append)
    assert fn.calls == 1 and slept == []
    assert "would pass the 30 s retry deadline" in err.value.message and "retry-after 100 s" in err.value.message


@pytest.mark.parametrize("exc", [
    PagerouterClientError(404, "not_found", "no job"),
    PagerouterClientError(504, "timeout", "too slow"),
    PagerouterClientError("RESOURCE_EXHAUSTED", "too_many_pages", "over the limit"),  # no hint: a limit, not a queue
    PagerouterClientError("UNAVAILABLE", "grpc_error", "connection refused"),  # nothing listens there
])
def test_what_no_wait_changes_fails_at_once(exc):
    fn = Refuser(99, exc)
    with pytest.raises(PagerouterClientError) as err:
        call(RetryPolicy(), fn, sleep=lambda s: pytest.fail("slept"))
    assert fn.calls == 1 and err.value is exc and not retryable(exc)


def test_retry_after_forms():
    assert parse_retry_after("3") == 3.0 and parse_retry_after(" 0 ") == 0.0 and parse_retry_after(None) is None
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 27 <= parse_retry_after(future) <= 30
    assert parse_retry_after("soon") is None


# ---------------------------------------------------------------------------- HTTP
def test_http_sync_convert_stream_and_page_finish_after_the_hint(tmp_path):
    from pagerouter.clients.http_client import PagerouterHttpClient

    plan = Plan({"POST /v1/convert": [BUSY], "POST /v1/convert stream": [TOO_MANY]})
    with FakeBusyHttpServer(plan) as url, PagerouterHttpClient(url, timeout=30) as c:
        a = c.convert(b"%PDF-fake", filename="a.pdf")
        b = c.convert_streamed(b"%PDF-fake", filename="b.pdf")
    assert_doc(a, "a.pdf")
    assert_doc(b, "b.pdf")
    assert_waited(plan, "POST /v1/convert", "a.pdf", 2)
    assert_waited(plan, "POST /v1/convert stream", "b.pdf", 2)


def test_http_async_finishes_every_file_after_the_hint():
    from pagerouter.clients.http_client import AsyncPagerouterHttpClient

    plan = Plan({"POST /v1/convert": [BUSY], "POST /v1/convert stream": [TOO_MANY]})
    names = ["a.pdf", "b.pdf", "c.pdf"]

    async def run(url):
        async with AsyncPagerouterHttpClient(url, timeout=30) as c:
            return await asyncio.gather(*(c.convert(b"%PDF", filename=n) for n in names),
                                        c.convert_streamed(b"%PDF", filename="d.pdf"))

    with FakeBusyHttpServer(plan) as url:
        docs = asyncio.run(run(url))
    for doc, name in zip(docs, names + ["d.pdf"], strict=True):
        assert_doc(doc, name)
    for name in names:
        assert_waited(plan, "POST /v1/convert", name, 2)
    assert_waited(plan, "POST /v1/convert stream", "d.pdf", 2)


def test_http_jobs_submit_and_polling_ride_out_refusals():
    from pagerouter.clients.http_client import PagerouterHttpClient

    plan = Plan({"POST /v1/jobs": [JOBS_FULL], "GET /v1/jobs": [TOO_MANY]})
    with FakeBusyHttpServer(plan) as url, PagerouterHttpClient(url, timeout=30) as c:
        status = c.submit_job(b"%PDF", filename="long.pdf")
        final = c.wait_job(status.id, poll_s=0.05, timeout=30)
        result = c.job_result(status.id)
    assert final.state == "done" and not result.partial
    assert_doc(result.document, "long.pdf")
    assert_waited(plan, "POST /v1/jobs", "long.pdf", 2)
    times = plan.arrivals("GET /v1/jobs", "long.pdf")  # refused, running, done, the result's status
    assert len(times) == 4 and times[1] - times[0] >= HINT_S


def test_http_gives_up_within_max_attempts_with_the_last_status():
    from pagerouter.clients.http_client import PagerouterHttpClient

    plan = Plan({"POST /v1/convert": [(503, "overloaded", "0")] * 5})
    with (FakeBusyHttpServer(plan) as url, PagerouterHttpClient(url, timeout=30, retry=RetryPolicy(max_attempts=3)) as c,
          pytest.raises(PagerouterClientError) as err):
        c.convert(b"%PDF", filename="a.pdf")
    assert err.value.status == 503 and "last answer: 503 overloaded" in err.value.message
    assert len(plan.arrivals("POST /v1/convert", "a.pdf")) == 3


def test_batch_endpoint_finishes_every_file_after_the_hint(tmp_path):
    """`pagerouter batch --endpoint` (pagerouter/batch/runner.py's HttpBackend uses PagerouterHttpClient):
    every file done, none failed, though the server refused each one first."""
    from pagerouter.batch.journal import read_records
    from pagerouter.cli.main import main

    src = tmp_path / "in"
    src.mkdir()
    for name in ("x.pdf", "y.pdf"):
        doc = pymupdf.open()
        doc.new_page().insert_text((72, 72), name)
        doc.save(src / name)
    plan = Plan({"POST /v1/convert": [BUSY]})
    out = tmp_path / "out"
    with FakeBusyHttpServer(plan) as url:
        assert main(["batch", str(src), "-o", str(out), "--endpoint", url, "-q"]) == 0
    recs = read_records(out)
    assert sorted((r["status"], r["mode"]) for r in recs) == [("done", "http"), ("done", "http")], recs
    for name in ("x.pdf", "y.pdf"):
        sent = next(n for r, n, _, _ in plan.log if n.endswith(name))
        assert_waited(plan, "POST /v1/convert", sent, 2)
        assert (out / name.replace(".pdf", ".md")).read_text().strip() == f"text of {sent}"


# ---------------------------------------------------------------------------- gRPC
@pytest.mark.slow  # four refusals of one second each
def test_grpc_sync_convert_stream_and_jobs_finish_after_the_hint():
    from pagerouter.clients.grpc_client import PagerouterGrpcClient

    plan = Plan({"ConvertDocument": [G_BUSY], "StreamDocument": [G_BUSY], "SubmitJob": [G_FULL],
                 "GetJob": [(grpc.StatusCode.UNAVAILABLE, "overloaded", "1")]})
    with FakeBusyGrpcServer(plan) as target, PagerouterGrpcClient(target, timeout=30) as c:
        a = c.convert(b"%PDF", filename="a.pdf")
        b = c.convert_streamed(b"%PDF", filename="b.pdf")
        job = c.submit_job(b"%PDF", filename="c.pdf")
        final = c.wait_job(job.id, poll_s=0.05, timeout=30)
        result = c.job_result(job.id)
    assert_doc(a, "a.pdf")
    assert_doc(b, "b.pdf")
    assert final.state == "done"
    assert_doc(result.document, "c.pdf")
    assert_waited(plan, "ConvertDocument", "a.pdf", 2)
    assert_waited(plan, "StreamDocument", "b.pdf", 2)
    assert_waited(plan, "SubmitJob", "c.pdf", 2)
    polls = plan.arrivals("GetJob", "c.pdf")
    assert len(polls) == 3 and polls[1] - polls[0] >= HINT_S


def test_grpc_async_finishes_every_file_after_the_hint():
    from pagerouter.clients.grpc_client import AsyncPagerouterGrpcClient

    plan = Plan({"ConvertDocument": [G_BUSY], "StreamDocument": [G_FULL], "SubmitJob": [G_FULL], "GetJob": [G_BUSY]})

    async def job(c, name):
        status = await c.submit_job(b"%PDF", filename=name)
        await c.wait_job(status.id, poll_s=0.05, timeout=30)
        return (await c.job_result(status.id)).document

    async def run(target):
        async with AsyncPagerouterGrpcClient(target, timeout=30) as c:
            return await asyncio.gather(c.convert(b"%PDF", filename="a.pdf"), c.convert(b"%PDF", filename="b.pdf"),
                                        c.convert_streamed(b"%PDF", filename="s.pdf"), job(c, "j.pdf"))

    with FakeBusyGrpcServer(plan) as target:
        docs = asyncio.run(run(target))
    for doc, name in zip(docs, ["a.pdf", "b.pdf", "s.pdf", "j.pdf"], strict=True):
        assert_doc(doc, name)
    assert_waited(plan, "ConvertDocument", "a.pdf", 2)
    assert_waited(plan, "ConvertDocument", "b.pdf", 2)
    assert_waited(plan, "StreamDocument", "s.pdf", 2)
    assert_waited(plan, "SubmitJob", "j.pdf", 2)
    polls = plan.arrivals("GetJob", "j.pdf")
    assert len(polls) == 3 and polls[1] - polls[0] >= HINT_S


def test_grpc_limit_without_a_hint_is_not_retried():
    """RESOURCE_EXHAUSTED `too_many_pages` (no retry-after): the file is over a limit; one call, its error."""
    from pagerouter.clients.grpc_client import PagerouterGrpcClient

    plan = Plan({"ConvertDocument": [(grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_pages", None)] * 3})
    with (FakeBusyGrpcServer(plan) as target, PagerouterGrpcClient(target, timeout=30) as c,
          pytest.raises(PagerouterClientError) as err):
        c.convert(b"%PDF", filename="big.pdf")
    assert (err.value.status, err.value.code) == ("RESOURCE_EXHAUSTED", "too_many_pages")
    assert len(plan.arrivals("ConvertDocument", "big.pdf")) == 1
