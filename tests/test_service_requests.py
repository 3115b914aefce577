"""pagerouter.service without Ray: what a request meets before its conversion (admission slots,
error statuses, problems worded for the API, the page field, readiness report, applied settings,
the test-only fault rules), and the package's promise to import without Ray, Serve or FastAPI."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import grpc
import pytest

from pagerouter.config.limits import LimitsConfig
from pagerouter.wire.items import InputProblem
from tests.test_ingress_local import FakeGrpcContext


def test_service_imports_without_ray_serve_fastapi_or_deployments():
    code = (
        "import importlib, pkgutil, sys\n"
        "import pagerouter.service as s\n"
        "for m in pkgutil.iter_modules(s.__path__): importlib.import_module('pagerouter.service.' + m.name)\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & {'ray', 'fastapi', 'starlette', 'deployments'})\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_an_admission_slot_releases_once_by_call_or_by_its_block():
    from pagerouter.service.admission import Admission, Refused

    adm = Admission(LimitsConfig(max_requests_per_client=1, max_in_flight_requests=2))
    with adm.acquire("a"):
        assert adm.per_client == {"a": 1}
        with pytest.raises(Refused):
            adm.acquire("a")
    assert adm.total == 0 and adm.per_client == {}
    slot = adm.acquire("a")
    with slot:
        slot()  # a stream that ended released it already: leaving the block must not count it out twice
    assert adm.total == 0
    with pytest.raises(RuntimeError), adm.acquire("b"):
        raise RuntimeError("the conversion failed")
    assert adm.total == 0 and adm.per_client == {}


def test_problems_and_refusals_map_to_http_and_grpc_statuses():
    from pagerouter.service.admission import Admission, Refused
    from pagerouter.service.error_status import grpc_problem, grpc_refused, problem_error, refused_error

    for code, http, rpc in (("bad_input", 422, grpc.StatusCode.INVALID_ARGUMENT),
                            ("too_many_pages", 413, grpc.StatusCode.RESOURCE_EXHAUSTED),
                            ("timeout", 504, grpc.StatusCode.DEADLINE_EXCEEDED),
                            ("something_new", 400, grpc.StatusCode.INVALID_ARGUMENT)):
        problem = InputProblem(code, f"a.pdf: {code}", "a.pdf")
        err = problem_error(problem)
        assert (err.status, err.code, err.message) == (http, code, f"a.pdf: {code}")
        ctx = FakeGrpcContext()
        grpc_problem(ctx, problem)
        assert ctx.code == rpc and ctx.details == f"a.pdf: {code}" and ctx.trailing == [("error-code", code)]
    grpc_problem(None, InputProblem("bad_input", "x", "x"))  # a direct call has no context: nothing to set

    adm = Admission(LimitsConfig(max_in_flight_requests=1, retry_after_s=9))
    adm.acquire("a")
    with pytest.raises(Refused) as refused:
        adm.acquire("b")
    err = refused_error(refused.value)
    assert (err.status, err.code, err.headers) == (503, "overloaded", {"Retry-After": "9"})
    ctx = FakeGrpcContext()
    grpc_refused(ctx, refused.value)
    assert ctx.code == grpc.StatusCode.UNAVAILABLE and ctx.trailing == [("error-code", "overloaded"), ("retry-after", "9")]


def test_problems_are_worded_for_the_api_and_pages_below_one_are_named():
    from pagerouter.service.api_problems import for_api, single_page_field_problem, single_page_problem

    cli = InputProblem("bad_input", "a.pdf: encrypted: give the password (--password)", "a.pdf", None,
                       "encrypted: give the password (--password)")
    api = for_api(cli)
    assert "--password" not in api.message and "`password` field" in api.message and "--password" not in api.detail
    plain = InputProblem("bad_input", "a.pdf: not a PDF", "a.pdf")
    assert for_api(plain) is plain
    assert single_page_problem(1, "a.pdf") is None
    assert single_page_problem(0, "a.pdf").message == "a.pdf: page 0 requested; pages are numbered from 1"
    assert single_page_field_problem("-3", "a.pdf").code == "bad_pages"
    assert single_page_field_problem(None, "a.pdf") is None  # the default page 1
    assert single_page_field_problem(" 2 ", "a.pdf") is None
    assert single_page_field_problem("two", "a.pdf") is None  # left to the options' own validation (bad_request)
    assert single_page_field_problem("١", "a.pdf") is None  # a non-ASCII digit is not a page number here


def test_client_identity_prefers_the_fronts_peer_metadata():
    from pagerouter.service.client_identity import PEER_METADATA, grpc_client_id

    class Ctx:
        def __init__(self, md, peer):
            self.md, self._peer = md, peer

        def invocation_metadata(self):
            return self.md

        def peer(self):
            return self._peer

    assert grpc_client_id(None) == "direct"
    assert grpc_client_id(Ctx([(PEER_METADATA, "ipv4:10.0.0.5:4242")], "ipv4:127.0.0.1:1")) == "10.0.0.5"
    assert grpc_client_id(Ctx([], "ipv6:[::1]:5000")) == "::1"


def _dep(running: int, target: int = 1, required=None) -> dict:
    return {"status": "HEALTHY", "replicas": [{"state": "RUNNING"}] * running, "target_num_replicas": target,
            "required_resources": required or {"CPU": 0.5}}


def test_readiness_report_names_what_cannot_serve():
    from pagerouter.service.readiness import BUSY, graph_report, stages_to_ping

    app = {"deployments": {"Ingress": _dep(1), "Triage": _dep(1), "Layout": _dep(1), "SmallReader": _dep(0),
                           "LargeReader": _dep(0, target=0)}}
    assert stages_to_ping(app) == ["Triage", "Layout"]  # the sleeping tier is never woken by a probe
    assert stages_to_ping(None) == ["Triage", "Layout", "SmallReader"]
    ready, body = graph_report(app, None, {"Triage": "ok", "Layout": BUSY}, [{"CPU": 4.0}], "1.0", "pagerouter")
    assert not ready and body["status"] == "unavailable" and body["not_ready"] == ["SmallReader"]
    assert body["detail"] == "cannot serve: SmallReader no_running_replica"
    assert body["deployments"]["Layout"]["state"] == "busy" and body["deployments"]["LargeReader"]["ready"]
    assert (body["version"], body["app"]) == ("1.0", "pagerouter") and "controller" not in body

    app["deployments"]["SmallReader"] = _dep(1)
    app["deployments"]["LargeReader"] = _dep(0, required={"CPU": 1, "GPU": 1})
    ready, body = graph_report(app, None, {"Triage": "ok", "Layout": "ok", "SmallReader": "ok"}, [{"CPU": 4.0}],
                               "1.0", "pagerouter")
    assert ready and body["status"] == "degraded" and body["degraded"] == ["LargeReader"]

    # no controller view: the pings decide, and the report says why the view is missing
    ready, body = graph_report(None, "no Serve controller (local testing mode)",
                               {"Triage": "ok", "Layout": "ok", "SmallReader": "ping failed: ActorDiedError"}, None,
                               "1.0", "pagerouter")
    assert not ready and body["deployments"]["SmallReader"] == {"state": "unknown", "ready": False,
                                                                "detail": "ping failed: ActorDiedError"}
    assert body["deployments"]["LargeReader"]["ready"] and body["controller"].startswith("no Serve controller")


def test_applied_settings_fill_serves_defaults_only_where_a_default_applies():
    from types import SimpleNamespace

    from pagerouter.service.applied_settings import applied_settings

    defaults = SimpleNamespace(max_ongoing_requests=5, health_check_period_s=10.0, num_replicas=1)
    dep = {"deployment_config": {"max_ongoing_requests": 16, "autoscaling_config": {"min_replicas": 0}},
           "target_num_replicas": 2, "required_resources": {"CPU": 0.5}}
    out = applied_settings(dep, defaults)
    assert out["max_ongoing_requests"] == 16 and out["health_check_period_s"] == 10.0
    assert "num_replicas" not in out  # autoscaled: no fixed count to show
    assert out["autoscaling_config"] == {"min_replicas": 0}
    assert out["target_replicas"] == 2 and out["required_resources"] == {"CPU": 0.5}


def test_stage_fault_rules_touch_only_the_named_document_and_page(monkeypatch, tmp_path):
    from pagerouter.service.stage_faults import FAULT_ENV, GARBAGE, LOG_ENV, InjectedFault, stage_fault, task_of

    assert not asyncio.run(stage_fault("read", "any.pdf", 1))  # off: nothing happens
    log = tmp_path / "stages.log"
    monkeypatch.setenv(FAULT_ENV, "raise@read:engine-fault#2,garbage@layout:junk")
    monkeypatch.setenv(LOG_ENV, str(log))
    assert not asyncio.run(stage_fault("read", "engine-fault.pdf", 1))
    with pytest.raises(InjectedFault, match="page 2"):
        asyncio.run(stage_fault("read", "/in/engine-fault.pdf", 2))
    assert asyncio.run(stage_fault("layout", "junk.pdf", 7)) and GARBAGE
    assert not asyncio.run(stage_fault("layout", "other.pdf", 7))
    assert [line.split()[:3] for line in log.read_text().splitlines()][:2] == [
        ["read", "engine-fault.pdf", "1"], ["read", "engine-fault.pdf", "2"]]
    assert task_of(()) == ("-", 0)
