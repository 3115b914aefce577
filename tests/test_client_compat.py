"""Forward compatibility: a newer server adds fields (at document, page and block level, and to job
statuses); this client reads its replies all the same, with every field it knows intact, while the
models themselves stay strict (`extra="forbid"`) for the server side. The server is a fake
(tests/fake_busy_server.py)."""

from __future__ import annotations

import asyncio

import httpx
import pydantic
import pytest

from pagerouter.model import Document
from tests.fake_busy_server import (
    NEW_FIELD,
    FakeBusyHttpServer,
    Plan,
    document,
    with_new_fields,
)


def test_http_client_reads_a_reply_with_unknown_fields_at_every_level():
    from pagerouter.clients.http_client import PagerouterHttpClient

    with FakeBusyHttpServer(Plan(extra=True)) as url, PagerouterHttpClient(url, timeout=30) as c:
        body = httpx.post(f"{url}/v1/convert", params={"filename": "a.pdf"}, content=b"%PDF").json()
        doc = c.convert(b"%PDF", filename="a.pdf")
        streamed = c.convert_streamed(b"%PDF", filename="b.pdf")
        job = c.submit_job(b"%PDF", filename="c.pdf")
        final = c.wait_job(job.id, poll_s=0.01, timeout=30)
        result = c.job_result(job.id)
    # the reply really carries the new field at each level ...
    assert NEW_FIELD.keys() <= body.keys() and NEW_FIELD.keys() <= body["pages"][0].keys()
    assert NEW_FIELD.keys() <= body["pages"][0]["blocks"][0].keys()
    # ... and what the client knows comes through unchanged
    assert doc == document("a.pdf") and streamed == document("b.pdf") and result.document == document("c.pdf")
    assert (job.source, job.state, final.state) == ("c.pdf", "queued", "done")


def test_async_http_client_reads_unknown_fields():
    from pagerouter.clients.http_client import AsyncPagerouterHttpClient

    async def run(url):
        async with AsyncPagerouterHttpClient(url, timeout=30) as c:
            return await c.convert(b"%PDF", filename="a.pdf"), await c.convert_streamed(b"%PDF", filename="b.pdf")

    with FakeBusyHttpServer(Plan(extra=True)) as url:
        doc, streamed = asyncio.run(run(url))
    assert doc == document("a.pdf") and streamed == document("b.pdf")


@pytest.mark.parametrize("level", ["document", "page", "block"])
def test_the_models_stay_strict_for_the_server(level):
    """The same reply is refused by the model itself: only the clients' reading is lenient."""
    from pagerouter.clients.replies import parse_json

    body = pydantic.TypeAdapter(dict).dump_json(with_new_fields(document("a.pdf").model_dump(mode="json"), (level,)))
    with pytest.raises(pydantic.ValidationError, match="extra_forbidden"):
        Document.model_validate_json(body)
    assert parse_json(Document, body) == document("a.pdf")


def test_grpc_replies_skip_unknown_fields():
    """protobuf's own rule: a field number this client's protos lack is skipped on parse."""
    from pagerouter.wire import proto_model
    from pagerouter.wire.protos import pagerouter_pb2 as pb

    wire = proto_model.document_to_proto(document("a.pdf")).SerializeToString()
    newer = wire + bytes([0xB8, 0x3E, 0x07])  # field 999 (varint 7): one this schema does not have
    assert proto_model.document_from_proto(pb.Document.FromString(newer)) == document("a.pdf")
