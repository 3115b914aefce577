"""The ingress without a Ray cluster: HTTP input parsing, error shapes, page validation,
stream cancellation, config redaction, and the serve/client CLI commands' error paths."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pagerouter.config import PagerouterConfig
from pagerouter.model import Document, Page

REPO = Path(__file__).resolve().parent.parent




# -- HTTP input parsing, CLI ----------------------------------------------------------------
def test_multipart_parser_reads_file_and_fields():
    from pagerouter.service.errors import ApiError
    from pagerouter.service.upload import parse_multipart

    boundary = "XyZ"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"pages\"\r\n\r\n1-2\r\n"
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n"
        f"Content-Type: application/pdf\r\n\r\n"
    ).encode() + b"%PDF-1.7\r\n\x00\xff binary" + f"\r\n--{boundary}--\r\n".encode()
    data, name, fields = parse_multipart(f"multipart/form-data; boundary={boundary}", body)
    assert data == b"%PDF-1.7\r\n\x00\xff binary" and name == "a.pdf" and fields == {"pages": "1-2"}
    with pytest.raises(ApiError) as err:
        parse_multipart("multipart/form-data", body)
    assert err.value.status == 400
    # a raw `file` part without a file name keeps its bytes (Starlette's form() would decode them as text)
    raw = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n").encode() + b"\x00\xff\xfe%PDF" \
        + f"\r\n--{boundary}--\r\n".encode()
    assert parse_multipart(f"multipart/form-data; boundary={boundary}", raw) == (b"\x00\xff\xfe%PDF", None, {})
    two = body.replace(f"--{boundary}--".encode(), (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"more\"; filename=\"b.pdf\"\r\n\r\nB\r\n--{boundary}--"
    ).encode())
    for bad, code in ((two, "bad_request"), (b"not a multipart body", "bad_request")):
        with pytest.raises(ApiError) as err:
            parse_multipart(f"multipart/form-data; boundary={boundary}", bad)
        assert (err.value.status, err.value.code) == (400, code), err.value.message


def test_unexpected_http_error_has_the_documented_shape():
    """A bug (any exception) becomes a 500 `internal` in the one error shape, no traceback."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from pagerouter.service.errors import ApiError
    from pagerouter.deployments.ingress import install_error_handlers

    api = FastAPI()
    install_error_handlers(api)

    @api.get("/boom")
    async def boom():
        def deep():
            raise KeyError("page_bytes")

        deep()

    @api.get("/bad")
    async def bad():
        raise ApiError(400, "bad_pages", "x.pdf: page 0 requested")

    with TestClient(api, raise_server_exceptions=False) as client:
        r = client.get("/boom")
        assert r.status_code == 500
        err = r.json()["error"]
        assert set(err) == {"code", "message", "request_id"} and err["code"] == "internal" and err["request_id"]
        assert "KeyError" in err["message"] and "page_bytes" in err["message"]
        assert "Traceback" not in r.text and "deep()" not in r.text
        assert client.get("/bad").json()["error"]["code"] == "bad_pages"
        missing = client.get("/nowhere")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


class FakeGrpcContext:
    def __init__(self):
        self.code = self.details = None
        self.trailing = []

    def set_code(self, code):
        self.code = code

    def set_details(self, details):
        self.details = details

    def set_trailing_metadata(self, md):
        self.trailing = list(md)


def test_single_page_below_one_is_refused_not_read_as_a_range():
    """Page -3 must not reach parse_pages as "-3" (the range 1-3, i.e. page 1)."""
    import asyncio

    import grpc
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from pagerouter.wire.protos import pagerouter_pb2 as pb
    from pagerouter.deployments.ingress import IngressCore, install_error_handlers

    # No stage handles: a refused page never reaches the graph (a call would fail with 500).
    core = IngressCore(PagerouterConfig().model_dump(), None, None, None, None)
    ctx = FakeGrpcContext()
    reply = asyncio.run(core.ConvertPage(pb.PageRequest(data=b"%PDF-1.7", filename="a.pdf", page=-3), ctx))
    assert ctx.code == grpc.StatusCode.INVALID_ARGUMENT and ("error-code", "bad_pages") in ctx.trailing
    assert "a.pdf" in ctx.details and "page -3" in ctx.details
    assert not reply.HasField("page") and reply.request_id

    api = FastAPI()
    install_error_handlers(api)

    api.router.add_route("/v1/pages", core.convert_page_http, methods=["POST"])  # gets the Request

    with TestClient(api, raise_server_exceptions=False) as client:
        for raw, code in (("-3", "bad_pages"), ("0", "bad_pages"), ("two", "bad_request")):
            r = client.post(f"/v1/pages?page={raw}&filename=a.pdf", content=b"%PDF-1.7")
            assert r.status_code == 422 and r.json()["error"]["code"] == code, r.text
        assert "a.pdf: page -3" in client.post("/v1/pages?page=-3&filename=a.pdf", content=b"x").json()["error"]["message"]


def _triage_items(pages: int | None):
    """What the Triage deployment streams: a head, then `pages` text pages (None: endless)."""
    import itertools

    from pagerouter.wire.items import DocumentHead
    from pagerouter.flow.pipeline import TriageOutcome

    count = pages or 10**6
    yield DocumentHead(Document(source="x.pdf", page_count=count), list(range(1, count + 1)))
    numbers = itertools.count(1) if pages is None else range(1, pages + 1)
    for n in numbers:
        yield TriageOutcome(Page(number=n, status="ok", route="text_layer"))


class FakeTriageStream:
    """Stands in for the Triage deployment's response stream (a DeploymentResponseGenerator)."""

    def __init__(self, items):
        self.items, self.cancelled, self.served = iter(items), False, 0

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            item = next(self.items)
        except StopIteration:
            raise StopAsyncIteration from None
        self.served += 1
        return item

    def cancel(self):
        self.cancelled = True


class FakeTriageHandle:
    def __init__(self, stream: FakeTriageStream):
        self.stream = stream
        self.outcomes = self

    def options(self, stream: bool):
        assert stream
        return self

    def remote(self, *args):
        return self.stream


def test_ingress_cancels_the_triage_stream_when_its_consumer_goes_away():
    """A client that hangs up mid-stream must stop Triage, not leave it walking the document."""
    import asyncio

    from pagerouter.deployments.ingress import IngressCore

    def core(stream):
        return IngressCore(PagerouterConfig().model_dump(), FakeTriageHandle(stream), None, None, None)

    async def hang_up_after_two_lines(stream):
        response = await core(stream)._stream_http(b"%PDF", "x.pdf", None, None, "rid")
        lines = response.body_iterator
        got = [await lines.__anext__(), await lines.__anext__()]
        await lines.aclose()  # what Starlette's finalisation does when the client is gone
        return got

    endless = FakeTriageStream(_triage_items(None))
    got = asyncio.run(hang_up_after_two_lines(endless))
    assert all(b'"type":"page"' in line for line in got)
    assert endless.cancelled and endless.served < 100

    finished = FakeTriageStream(_triage_items(3))  # consumed to the end: nothing to cancel
    doc = asyncio.run(core(finished).collect(b"%PDF", "x.pdf", None, None))
    assert [p.number for p in doc.pages] == [1, 2, 3] and not finished.cancelled
    from pagerouter.wire.items import InputProblem

    problem = FakeTriageStream([InputProblem("bad_input", "x.pdf: not a PDF", "x.pdf")])
    assert asyncio.run(core(problem).collect(b"x", "x.pdf", None, None)).code == "bad_input"
    assert not problem.cancelled


def test_internal_message_drops_remote_tracebacks():
    from pagerouter.service.errors import internal_message

    class FakeRayTaskError(Exception):  # shaped like ray.exceptions.RayTaskError: str() is a traceback
        def __init__(self, cause):
            super().__init__("Traceback (most recent call last):\n  File x.py, line 1\nValueError: bad")
            self.cause = cause

    msg = internal_message(FakeRayTaskError(ValueError("bad page image\nsecond line")))
    assert msg.startswith("internal error (ValueError: bad page image)") and "Traceback" not in msg
    assert "\n" not in internal_message(RuntimeError("a\nb")) and "RuntimeError" in internal_message(RuntimeError())


def test_public_config_redacts_secrets():
    from pagerouter.service.redaction import public_config

    out = public_config(PagerouterConfig())
    assert out["serve"]["http_port"] == 8000

    class Fake:
        def model_dump(self, mode):
            return {"vlm": {"api_key": "sk-123", "url": "http://x"}, "password": ""}

    assert public_config(Fake()) == {"vlm": {"api_key": "***", "url": "http://x"}, "password": ""}


def test_serve_command_refuses_a_busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "pagerouter.cli.main", "serve", "--http-port", str(port)],
                           cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "already in use" in r.stderr and "Traceback" not in r.stderr


def test_client_convert_reports_unreachable_server(mixed_pdf):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = subprocess.run([sys.executable, "-m", "pagerouter.cli.main", "client", "convert", str(mixed_pdf), "--url",
                        f"http://127.0.0.1:{port}", "--timeout", "5"], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 4 and "cannot reach the server" in r.stderr and "Traceback" not in r.stderr  # EXIT_SERVER
