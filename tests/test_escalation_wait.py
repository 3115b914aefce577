"""Per-request escalation waits without Ray: config bounds, resolution and capping, `ocr_flow`
with a slow fake escalation tier, and the wait fields over HTTP and gRPC of the ingress core."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest
from pydantic import ValidationError

from pagerouter.config import PagerouterConfig
from pagerouter.flow.escalation_wait import resolve_escalation_wait
from pagerouter.model import Block, CheckResult, Document, Page, TriageDecision
from pagerouter.flow.pipeline import ocr_flow
from pagerouter.common.stages import LayoutResult, OcrCalls, OcrTask, Reading

INTERACTIVE_S, BULK_S, SLOW_ESCALATION_S = 0.1, 3.0, 0.5


def _cfg(**serve) -> PagerouterConfig:
    base = {"escalation_timeout_s": INTERACTIVE_S, "escalation_timeout_bulk_s": BULK_S, "page_timeout_s": 10}
    return PagerouterConfig.model_validate({"serve": {**base, **serve}})


def _task(number: int = 1) -> OcrTask:
    return OcrTask(source="scan.pdf", number=number, width=200, height=100, decision=TriageDecision(route="ocr"),
                   image=np.full((100, 200, 3), 255, np.uint8), scale=1.0, page_bytes=b"", ink=0.05)


def _block(text: str, engine: str) -> Block:
    return Block(text=text, role="paragraph", bbox=(10, 10, 190, 40), page=1, engine=engine, route="ocr",
                 confidence=0.9)


async def _fake_layout(task: OcrTask) -> LayoutResult:
    return LayoutResult(rotation=0, regions=[])


async def _fake_flagged_read(task: OcrTask, layout: LayoutResult) -> Reading:
    """A first reading its own reader doubts, so the page is escalated."""
    return Reading(blocks=[_block("first reading", "fake-small")], engine="fake-small",
                   checks=[CheckResult(name="fake_doubt", passed=False, reason="the fake reader doubts itself")])


class FakeSlowEscalation:
    """Stands in for a LargeReader that answers only after SLOW_ESCALATION_S (a cold start)."""

    def __init__(self, delay_s: float = SLOW_ESCALATION_S):
        self.delay_s, self.calls = delay_s, 0

    async def __call__(self, task: OcrTask, first: Reading) -> Reading:
        self.calls += 1
        await asyncio.sleep(self.delay_s)
        return Reading(blocks=[_block("escalated reading", "fake-large")], engine="fake-large",
                       checks=[CheckResult(name="fake_ok", passed=True)])


def _calls(escalate, wait=None) -> OcrCalls:
    calls = OcrCalls(layout=_fake_layout, read=_fake_flagged_read, escalate=escalate)
    if wait is not None:
        calls.escalation_timeout_s, calls.escalation_wait = wait.seconds, wait.why
    return calls


# -- config ---------------------------------------------------------------------------------
def test_config_bounds_defaults_and_validation():
    s = PagerouterConfig().serve
    assert (s.escalation_timeout_s, s.escalation_timeout_bulk_s) == (120, 900)
    assert s.page_timeout_s > max(s.escalation_timeout_s, s.escalation_timeout_bulk_s)
    with pytest.raises(ValidationError, match="page_timeout_s .* must exceed"):
        PagerouterConfig.model_validate({"serve": {"escalation_timeout_bulk_s": 900, "page_timeout_s": 900}})
    with pytest.raises(ValidationError, match="escalation_timeout_bulk_s .* must be >="):
        PagerouterConfig.model_validate({"serve": {"escalation_timeout_s": 300, "escalation_timeout_bulk_s": 200}})
    with pytest.raises(ValidationError):  # extra="forbid" still holds
        PagerouterConfig.model_validate({"serve": {"escalation_timeout_forever_s": 1}})


def test_resolve_wait_modes_and_caps():
    s = _cfg().serve
    assert resolve_escalation_wait(s).seconds == INTERACTIVE_S
    assert resolve_escalation_wait(s, "").why == "interactive wait"
    bulk = resolve_escalation_wait(s, "bulk")
    assert (bulk.seconds, bulk.mode, bulk.why) == (BULK_S, "bulk", "bulk wait")
    shorter = resolve_escalation_wait(s, "bulk", 1.5)
    assert shorter.seconds == 1.5 and "requested" in shorter.why
    capped = resolve_escalation_wait(s, "interactive", 3600)
    assert capped.seconds == INTERACTIVE_S and "capped" in capped.why
    assert resolve_escalation_wait(s, "bulk", 3600).seconds == BULK_S
    for bad_mode in ("forever", "BULKY"):
        with pytest.raises(ValueError, match="wait must be interactive or bulk"):
            resolve_escalation_wait(s, bad_mode)
    for bad_s in (0, -5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="escalation_wait_s must be a positive"):
            resolve_escalation_wait(s, "bulk", bad_s)


# -- ocr_flow -------------------------------------------------------------------------------
def test_slow_escalation_times_out_at_the_interactive_bound():
    cfg, fake = _cfg(), FakeSlowEscalation()
    t0 = time.perf_counter()
    reading = asyncio.run(ocr_flow(_task(), _calls(fake, resolve_escalation_wait(cfg.serve, "interactive")), cfg))
    assert time.perf_counter() - t0 < SLOW_ESCALATION_S
    assert fake.calls == 1 and reading.engine == "fake-small"
    check = next(c for c in reading.checks if c.name == "escalation_timeout")
    assert not check.passed and check.threshold == INTERACTIVE_S
    assert f"within {INTERACTIVE_S:g} s (interactive wait)" in check.reason


def test_no_wait_set_uses_the_configs_interactive_bound():
    cfg = _cfg()
    reading = asyncio.run(ocr_flow(_task(), _calls(FakeSlowEscalation()), cfg))
    check = next(c for c in reading.checks if c.name == "escalation_timeout")
    assert check.threshold == INTERACTIVE_S and "(interactive wait)" in check.reason


def test_slow_escalation_answers_within_the_bulk_bound():
    cfg, fake = _cfg(), FakeSlowEscalation()
    reading = asyncio.run(ocr_flow(_task(), _calls(fake, resolve_escalation_wait(cfg.serve, "bulk")), cfg))
    assert reading.engine == "fake-large" and [b.text for b in reading.blocks] == ["escalated reading"]
    assert not any(c.name == "escalation_timeout" for c in reading.checks)
    assert reading.timings["escalate"] >= SLOW_ESCALATION_S * 0.9


def test_explicit_wait_above_the_cap_is_capped():
    """An interactive caller asking for an hour still gives up at the interactive bound."""
    cfg = _cfg()
    wait = resolve_escalation_wait(cfg.serve, "interactive", 3600)
    t0 = time.perf_counter()
    reading = asyncio.run(ocr_flow(_task(), _calls(FakeSlowEscalation(), wait), cfg))
    assert time.perf_counter() - t0 < SLOW_ESCALATION_S
    check = next(c for c in reading.checks if c.name == "escalation_timeout")
    assert check.threshold == INTERACTIVE_S and "3600 s requested, capped" in check.reason
    # an explicit wait below the bulk bound is used as asked, and says so
    short = asyncio.run(ocr_flow(_task(), _calls(FakeSlowEscalation(), resolve_escalation_wait(cfg.serve, "bulk", 0.2)),
                                 cfg))
    check = next(c for c in short.checks if c.name == "escalation_timeout")
    assert check.threshold == 0.2 and "requested wait, bulk bound 3 s" in check.reason


# -- the ingress core: HTTP fields, gRPC fields, calls built with the wait --------------------
class _FakeRemote:
    def __init__(self, fn):
        self.fn = fn

    def remote(self, *args):
        return self.fn(*args)


class FakeStageHandle:
    """A deployment handle stand-in: `handle.<method>.remote(...)` awaits the given coroutine fn."""

    def __init__(self, **methods):
        for name, fn in methods.items():
            setattr(self, name, _FakeRemote(fn))


class FakeTriage:
    """Streams one OCR page (what the Triage deployment would) and records the calls."""

    def __init__(self):
        self.calls = 0
        self.outcomes = self

    def options(self, stream: bool):
        return self

    def remote(self, *args):
        from pagerouter.flow.pipeline import TriageOutcome
        from pagerouter.wire.items import DocumentHead

        from tests.test_ingress_local import FakeTriageStream

        self.calls += 1
        return FakeTriageStream([DocumentHead(Document(source="scan.pdf", page_count=1), [1]),
                                 TriageOutcome(Page(number=1, status="ok", route="ocr"), _task())])


def _core(triage=None):
    from pagerouter.deployments.ingress import IngressCore

    async def describe():
        return {"fake": "0"}

    async def escalate(task, first):
        reading = await FakeSlowEscalation()(task, first)
        return reading, {"fake-large": "0"}

    cfg = _cfg(escalation_timeout_bulk_s=3.0).model_dump()
    layout = FakeStageHandle(run=_fake_layout, describe=describe)
    reader = FakeStageHandle(run=_fake_flagged_read, describe=describe)
    return IngressCore(cfg, triage, layout, reader, FakeStageHandle(escalate=escalate))


def test_http_wait_fields_reach_the_pipeline_and_bad_values_are_422():
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from pagerouter.deployments.ingress import install_error_handlers

    triage = FakeTriage()
    core = _core(triage)
    api = FastAPI()
    install_error_handlers(api)
    api.router.add_route("/v1/convert", core.convert_http, methods=["POST"])
    api.router.add_route("/v1/pages", core.convert_page_http, methods=["POST"])
    with TestClient(api, raise_server_exceptions=False) as client:
        for query, words in (("wait=forever", "wait must be interactive or bulk, not 'forever'"),
                             ("wait=forever&stream=true", "'forever'"),
                             ("escalation_wait_s=soon", "escalation_wait_s='soon'"),
                             ("wait=bulk&escalation_wait_s=-1", "greater than 0"),
                             ("escalation_wait_s=inf", "finite number")):
            for path in ("/v1/convert", "/v1/pages"):
                if "stream" in query and path == "/v1/pages":
                    continue  # stream is not an option of /v1/pages (its own test: unknown options)
                r = client.post(f"{path}?{query}", content=b"%PDF-1.7")
                assert r.status_code == 422, (path, query, r.text)
                err = r.json()["error"]
                assert err["code"] == "bad_request" and words in err["message"], err
        assert triage.calls == 0, "a bad wait is refused before any work starts"
        # multipart form fields count too
        r = client.post("/v1/convert", files={"file": ("a.pdf", b"%PDF-1.7")}, data={"wait": "forever"})
        assert r.status_code == 422 and "forever" in r.json()["error"]["message"]

        interactive = client.post("/v1/convert?filename=scan.pdf", content=b"%PDF-1.7")
        bulk = client.post("/v1/convert?wait=bulk", content=b"%PDF-1.7")
    assert interactive.status_code == bulk.status_code == 200, (interactive.text, bulk.text)
    p_inter = Document.model_validate_json(interactive.content).pages[0]
    p_bulk = Document.model_validate_json(bulk.content).pages[0]
    assert "escalation_timeout" in p_inter.flags and [b.text for b in p_inter.blocks] == ["first reading"]
    assert "escalation_timeout" not in p_bulk.flags and [b.text for b in p_bulk.blocks] == ["escalated reading"]


def test_grpc_wait_fields_round_trip_and_bad_mode_is_invalid_argument():
    import grpc

    from pagerouter.service.request_options import grpc_wait
    from pagerouter.wire.protos import pagerouter_pb2 as pb
    from tests.test_ingress_local import FakeGrpcContext

    sent = pb.ConvertRequest(data=b"%PDF", wait="bulk", escalation_wait_s=30.0)
    got = pb.ConvertRequest.FromString(sent.SerializeToString())
    assert grpc_wait(got) == ("bulk", 30.0)
    assert grpc_wait(pb.ConvertRequest(data=b"%PDF")) == (None, None)  # old clients: defaults
    assert grpc_wait(pb.PageRequest.FromString(pb.PageRequest(page=2, escalation_wait_s=5).SerializeToString())) \
        == (None, 5.0)
    old_client_bytes = pb.ConvertRequest(data=b"x", filename="a.pdf").SerializeToString()
    assert pb.ConvertRequest.FromString(old_client_bytes).filename == "a.pdf"

    triage = FakeTriage()
    core = _core(triage)
    ctx = FakeGrpcContext()
    reply = asyncio.run(core.ConvertDocument(pb.ConvertRequest(data=b"%PDF", filename="a.pdf", wait="forever"), ctx))
    assert ctx.code == grpc.StatusCode.INVALID_ARGUMENT and ("error-code", "bad_request") in ctx.trailing
    assert "forever" in ctx.details and not reply.HasField("document") and triage.calls == 0
    ctx = FakeGrpcContext()
    asyncio.run(core.ConvertPage(pb.PageRequest(data=b"%PDF", filename="a.pdf", escalation_wait_s=-2), ctx))
    assert ctx.code == grpc.StatusCode.INVALID_ARGUMENT and "escalation_wait_s=-2" in ctx.details

    reply = asyncio.run(core.ConvertDocument(pb.ConvertRequest(data=b"%PDF", wait="bulk", escalation_wait_s=0.05)))
    page = reply.document.pages[0]
    check = next(c for c in page.checks if c.name == "escalation_timeout")
    assert check.threshold == pytest.approx(0.05) and "requested wait, bulk bound 3 s" in check.reason


def test_clients_send_the_wait_fields():
    from pagerouter.clients.grpc_client import _page_request, _request
    from pagerouter.clients.http_client import _params

    assert _params("a.pdf", wait="bulk", escalation_wait_s=30.0) == {
        "filename": "a.pdf", "wait": "bulk", "escalation_wait_s": "30.0"}
    assert _params("a.pdf", wait=None, escalation_wait_s=None) == {"filename": "a.pdf"}
    req = _request(b"x", "a.pdf", None, None, "bulk", 12.5)
    assert req.wait == "bulk" and req.HasField("escalation_wait_s") and req.escalation_wait_s == 12.5
    assert not _page_request(b"x", "a.pdf", 1, None).HasField("escalation_wait_s")


# -- the in-process Converter and the CLI ---------------------------------------------------
def test_converter_wait_reaches_ocr_flow(mixed_pdf):
    from pagerouter.convert.converter import Converter

    conv = Converter(_cfg())
    conv.engines.calls = lambda used=None: _calls(FakeSlowEscalation())  # fake stages, real triage
    with pytest.raises(ValueError, match="wait must be interactive or bulk"):
        conv.convert(mixed_pdf, wait="forever")
    interactive = conv.convert(mixed_pdf, pages="2").pages[0]
    assert interactive.route == "ocr" and "escalation_timeout" in interactive.flags
    assert "(interactive wait)" in next(c for c in interactive.checks if c.name == "escalation_timeout").reason
    bulk = next(conv.iter_pages(mixed_pdf, pages="2", wait="bulk"))
    assert "escalation_timeout" not in bulk.flags and [b.text for b in bulk.blocks] == ["escalated reading"]
    capped = conv.convert(mixed_pdf, pages="2", wait="bulk", escalation_wait_s=0.05).pages[0]
    check = next(c for c in capped.checks if c.name == "escalation_timeout")
    assert check.threshold == 0.05 and "requested wait" in check.reason


def test_cli_wait_options(mixed_pdf):
    from pagerouter.cli.main import build_parser, main

    args = build_parser().parse_args(["convert", str(mixed_pdf)])
    assert args.wait == "interactive" and args.escalation_wait_s is None
    assert build_parser().parse_args(["convert", str(mixed_pdf), "--wait", "bulk"]).wait == "bulk"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["convert", str(mixed_pdf), "--wait", "forever"])
    assert main(["convert", str(mixed_pdf), "--escalation-wait-s", "0"]) == 2
    client = build_parser().parse_args(["client", "convert", str(mixed_pdf), "--url", "http://x", "--wait", "bulk",
                                        "--escalation-wait-s", "60"])
    assert (client.wait, client.escalation_wait_s, client.timeout) == ("bulk", 60.0, None)
