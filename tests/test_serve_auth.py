"""API key and binding of `pagerouter serve`, for real: its own local Ray, real HTTP, real gRPC.

One `pagerouter serve` subprocess for the module, started with PAGEROUTER_API_KEY set, OCR off
(the checks are about the front ends, not the engines) and Ray's files under a private temp dir
so the test can read every log Ray wrote. The cheap checks (key loading, the ASGI middleware,
the gRPC forwarding context) run without Ray.
"""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import httpx
import pymupdf
import pytest
import yaml

from pagerouter.clients.errors import PagerouterClientError
from pagerouter.clients.grpc_client import PagerouterGrpcClient
from pagerouter.clients.http_client import PagerouterHttpClient
from pagerouter.service.api_key import UNAUTHORIZED_MESSAGE, ApiKey, ApiKeyError, load_api_key
from pagerouter.bench import synth
from tests.serve_fixtures import free_ports, pagerouter_serve_process

REPO = Path(__file__).resolve().parent.parent
KEY = "pr-test-key-7f3a9c1e5b2d4f60"
CALL_TIMEOUT_S = 60.0


def SERVED(fn):  # noqa: N802 - a marker stack
    return pytest.mark.serve(pytest.mark.slow(fn))


# -- without Ray ----------------------------------------------------------------------------
def test_key_sources_and_secrecy(tmp_path):
    assert load_api_key({}) is None
    assert load_api_key({"PAGEROUTER_API_KEY": KEY}).matches(KEY)
    f = tmp_path / "key"
    f.write_text(KEY + "\n")
    key = load_api_key({"PAGEROUTER_API_KEY_FILE": str(f)})
    assert key.accepts_header(f"Bearer {KEY}") and key.accepts_header(f"bearer {KEY}")
    assert not key.accepts_header(KEY) and not key.accepts_header(f"Bearer {KEY}x") and not key.accepts_header(None)
    assert KEY not in repr(key) and KEY not in str(key)
    with pytest.raises(TypeError):
        __import__("pickle").dumps(key)
    f.write_text("\n")
    for env, why in [({"PAGEROUTER_API_KEY_FILE": str(f)}, "empty"),
                     ({"PAGEROUTER_API_KEY_FILE": str(tmp_path / "missing")}, "cannot read"),
                     ({"PAGEROUTER_API_KEY": KEY, "PAGEROUTER_API_KEY_FILE": str(f)}, "not both"),
                     ({"PAGEROUTER_API_KEY": "two words"}, "printable")]:
        with pytest.raises(ApiKeyError, match=why) as err:
            load_api_key(env)
        assert KEY not in str(err.value)
    with pytest.raises(ApiKeyError):
        ApiKey("")


def test_open_non_loopback_server_is_warned_about():
    from pagerouter.graph.serve_command import _auth_line

    assert _auth_line(None, "0.0.0.0") and "PAGEROUTER_API_KEY" in _auth_line(None, "0.0.0.0")
    assert _auth_line(None, "192.0.2.7")
    assert _auth_line(None, "127.0.0.1") is None and _auth_line(None, "::1") is None
    assert _auth_line(None, "localhost") is None and _auth_line(ApiKey(KEY), "0.0.0.0") is None


def test_http_middleware_without_ray(monkeypatch):
    """The ASGI check, also under a route prefix; 401s have the documented error shape."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    import pagerouter.service.api_key as auth
    from pagerouter.service.api_key_middleware import ApiKeyMiddleware

    monkeypatch.setattr(auth, "_SERVER_KEY", [ApiKey(KEY)])
    api = FastAPI()
    api.add_middleware(ApiKeyMiddleware)
    api.get("/healthz")(lambda: {"status": "ok"})
    api.get("/v1/config")(lambda: {"x": 1})
    for root in ("", "/gpu"):
        with TestClient(api, root_path=root) as c:
            assert c.get(f"{root}/healthz").status_code == 200
            r = c.get(f"{root}/v1/config")
            assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
            err = r.json()["error"]
            assert err["code"] == "unauthorized" and err["request_id"] and KEY not in r.text
            assert c.get(f"{root}/v1/config", headers={"Authorization": "Bearer nope"}).status_code == 401
            assert c.get(f"{root}/v1/config", headers={"Authorization": f"Bearer {KEY}"}).json() == {"x": 1}


def test_forwarded_grpc_context_records_the_status():
    from pagerouter.service.grpc_forwarding import RecordingContext, grpc_request_type
    from pagerouter.wire.protos import pagerouter_pb2 as pb

    assert grpc_request_type("ConvertPage", streaming=False) is pb.PageRequest
    assert grpc_request_type("StreamDocument", streaming=True) is pb.ConvertRequest
    with pytest.raises(ValueError):
        grpc_request_type("StreamDocument", streaming=False)
    with pytest.raises(ValueError):
        grpc_request_type("__init__", streaming=False)
    from pagerouter.service.grpc_auth import grpc_unauthenticated

    class ServeProxyContext(RecordingContext):  # what Serve's own gRPC proxy hands a method
        authenticated_upstream = False

    key = ApiKey(KEY)
    assert not grpc_unauthenticated(ServeProxyContext([("authorization", f"Bearer {KEY}")], "r"), key)
    assert not grpc_unauthenticated(ServeProxyContext([], "r"), None)  # auth off
    assert not grpc_unauthenticated(RecordingContext([], "r"), key)  # checked by the front already
    assert grpc_unauthenticated(None, key)  # a direct call without metadata
    denied = ServeProxyContext([("authorization", "Bearer wrong")], "r")
    assert grpc_unauthenticated(denied, key)
    assert denied.outcome()[:2] == ("UNAUTHENTICATED", UNAUTHORIZED_MESSAGE) and KEY not in str(denied.outcome())
    ctx = RecordingContext([("application", "pagerouter")], "rid1")
    assert ctx.outcome() == (None, "", [("request_id", "rid1")])
    ctx.set_code(grpc.StatusCode.INVALID_ARGUMENT)
    ctx.set_details("bad")
    ctx.set_trailing_metadata([("error-code", "bad_input")])
    assert ctx.outcome() == ("INVALID_ARGUMENT", "bad", [("error-code", "bad_input"), ("request_id", "rid1")])


# -- a real `pagerouter serve` with a key ----------------------------------------------------
def _non_loopback_ip() -> str | None:
    """An address of this machine other than loopback (hostname -I, else a UDP-connect probe)."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError):
        out = []
    for ip in out:
        if ipaddress.ip_address(ip).version == 4 and not ipaddress.ip_address(ip).is_loopback:
            return ip
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent; the kernel picks the outgoing address
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ipaddress.ip_address(ip).is_loopback else ip


def _encrypted_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    synth.add_text_page(doc, ["A secret page."])
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="owner")
    doc.close()
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("auth")
    cfg = d / "serve.yaml"
    cfg.write_text(yaml.safe_dump({"ocr": {"enabled": False}}))
    pdf = d / "text.pdf"
    doc = pymupdf.open()
    synth.add_text_page(doc, ["Only authorised callers may read this sentence."], title="Keyed")
    doc.save(pdf)
    doc.close()
    ray_tmp = tempfile.mkdtemp(prefix="prauth", dir="/tmp")  # short: Ray's unix sockets live there
    http_port, grpc_port = free_ports(2)
    env = {**os.environ, "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp,
           "PAGEROUTER_API_KEY": KEY}
    env.pop("PAGEROUTER_API_KEY_FILE", None)
    with pagerouter_serve_process(d, cfg, env, http_port, grpc_port, ray_tmp) as proc:
        yield {"http": f"http://127.0.0.1:{http_port}", "grpc": f"127.0.0.1:{grpc_port}", "http_port": http_port,
               "grpc_port": grpc_port, "pdf": pdf, "encrypted": _encrypted_pdf(d / "locked.pdf"), "proc": proc,
               "logs": [d / "serve.out", d / "serve.err"], "ray_tmp": Path(ray_tmp), "pid": proc.pid}


@SERVED
def test_http_needs_the_key_but_healthz_does_not(served):
    url = served["http"]
    assert httpx.get(url + "/healthz", timeout=30).status_code == 200
    body = served["pdf"].read_bytes()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": KEY}, {"Authorization": f"Basic {KEY}"}):
        r = httpx.post(url + "/v1/convert", content=body, headers=headers, timeout=CALL_TIMEOUT_S)
        assert r.status_code == 401, (headers, r.status_code)
        err = r.json()["error"]
        assert set(err) == {"code", "message", "request_id"} and err["code"] == "unauthorized"
        assert err["request_id"] == r.headers["x-request-id"] and KEY not in r.text
    assert httpx.get(url + "/v1/config", timeout=30).status_code == 401
    ok = httpx.post(url + "/v1/convert", content=body, headers={"Authorization": f"Bearer {KEY}"},
                    timeout=CALL_TIMEOUT_S)
    assert ok.status_code == 200 and "Only authorised callers" in ok.text
    with PagerouterHttpClient(url, timeout=CALL_TIMEOUT_S) as c:  # the key from the environment
        os.environ["PAGEROUTER_API_KEY"] = KEY
        try:
            c2 = PagerouterHttpClient(url, timeout=CALL_TIMEOUT_S)
        finally:
            del os.environ["PAGEROUTER_API_KEY"]
        with c2:
            cfg = c2.config()
            assert [p.status for p in c2.convert_streamed(served["pdf"]).pages] == ["ok"]
        with pytest.raises(PagerouterClientError) as e:
            c.convert(served["pdf"])
        assert e.value.status == 401 and e.value.code == "unauthorized"
    assert KEY not in str(cfg)
    assert KEY not in httpx.get(url + "/v1/config", headers={"Authorization": f"Bearer {KEY}"}, timeout=30).text


@SERVED
def test_grpc_needs_the_key(served):
    target, pdf = served["grpc"], served["pdf"]
    for key in ("", "wrong"):
        with PagerouterGrpcClient(target, timeout=CALL_TIMEOUT_S, api_key=key) as g:
            for call in (lambda: g.convert(pdf), lambda: list(g.stream(pdf)), lambda: g.convert_page(pdf, page=1)):
                with pytest.raises(PagerouterClientError) as e:
                    call()
                assert e.value.status == "UNAUTHENTICATED" and e.value.code == "unauthorized", e.value
                assert KEY not in str(e.value)
    with PagerouterGrpcClient(target, timeout=CALL_TIMEOUT_S, api_key=KEY) as g:
        assert [p.status for p in g.convert(pdf).pages] == ["ok"]
        assert [p.status for p in g.convert_streamed(pdf).pages] == ["ok"]
        assert g.convert_page(pdf, page=1).route == "text_layer"
        assert g.last_request_id
        with pytest.raises(PagerouterClientError) as e:  # a problem still comes back through the front
            g.convert(b"not a pdf", filename="junk.bin")
        assert e.value.status == "INVALID_ARGUMENT" and e.value.code == "bad_input"
        with pytest.raises(PagerouterClientError) as e:  # and ends a stream with its status
            list(g.stream(b"", filename="empty.pdf"))
        assert e.value.status == "INVALID_ARGUMENT"
    from ray.serve.generated import serve_pb2, serve_pb2_grpc

    with grpc.insecure_channel(target) as ch:  # Serve's health rpc stays open, like /healthz
        reply = serve_pb2_grpc.RayServeAPIServiceStub(ch).Healthz(serve_pb2.HealthzRequest(), timeout=30)
    assert reply.message == "success"


@SERVED
def test_encrypted_pdf_error_names_the_api_field_not_a_cli_flag(served):
    with PagerouterHttpClient(served["http"], timeout=CALL_TIMEOUT_S, api_key=KEY) as h, \
            PagerouterGrpcClient(served["grpc"], timeout=CALL_TIMEOUT_S, api_key=KEY) as g:
        for call in (lambda: h.convert(served["encrypted"]), lambda: g.convert(served["encrypted"])):
            with pytest.raises(PagerouterClientError) as e:
                call()
            assert "`password` field" in e.value.message and "--password" not in e.value.message, e.value
        assert [p.number for p in h.convert(served["encrypted"], password="pw").pages] == [1]


def _client_cli(*args: str, key: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAGEROUTER_API_KEY")}
    if key is not None:
        env["PAGEROUTER_API_KEY"] = key
    return subprocess.run([sys.executable, "-m", "pagerouter.cli.main", "client", "convert", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120, env=env)


@SERVED
def test_client_cli_sends_the_key_from_the_environment(served):
    pdf = str(served["pdf"])
    for where in (["--url", served["http"]], ["--grpc", served["grpc"], "--stream"]):
        ok = _client_cli(pdf, *where, key=KEY)
        assert ok.returncode == 0 and "Only authorised callers" in ok.stdout, ok.stderr
        denied = _client_cli(pdf, *where, key=None)
        assert denied.returncode == 4 and "unauthorized" in denied.stderr and "cannot reach" not in denied.stderr
    locked = _client_cli(str(served["encrypted"]), "--url", served["http"], key=KEY)
    assert locked.returncode == 1 and "(--password)" in locked.stderr, locked.stderr  # an input error


@SERVED
def test_http_and_grpc_listen_on_loopback_only(served):
    ports = (served["http_port"], served["grpc_port"])
    for port in ports:  # reachable on loopback
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    ip = _non_loopback_ip()
    if ip is not None:
        for port in ports:
            with pytest.raises(OSError):
                socket.create_connection((ip, port), timeout=5).close()
    import psutil

    def v4(a: str) -> str:  # gRPC listens on a dual-stack socket bound to ::ffff:127.0.0.1
        ip = ipaddress.ip_address(a)
        return str(getattr(ip, "ipv4_mapped", None) or ip)

    listening = {(c.laddr.ip, c.laddr.port) for c in psutil.net_connections("inet") if c.status == psutil.CONN_LISTEN}
    for port in ports:
        addrs = {v4(a) for a, p in listening if p == port}
        assert addrs == {"127.0.0.1"}, (port, addrs)


def _review_data(html: str) -> dict:
    start = html.index('<script type="application/json" id="review-data">') + len('<script type="application/json" id="review-data">')
    return json.loads(html[start:html.index("</script>", start)])


@SERVED
def test_a_jobs_review_page_needs_the_key_and_carries_a_strict_policy(served):
    from pagerouter.review import REVIEW_CSP

    url, auth = served["http"], {"Authorization": f"Bearer {KEY}"}
    r = httpx.post(url + "/v1/jobs", content=served["pdf"].read_bytes(), params={"filename": "text.pdf"},
                   headers=auth, timeout=CALL_TIMEOUT_S)
    assert r.status_code == 202, r.text
    job = r.json()["id"]
    deadline = time.monotonic() + 60
    while httpx.get(f"{url}/v1/jobs/{job}", headers=auth, timeout=30).json()["state"] != "done":
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.2)
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        denied = httpx.get(f"{url}/v1/jobs/{job}/review", headers=headers, timeout=30)
        assert denied.status_code == 401 and "Only authorised callers" not in denied.text
    page = httpx.get(f"{url}/v1/jobs/{job}/review", headers=auth, timeout=60)
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == REVIEW_CSP and "unsafe-inline" not in REVIEW_CSP
    data = _review_data(page.text)
    pages = data["pages"]
    assert len(pages) == 1 and pages[0]["image"].startswith("data:image/jpeg;base64,")
    assert any("Only authorised callers may read this sentence." in (b.get("text") or "") for b in pages[0]["blocks"])
    assert httpx.get(f"{url}/v1/jobs/no-such-job/review", headers=auth, timeout=30).status_code == 404


@SERVED
def test_the_key_is_in_no_log(served):
    """Last: after every test above, neither the server's output nor any file Ray wrote holds it."""
    with PagerouterHttpClient(served["http"], timeout=CALL_TIMEOUT_S, api_key=KEY + "-wrong") as c:
        with pytest.raises(PagerouterClientError):
            c.convert(served["pdf"])
    proc = served["proc"]
    proc.send_signal(signal.SIGINT)
    proc.wait(90)
    assert proc.returncode == 0
    text = "".join(p.read_text(errors="replace") for p in served["logs"])
    assert "serving in" in text and "API key required" in text
    assert KEY not in text
    needle = KEY.encode()
    scanned = 0
    for f in served["ray_tmp"].rglob("*"):
        if f.is_file() and not f.is_symlink():
            try:
                data = f.read_bytes()
            except OSError:
                continue
            scanned += 1
            assert needle not in data, f"the API key is in {f}"
    assert scanned > 10, "Ray's logs were not where the test looked"

