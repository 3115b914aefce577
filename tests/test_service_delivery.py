"""pagerouter.service without Ray: one request's conversion and its delivery (whole, NDJSON,
gRPC stream), always ending with the document or an error naming the pages not delivered; and
the jobs desk over a job directory. Stage handles and triage streams are fakes here."""

from __future__ import annotations

import asyncio
import json
import time

import grpc
import pytest

from pagerouter.config import PagerouterConfig
from pagerouter.config.jobs import JobsConfig
from pagerouter.flow.options import RequestOptions
from pagerouter.flow.pipeline import TriageOutcome
from pagerouter.model import Document, Page
from pagerouter.wire.items import DocumentHead, DocumentTail, InputProblem
from tests.test_ingress_local import FakeGrpcContext


def _head(n: int) -> DocumentHead:
    return DocumentHead(Document(source="x.pdf", page_count=n), list(range(1, n + 1)))


async def _items(n: int, *, then=None):
    """A conversion's items: head, pages 1..n, tail; `then` replaces the tail ("hang" or an exception)."""
    yield _head(n + (1 if then else 0))
    for k in range(1, n + 1):
        yield Page(number=k, status="ok", route="text_layer")
    if then == "hang":
        await asyncio.Event().wait()
    elif then is not None:
        raise then
    yield DocumentTail(engines={"fake": "1"})


def test_collect_document_whole_or_the_problem_or_a_timeout_naming_the_pages_left():
    from pagerouter.service.delivery import collect_document

    doc = asyncio.run(collect_document(_items(2), "x.pdf", None, None))
    assert [p.number for p in doc.pages] == [1, 2] and doc.engines == {"fake": "1"}

    async def problem():
        yield InputProblem("bad_input", "x.pdf: not a PDF", "x.pdf")

    assert asyncio.run(collect_document(problem(), "x.pdf", None, None)).code == "bad_input"
    # the third page never comes: the request's own deadline ends it, naming page 3
    late = asyncio.run(collect_document(_items(2, then="hang"), "x.pdf", time.monotonic() + 0.3, 0.3))
    assert late.code == "timeout" and late.message.endswith("; pages not converted: 3")


def test_ndjson_lines_end_with_the_document_or_an_error_line_and_release_once():
    from pagerouter.service.delivery import ndjson_lines

    async def lines(items):
        released = []
        head = await items.__anext__()
        out = [json.loads(b) async for b in ndjson_lines(items, head, "x.pdf", "rid", None, None,
                                                         lambda: released.append(1))]
        return out, released

    out, released = asyncio.run(lines(_items(2)))
    assert [o["type"] for o in out] == ["page", "page", "document"] and released == [1]
    assert out[-1]["document"]["engines"] == {"fake": "1"}

    out, released = asyncio.run(lines(_items(1, then=ValueError("engine broke\nsecond line"))))
    assert [o["type"] for o in out] == ["page", "error"] and released == [1]
    err = out[-1]
    assert err["error"]["code"] == "internal" and err["error"]["request_id"] == "rid" and err["missing_pages"] == [2]
    assert "ValueError: engine broke" in err["error"]["message"] and "pages not delivered: 2" in err["error"]["message"]


def test_grpc_stream_replies_set_the_status_and_name_missing_pages():
    from pagerouter.service.delivery import grpc_stream_replies

    async def replies(items, ctx):
        return [r async for r in grpc_stream_replies(items, "x.pdf", ctx, "rid", None, None)]

    ctx = FakeGrpcContext()
    out = asyncio.run(replies(_items(2), ctx))
    assert [r.WhichOneof("item") for r in out] == ["page", "page", "summary"] and ctx.code is None

    async def problem():
        yield InputProblem("bad_pages", "x.pdf: no page 9", "x.pdf")

    ctx = FakeGrpcContext()
    out = asyncio.run(replies(problem(), ctx))
    assert len(out) == 1 and out[0].WhichOneof("item") is None and out[0].request_id == "rid"
    assert ctx.code == grpc.StatusCode.INVALID_ARGUMENT and ctx.trailing == [("error-code", "bad_pages")]

    ctx = FakeGrpcContext()
    out = asyncio.run(replies(_items(1, then=RuntimeError("boom")), ctx))
    assert [r.WhichOneof("item") for r in out] == ["page", None]
    assert ctx.code == grpc.StatusCode.INTERNAL and "pages not delivered: 2" in ctx.details


class FakeWalk:
    def __init__(self, items):
        self.items, self.finished, self.cancelled = items, False, False

    async def head(self):
        first = self.items[0]
        self.finished = isinstance(first, InputProblem)
        return first

    async def outcomes(self):
        for outcome in self.items[1:]:
            yield outcome
        self.finished = True

    def cancel(self):
        self.cancelled = True


def _convert(walk, wait=None, opts=None):
    from pagerouter.service.served_conversion import conversion_items

    started, done = [], []

    def start_walk():
        started.append(1)
        return walk

    async def run():
        items = conversion_items(PagerouterConfig(), "x.pdf", 10, opts or RequestOptions(), wait, None,
                                 start_walk=start_walk, ocr_calls=lambda used, wait: None, concurrency=2,
                                 page_done=done.append)
        return [item async for item in items]

    return asyncio.run(run()), started, done


def test_served_conversion_refuses_a_bad_wait_before_the_walk_and_always_cancels_it():
    walk = FakeWalk([_head(2)] + [TriageOutcome(Page(number=n, status="ok", route="text_layer")) for n in (1, 2)])
    out, started, done = _convert(walk)
    assert isinstance(out[0], DocumentHead) and [p.number for p in out[1:-1]] == [1, 2]
    assert "pymupdf" in out[-1].engines and [p.number for p in done] == [1, 2] and walk.cancelled

    out, started, _ = _convert(FakeWalk([_head(1)]), wait="forever")
    assert out[0].code == "bad_request" and "forever" in out[0].message and not started

    locked = InputProblem("bad_input", "x.pdf: encrypted (--password)", "x.pdf", None, "encrypted (--password)")
    walk = FakeWalk([locked])
    out, _, done = _convert(walk)
    assert len(out) == 1 and "`password` field" in out[0].message and not done and walk.cancelled


def test_job_desk_submits_finds_cancels_and_bounds_the_queue(tmp_path):
    from pagerouter.jobs import JobNotFound
    from pagerouter.service.job_desk import JobDesk, JobsFull, job_options

    def convert(data, source, opts, selection):
        raise AssertionError("the scheduler is not started in this test")

    desk = JobDesk(JobsConfig(dir=str(tmp_path), max_queued=2), convert)  # not started: nothing runs

    async def scenario():
        first = await desk.submit(b"%PDF-1.7", "a.pdf", RequestOptions(format="md"))
        await desk.submit(b"%PDF-1.7", "b.pdf", RequestOptions())
        with pytest.raises(JobsFull, match="2 jobs are already waiting"):
            await desk.submit(b"%PDF-1.7", "c.pdf", RequestOptions())
        assert (await desk.status(first.id)).source == "a.pdf"
        assert await desk.result_format(first.id, None) == "md" and await desk.result_format(first.id, "JSON") == "json"
        with pytest.raises(ValueError, match="'pdf' is not one of json, md"):
            await desk.result_format(first.id, "pdf")
        assert (await desk.cancel(first.id)).state == "cancelled"
        doc, status = await desk.result(first.id)
        assert doc is None and status.state == "cancelled"
        with pytest.raises(JobNotFound):
            await desk.status("no-such-job")

    asyncio.run(scenario())
    kept = job_options(RequestOptions(stream=True, pages="1-3"))
    assert "stream" not in kept and kept["wait"] == "bulk" and kept["pages"] == "1-3"


def test_document_body_is_json_or_markdown():
    from pagerouter.service.document_body import document_body

    doc = Document(source="x.pdf", page_count=0)
    text, media = asyncio.run(document_body(doc, "json", PagerouterConfig().output))
    assert media == "application/json" and Document.model_validate_json(text).source == "x.pdf"
    assert asyncio.run(document_body(doc, "md", PagerouterConfig().output))[1] == "text/markdown"


class FakeStream:
    """Stands in for a Triage replica's response stream: items, then `dies` raised if given."""

    def __init__(self, items, dies=None):
        self.items, self.dies, self.cancelled = list(items), dies, False

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.items:
            return self.items.pop(0)
        if self.dies is not None:
            raise self.dies
        raise StopAsyncIteration

    def cancel(self):
        self.cancelled = True


class FakeReplicaDied(Exception):
    pass


def _outcome(n):
    return TriageOutcome(Page(number=n, status="ok", route="text_layer"))


def test_a_walk_whose_replica_died_resumes_once_from_the_pages_not_sent():
    from pagerouter.service.resumable_walk import ResumableWalk

    asked = []

    def resumes(selection):
        asked.append(selection)
        return FakeStream([_head(2), *(_outcome(n) for n in (2, 3))])

    def dies_again(selection):
        asked.append(selection)
        return FakeStream([_head(2)], dies=FakeReplicaDied())

    async def pages(first, walk):
        w = ResumableWalk(first, walk, "x.pdf", resumable=lambda exc: isinstance(exc, FakeReplicaDied))
        await w.head()
        return [o.page.number async for o in w.outcomes()], w

    got, w = asyncio.run(pages(FakeStream([_head(3), _outcome(1)], dies=FakeReplicaDied()), resumes))
    assert got == [1, 2, 3] and asked == ["2-3"] and w.finished
    w.cancel()
    assert not w.stream.cancelled  # a finished walk has nothing to cancel
    with pytest.raises(FakeReplicaDied):  # a second death fails the request
        asyncio.run(pages(FakeStream([_head(3), _outcome(1)], dies=FakeReplicaDied()), dies_again))
    asked.clear()
    with pytest.raises(ValueError):  # not a death: no second try
        asyncio.run(pages(FakeStream([_head(3)], dies=ValueError("bad page")), resumes))
    assert asked == []
