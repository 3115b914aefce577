"""Readiness, the effective config and offline docs of the real Serve graph (HTTP and gRPC).

Uses the session's Serve graph (tests/serve_fixtures.py: configs/serve.yaml deployed as
`serve run` does, so its per-deployment overrides apply; plus the `gpu` application whose
LargeReader asks for a GPU this machine lacks). The kill test SIGKILLs the SmallReader replica
of this session's own application (its PID from the Serve controller) and waits, bounded, for
Serve to replace it. pagerouter's own gRPC front (graph/grpc_front.py) runs in this process
against the same application.
"""

from __future__ import annotations

import os
import re
import signal
import time
from urllib.parse import urljoin, urlsplit

import grpc
import httpx
import pytest

from pagerouter.service.readiness import BUSY, OPTIONAL, stage_state
from pagerouter.service.redaction import is_secret_key, redact
from tests.serve_fixtures import free_port, wait_for

pytest_plugins = ["tests.serve_fixtures"]
DEPLOYMENTS = {"Ingress", "Triage", "Layout", "SmallReader", "LargeReader"}


# ---------------------------------------------------------------------------- no Ray
def test_redaction_hides_secrets_only():
    cfg = {
        "ocr": {"checks": {"max_token_repeats": 12, "min_tokens_for_drift": 60}, "vlm": {"max_tokens": 512}},
        "vlm": {"api_key": "sk-1", "token": "t-1", "hf_token": "h-1", "tokenizer": "byte", "password": ""},
        "env": {"PAGEROUTER_API_KEY": "k-2", "AUTHORIZATION": "Bearer x", "credentials": {"user": "u", "n": 3}},
        "note": "the key k-3 is here",
    }
    out = redact(cfg, api_key="k-3")
    assert out["ocr"] == cfg["ocr"]  # numeric thresholds named *token* stay visible
    assert out["vlm"] == {"api_key": "***", "token": "***", "hf_token": "***", "tokenizer": "byte", "password": ""}
    assert out["env"] == {"PAGEROUTER_API_KEY": "***", "AUTHORIZATION": "***", "credentials": {"user": "***", "n": 3}}
    assert out["note"] == "***"
    from pagerouter.service.api_key import ApiKey

    key = ApiKey("k-4")
    # the key inside a longer value (a URL, an env string) goes too; an unrelated value stays
    assert redact({"a": "k-4", "b": "Bearer k-4", "c": "http://h/?key=k-4&x=1", "d": "k-5"}, api_key=key) == {
        "a": "***", "b": "***", "c": "***", "d": "k-5"}
    assert not is_secret_key("max_tokens") and not is_secret_key("tokens_per_page") and is_secret_key("access_token")


def test_docs_and_their_assets_need_no_key_under_a_prefix(monkeypatch):
    """Without Ray: the docs pages and every asset they name answer without the API key (a browser
    sends none), under a route prefix too; the API itself still needs it."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    import pagerouter.service.api_key as auth
    from pagerouter.deployments.docs import install_docs
    from pagerouter.service.api_key import ApiKey
    from pagerouter.service.api_key_middleware import ApiKeyMiddleware

    monkeypatch.setattr(auth, "_SERVER_KEY", [ApiKey("k-5")])
    api = FastAPI(title="pagerouter", docs_url=None, redoc_url=None)
    api.add_middleware(ApiKeyMiddleware)
    install_docs(api)
    api.get("/v1/config")(lambda: {"x": 1})
    for root in ("", "/gpu"):
        with TestClient(api, root_path=root) as c:
            assert c.get(f"{root}/v1/config").status_code == 401
            for page in ("/docs", "/redoc"):
                html = c.get(f"{root}{page}")
                refs = re.findall(r"""(?:src|href|url)\s*[=:]\s*["']([^"']+)["']""", html.text)
                assert html.status_code == 200 and refs and all(r.startswith(f"{root}/") for r in refs), refs
                assert all(c.get(r).status_code == 200 for r in refs)
            assert c.get(f"{root}/docs/assets/..%2fhealth.py").status_code == 401  # not an asset: not open


def _dep(running: int, target: int, required=None, starting: int = 0) -> dict:
    replicas = [{"state": "RUNNING"}] * running + [{"state": "STARTING"}] * starting
    return {"status": "HEALTHY", "replicas": replicas, "target_num_replicas": target,
            "required_resources": required or {"CPU": 0.5}}


def test_stage_state_rules():
    cpu = [{"CPU": 8.0}]
    assert stage_state("SmallReader", _dep(1, 1), "ok", cpu)["state"] == "ready"
    dead = stage_state("SmallReader", _dep(1, 1), "ping failed: ActorDiedError", cpu)
    assert dead["state"] == "not_answering" and not dead["ready"] and "ActorDiedError" in dead["detail"]
    # A ping queued behind a full replica times out: that is load, and a load test must not see 503.
    # an optional tier that died degrades the graph (flagged pages keep their first reading), never 503
    tier = stage_state("LargeReader", _dep(1, 1), "ping failed: ActorDiedError", cpu)
    assert tier["state"] == "not_answering" and tier["ready"] and tier["degraded"]
    busy = stage_state("SmallReader", _dep(1, 1), BUSY, cpu)
    assert busy["state"] == "busy" and busy["ready"]
    assert not stage_state("Triage", _dep(0, 1, starting=1), None, cpu)["ready"]
    assert stage_state("Layout", None, None, cpu)["state"] == "missing"
    asleep = stage_state("LargeReader", _dep(0, 0), None, cpu)
    assert asleep["state"] == "scaled_to_zero" and asleep["ready"] and "LargeReader" in OPTIONAL
    gpu = stage_state("LargeReader", _dep(0, 1, {"CPU": 0.5, "GPU": 1}, starting=1), None, cpu)
    assert gpu["state"] == "unschedulable" and gpu["ready"] and gpu["degraded"] and "GPU" in gpu["detail"]
    # A required stage that cannot be placed is not ready.
    assert not stage_state("Layout", _dep(0, 1, {"CPU": 0.5, "GPU": 1}), None, cpu)["ready"]


# ---------------------------------------------------------------------------- real Serve
@pytest.fixture(scope="module")
def front(serve_session):
    """pagerouter's gRPC front (as `pagerouter serve` runs it) for the session's main app."""
    from ray import serve

    from pagerouter.graph.grpc_front import GrpcFront

    port = free_port()
    f = GrpcFront(lambda: serve.get_app_handle("pagerouter"), "127.0.0.1", port, app_name="pagerouter",
                  api_key=None, request_timeout_s=60, max_upload_mb=10)
    f.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        f.stop(grace_s=1)


def _grpc_health(target: str) -> tuple[str, str]:
    """(status code name, message or details) of RayServeAPIService.Healthz."""
    from ray.serve.generated import serve_pb2, serve_pb2_grpc

    with grpc.insecure_channel(target) as ch:
        try:
            reply = serve_pb2_grpc.RayServeAPIServiceStub(ch).Healthz(serve_pb2.HealthzRequest(), timeout=30)
            return "OK", reply.message
        except grpc.RpcError as exc:
            return exc.code().name, exc.details()


@pytest.mark.serve
@pytest.mark.slow
def test_healthz_names_every_deployment_and_degrades_without_gpu(serve_session, front):
    r = httpx.get(serve_session.http_url + "/healthz", timeout=30)
    body = r.json()
    assert r.status_code == 200 and body["status"] == "ok", body
    assert set(body["deployments"]) == DEPLOYMENTS
    for name in ("Triage", "Layout", "SmallReader"):
        assert body["deployments"][name]["state"] == "ready" and body["deployments"][name]["running_replicas"] >= 1
    assert body["deployments"]["LargeReader"]["state"] in ("ready", "scaled_to_zero", "waking")
    assert httpx.get(serve_session.http_url + "/livez", timeout=30).status_code == 200
    took = []
    for _ in range(8):  # cheap: cached for 2 s, a fresh check is a controller call and a few pings
        t = time.perf_counter()
        assert httpx.get(serve_session.http_url + "/healthz", timeout=30).status_code == 200
        took.append(time.perf_counter() - t)
        time.sleep(0.3)
    print(f"\n/healthz: max {max(took) * 1000:.0f} ms, median {sorted(took)[4] * 1000:.0f} ms over 8 calls 0.3 s apart")
    assert _grpc_health(front) == ("OK", "success")
    # The gpu app's LargeReader can never be placed here: still serving (pages fall back), but said.
    g = httpx.get(serve_session.gpu_http_url + "/healthz", timeout=30)
    gb = g.json()
    assert g.status_code == 200 and gb["status"] == "degraded" and gb["degraded"] == ["LargeReader"], gb
    assert gb["deployments"]["LargeReader"]["state"] == "unschedulable" and "GPU" in gb["deployments"]["LargeReader"]["detail"]


@pytest.mark.serve
@pytest.mark.slow
def test_config_shows_what_serve_runs(serve_session):
    cfg = httpx.get(serve_session.http_url + "/v1/config", timeout=30).json()
    applied = cfg["deployments"]
    assert set(applied) == DEPLOYMENTS
    # configs/serve.yaml overrides the pagerouter config: /v1/config shows Serve's numbers.
    assert cfg["serve"]["triage"]["look_back_period_s"] == 10
    assert applied["Triage"]["autoscaling_config"]["look_back_period_s"] == 2  # the session's YAML
    assert applied["Triage"]["max_ongoing_requests"] == 16 and applied["Ingress"]["max_ongoing_requests"] == 64
    # The builder bounds the Ingress's queue with serve.max_queued_requests when its own is -1.
    assert cfg["serve"]["ingress"]["max_queued_requests"] == -1 and applied["Ingress"]["max_queued_requests"] == 64
    assert cfg["serve"]["layout"]["num_cpus"] == 0.25 and applied["Layout"]["ray_actor_options"]["num_cpus"] == 0.5
    assert applied["Layout"]["autoscaling_config"]["max_replicas"] == 1  # the test session's patch of the YAML
    assert applied["LargeReader"]["autoscaling_config"]["min_replicas"] == 0
    assert applied["Triage"]["health_check_period_s"] > 0 and "max_queued_requests" in applied["Triage"]
    assert applied["Layout"]["batching"] == {"max_batch_size": 4, "batch_wait_timeout_s": 0.2}
    # Numeric thresholds whose names contain "token" are shown, not redacted.
    assert isinstance(cfg["ocr"]["checks"]["max_token_repeats"], int)
    assert isinstance(cfg["ocr"]["checks"]["min_tokens_for_drift"], int)
    gpu = httpx.get(serve_session.gpu_http_url + "/v1/config", timeout=30).json()
    assert gpu["deployments"]["LargeReader"]["ray_actor_options"]["num_gpus"] == 1


@pytest.mark.serve
@pytest.mark.slow
def test_docs_load_nothing_from_outside(serve_session):
    with httpx.Client(timeout=30) as c:
        for base in (serve_session.http_url, serve_session.gpu_http_url):
            for page in ("/docs", "/redoc"):
                r = c.get(base + page)
                assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), (base, page)
                assert not re.findall(r"https?://", r.text), r.text  # no CDN, no fonts, no validator
                refs = re.findall(r"""(?:src|href|url)\s*[=:]\s*["']([^"']+)["']""", r.text)
                assert len(refs) >= 2, r.text
                for ref in refs:
                    assert not urlsplit(ref).scheme and not urlsplit(ref).netloc, ref
                    asset = c.get(urljoin(r.url.__str__(), ref))
                    assert asset.status_code == 200 and len(asset.content) > 0, (base, ref)
            assert c.get(base + "/openapi.json").json()["info"]["title"] == "pagerouter"


def _replica_pids(app: str, deployment: str) -> list[int]:
    """Every running replica's pid: an earlier module's burst (tests/test_serve_batching.py) may
    have autoscaled the session's SmallReader to two, and one survivor keeps it ready."""
    from ray.serve.context import _get_global_client

    details = _get_global_client().get_serve_details()
    replicas = details["applications"][app]["deployments"][deployment]["replicas"]
    running = [r for r in replicas if r["state"] == "RUNNING" and r.get("pid")]
    assert running, replicas
    return sorted(int(r["pid"]) for r in running)


def _settled(app: str, deployment: str) -> bool:
    """No replica of the deployment is starting or stopping (a replica the autoscaler is still
    adding after an earlier burst would come up after the kill and keep /healthz ready)."""
    from ray.serve.context import _get_global_client

    details = _get_global_client().get_serve_details()
    dep = details["applications"][app]["deployments"][deployment]
    return bool(dep["replicas"]) and all(r["state"] == "RUNNING" for r in dep["replicas"])


@pytest.mark.serve
@pytest.mark.slow
def test_killed_reader_turns_healthz_503_then_recovers(serve_session, front):
    url = serve_session.http_url + "/healthz"
    assert httpx.get(url, timeout=30).status_code == 200
    wait_for(lambda: _settled("pagerouter", "SmallReader"), 90, "the SmallReader's replicas to settle", interval=0.5)
    pids = _replica_pids("pagerouter", "SmallReader")  # this session's own app, from its controller
    t0 = time.monotonic()
    for pid in pids:
        os.kill(pid, signal.SIGKILL)

    def unready():
        r = httpx.get(url, timeout=30)
        return r if r.status_code == 503 else None

    # The ping through the handle may wait for the dead replica (then it times out as `busy`):
    # /healthz asks the replica actors themselves before calling a stage busy (health.replicas_dead).
    r = wait_for(unready, 30, "/healthz to turn 503 after the SmallReader replica was killed", interval=0.5)
    t_down = time.monotonic() - t0
    body = r.json()
    assert body["status"] == "unavailable" and body["not_ready"] == ["SmallReader"], body
    assert "SmallReader" in body["detail"] and body["deployments"]["SmallReader"]["ready"] is False
    assert body["deployments"]["Triage"]["ready"] and body["deployments"]["Layout"]["ready"]
    code, details = _grpc_health(front)  # same Ingress, same cached view
    assert code == "UNAVAILABLE" and "SmallReader" in details, (code, details)

    wait_for(lambda: httpx.get(url, timeout=30).status_code == 200, 150,
             "/healthz to recover once Serve replaced the SmallReader replica", interval=1)
    t_up = time.monotonic() - t0
    assert not set(_replica_pids("pagerouter", "SmallReader")) & set(pids)
    wait_for(lambda: _grpc_health(front) == ("OK", "success"), 30, "gRPC Healthz to recover")
    print(f"\nSIGKILL SmallReader: /healthz 503 after {t_down:.1f} s, 200 again after {t_up:.1f} s")
