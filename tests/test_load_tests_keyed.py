"""load_tests/ against a keyed stand-in server (no Ray): every generator sends the API key and a
run without it is reported as unauthorized errors; the report's batch figures are this run's
(the difference of two metric snapshots); charts are written; users spread over several loopback
source addresses. The real graph is run by tests/test_load_tests.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
import pytest
from load_tests import report as report_mod
from load_tests import server_view
from load_tests.inputs import default_mix
from load_tests.report import summarize

REPO = Path(__file__).resolve().parent.parent
# Each input once per round of 5 requests (inputs.Picker), as in test_load_tests.py.
WEIGHTS = "digital_page=1,digital_doc=1,scanned_page=1,bad_not_pdf=1,bad_page=1"
REQUESTS = 10

# -- a keyed fake server: the generators' key, per-run batch figures, charts, source addresses --
# The real graph is exercised in test_load_tests.py (slow); these run the runner and both generators for real
# against a small stand-in that answers like the API (routes, 422s, 401 without the key, 429
# past 2 requests in flight per client address) and serves a batch-size histogram that already
# holds calls from before the run.
FAKE_KEY = "load-test-key-0123"
BEFORE_RUN = {"1": 100.0, "2": 0.0, "4": 0.0}  # small_reader calls of size 1 made before the run


class _Fake:
    def __init__(self):
        import threading

        self.lock = threading.Lock()
        self.peers: list[str] = []
        self.grpc_peers: list[str] = []
        self.authorized = 0
        self.refused = 0
        self.scans = 0  # each OCR page the run sends is one small_reader call of size 2
        self.in_flight: dict[str, int] = {}

    def metrics(self) -> str:
        with self.lock:
            scans = self.scans
        c1, c2 = BEFORE_RUN["1"], BEFORE_RUN["2"] + scans
        total = c1 + c2
        labels = 'Component="core_worker",WorkerId="abc",stage="small_reader"'
        rows = [f'ray_pagerouter_batch_size_bucket{{{labels},le="1.0"}} {c1}',
                f'ray_pagerouter_batch_size_bucket{{{labels},le="2.0"}} {c1 + c2}',
                f'ray_pagerouter_batch_size_bucket{{{labels},le="4.0"}} {total}',
                f'ray_pagerouter_batch_size_bucket{{{labels},le="+Inf"}} {total}',
                f"ray_pagerouter_batch_size_sum{{{labels}}} {c1 + 2 * c2}",
                f"ray_pagerouter_batch_size_count{{{labels}}} {total}",
                "# a line of another metric", 'ray_other_metric{stage="x"} 5']
        return "\n".join(rows) + "\n"

    def answer(self, path: str, query: dict, body: bytes, auth: str | None, peer: str) -> tuple[int, dict]:
        """(status, JSON body) of one conversion request, as the API answers it."""
        with self.lock:
            if peer:  # HTTP callers (gRPC ones are in grpc_peers)
                self.peers.append(peer)
            if auth != f"Bearer {FAKE_KEY}":
                self.refused += 1
                return 401, {"error": {"code": "unauthorized", "message": "missing or wrong API key"}}
            self.authorized += 1
        if not body.startswith(b"%PDF"):
            return 422, {"error": {"code": "bad_input", "message": "not a PDF"}}
        if query.get("page") == "99":
            return 422, {"error": {"code": "bad_pages", "message": "page 99 of 2"}}
        route = "ocr" if "scan" in query.get("filename", "") else "text_layer"
        if route == "ocr":
            with self.lock:
                self.scans += 1
        page = {"number": int(query.get("page", 1)), "status": "ok", "route": route, "blocks": []}
        if path == "/v1/pages":
            return 200, page
        return 200, {"schema_version": "1.0", "source": "x.pdf", "page_count": 2,
                     "pages": [page, {**page, "number": 2}]}


@pytest.fixture
def fake_server():
    import threading
    from concurrent import futures
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qsl, urlparse

    import grpc

    from pagerouter.wire.protos import pagerouter_pb2 as pb
    from pagerouter.wire.protos import pagerouter_pb2_grpc as pb_grpc

    fake = _Fake()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):  # quiet
            pass

        def _send(self, status: int, payload, ctype: str = "application/json") -> None:
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            if status == 429:
                self.send_header("retry-after", "1")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802
            path = urlparse(self.path).path
            if path == "/metrics":
                return self._send(200, fake.metrics(), "text/plain")
            if path == "/healthz":
                return self._send(200, {"deployments": {"Ingress": {"running_replicas": 1}}})
            if path == "/v1/config":
                if self.headers.get("authorization") != f"Bearer {FAKE_KEY}":
                    return self._send(401, {"error": {"code": "unauthorized"}})
                return self._send(200, {"deployments": {"Ingress": {"autoscaling_config": {"max_replicas": 1}}}})
            return self._send(404, {"error": {"code": "not_found"}})

        def do_POST(self):  # noqa: N802
            url = urlparse(self.path)
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            peer = self.client_address[0]
            with fake.lock:
                busy = fake.in_flight.get(peer, 0)
                fake.in_flight[peer] = busy + 1
            try:
                if busy >= 2:  # limits.max_requests_per_client: 2 in this stand-in
                    status, payload = 429, {"error": {"code": "too_many_requests"}}
                else:
                    time.sleep(0.02)
                    status, payload = fake.answer(url.path, dict(parse_qsl(url.query)), body,
                                                  self.headers.get("authorization"), peer)
            finally:
                # out of flight before the answer leaves: a client that sends its next request as
                # soon as it reads this one must never find it still counted (on a busy machine this
                # thread ran its `finally` after the client's next request arrived: a stray 429)
                with fake.lock:
                    fake.in_flight[peer] -= 1
            return self._send(status, payload)

    class Servicer(pb_grpc.PageRouterServicer):
        def _auth(self, context) -> None:
            md = dict(context.invocation_metadata())
            with fake.lock:
                fake.grpc_peers.append(context.peer())
            if md.get("authorization") != f"Bearer {FAKE_KEY}":
                with fake.lock:
                    fake.refused += 1
                context.abort_with_status(_status(grpc.StatusCode.UNAUTHENTICATED, "unauthorized"))

        def _convert(self, req, path: str, context):
            self._auth(context)
            query = {"filename": req.filename, "page": str(getattr(req, "page", 1) or 1)}
            status, body = fake.answer(path, query, req.data, f"Bearer {FAKE_KEY}", "")
            if status != 200:
                context.abort_with_status(_status(grpc.StatusCode.INVALID_ARGUMENT, body["error"]["code"]))
            return body

        def ConvertPage(self, req, context):  # noqa: N802
            b = self._convert(req, "/v1/pages", context)
            return pb.PageReply(page=pb.Page(number=b["number"], status="ok", route=b["route"]))

        def _doc(self, b):
            return pb.Document(schema_version="1.0", source="x.pdf", page_count=2,
                               pages=[pb.Page(number=p["number"], status="ok", route=p["route"]) for p in b["pages"]])

        def ConvertDocument(self, req, context):  # noqa: N802
            return pb.DocumentReply(document=self._doc(self._convert(req, "/v1/convert", context)))

        def StreamDocument(self, req, context):  # noqa: N802
            doc = self._doc(self._convert(req, "/v1/convert", context))
            for page in doc.pages:
                yield pb.StreamReply(page=page)
            yield pb.StreamReply(summary=pb.Document(schema_version="1.0", source="x.pdf", page_count=2))

    class _St(grpc.Status):
        def __init__(self, code, error_code):
            self.code, self.details, self.trailing_metadata = code, error_code, (("error-code", error_code),)

    def _status(code, error_code):
        return _St(code, error_code)

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    http.daemon_threads = True
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    pb_grpc.add_PageRouterServicer_to_server(Servicer(), server)
    grpc_port = server.add_insecure_port("0.0.0.0:0")  # every loopback address: the relays come from 127.0.0.x
    server.start()
    try:
        yield fake, f"http://127.0.0.1:{http.server_address[1]}", f"127.0.0.1:{grpc_port}"
    finally:
        server.stop(0)
        http.shutdown()
        http.server_close()
        thread.join(10)


def _run_against(fake_url, grpc_target, out, key: str | None, extra=(), requests: int = REQUESTS):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PAGEROUTER_API_KEY", None)
    env.pop("PAGEROUTER_API_KEY_FILE", None)
    if key is not None:
        env["PAGEROUTER_API_KEY"] = key
    return subprocess.run(
        [sys.executable, str(REPO / "load_tests" / "run_profile.py"), "--out", str(out), "--url", fake_url,
         "--grpc", grpc_target, "--metrics-url", f"{fake_url}/metrics", "--client", "both", "--users", "2",
         "--duration", "60", "--requests", str(requests), "--weights", WEIGHTS, "--sample-interval", "1",
         "--metrics-wait", "0", "--timeout", "20", *extra],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240,
    )


@pytest.mark.serve
def test_generators_send_the_api_key_and_report_this_runs_batches(fake_server, tmp_path):
    """With PAGEROUTER_API_KEY set both generators send it: 0 errors against a keyed server; the
    batch sizes are this run's (the calls the server had made before the run are not in them);
    the charts are written and linked."""
    fake, url, target = fake_server
    run = _run_against(url, target, tmp_path / "keyed", FAKE_KEY)
    rep = json.loads((tmp_path / "keyed" / "report.json").read_text())
    for name in ("http", "grpc"):
        c = rep["clients"][name]
        assert c["sent"] == REQUESTS and c["error_count"] == 0, (name, c["errors"], run.stderr[-2000:])
        assert c["unauthorized"] == 0 and c["ok"] >= 3
    assert run.returncode == 0, run.stderr[-2000:]
    assert fake.refused == 0 and fake.authorized >= 2 * REQUESTS
    assert rep["meta"]["api_key_sent"] and rep["meta"]["deployments_at_start"]["Ingress"]
    # every scan of this run was one small_reader call of size 2; the 100 size-1 calls from before are not counted
    assert fake.scans >= 2
    assert rep["batch_sizes"] == {"small_reader": {"<=2": fake.scans, "calls": fake.scans, "mean": 2.0}}
    md = (tmp_path / "keyed" / "report.md").read_text()
    assert "UNAUTHORIZED" not in md and "mean batch size 2" in md
    for chart in ("throughput.png", "latency.png", "batch_sizes.png"):
        path = tmp_path / "keyed" / chart
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"]({chart})" in md
    tl = rep["timeline"]["clients"]
    assert set(tl) == {"http", "grpc"} and sum(r["requests_per_s"] for r in tl["http"]) > 0


@pytest.mark.serve
def test_a_run_without_the_key_is_reported_as_unauthorized_errors(fake_server, tmp_path):
    fake, url, target = fake_server
    run = _run_against(url, target, tmp_path / "nokey", None, requests=5)
    rep = json.loads((tmp_path / "nokey" / "report.json").read_text())
    assert run.returncode == 1 and "UNAUTHORIZED" in run.stderr
    assert fake.authorized == 0 and fake.refused >= 10
    for name in ("http", "grpc"):
        c = rep["clients"][name]
        assert c["ok"] == 0 and c["answered"] == 0 and c["unauthorized"] == c["sent"] == c["error_count"] == 5, c
        assert c["requests_per_s"] == 0 and c["latency_by_op"] == {}
    assert rep["clients"]["http"]["errors"] == {"401:unauthorized": 5}
    assert rep["clients"]["grpc"]["errors"] == {"UNAUTHENTICATED:unauthorized": 5}
    md = (tmp_path / "nokey" / "report.md").read_text()
    assert md.index("**UNAUTHORIZED: 10 of 10 requests") < md.index("## http")


@pytest.mark.serve
def test_source_addresses_spread_users_over_loopback_addresses(fake_server, tmp_path):
    """4 users over 127.0.0.2 and 127.0.0.3: the server sees both addresses (HTTP directly, gRPC
    through the relays), and the per-address limit of 2 in flight refuses nobody."""
    fake, url, target = fake_server
    run = _run_against(url, target, tmp_path / "spread", FAKE_KEY,
                       extra=("--source-addresses", "127.0.0.2-127.0.0.3", "--users", "4"), requests=12)
    rep = json.loads((tmp_path / "spread" / "report.json").read_text())
    assert set(fake.peers) == {"127.0.0.2", "127.0.0.3"}, run.stderr[-2000:]
    assert {server_view_peer(p) for p in fake.grpc_peers} == {"127.0.0.2", "127.0.0.3"}
    assert rep["meta"]["source_addresses"] == ["127.0.0.2", "127.0.0.3"]
    for name in ("http", "grpc"):
        assert rep["clients"][name]["error_count"] == 0, rep["clients"][name]["errors"]


def server_view_peer(peer: str) -> str:
    from pagerouter.service.client_identity import peer_host

    return peer_host(peer)


def test_batch_figures_are_the_difference_of_two_snapshots(monkeypatch):
    """Two scrapes of two replicas' histograms: the run's figures are end minus start per series;
    a replica that restarted (its counters went down) counts from 0, one added during the run
    counts whole."""
    def scrape(series: dict[str, tuple[float, float, float]]) -> str:
        rows = []
        for worker, (c1, c2, c4) in series.items():
            lab = f'WorkerId="{worker}",stage="layout"'
            total = c1 + c2 + c4
            rows += [f'ray_pagerouter_batch_size_bucket{{{lab},le="1.0"}} {c1}',
                     f'ray_pagerouter_batch_size_bucket{{{lab},le="2.0"}} {c1 + c2}',
                     f'ray_pagerouter_batch_size_bucket{{{lab},le="4.0"}} {total}',
                     f'ray_pagerouter_batch_size_bucket{{{lab},le="+Inf"}} {total}',
                     f"ray_pagerouter_batch_size_sum{{{lab}}} {c1 + 2 * c2 + 4 * c4}",
                     f"ray_pagerouter_batch_size_count{{{lab}}} {total}"]
        return "\n".join(rows)

    pages = {"start": scrape({"a": (50, 10, 0), "b": (7, 0, 0)}),
             "end": scrape({"a": (52, 13, 2), "b": (1, 0, 1), "c": (0, 1, 0)})}
    state = {"now": "start"}

    class R:
        def __init__(self, text):
            self.text = text

    monkeypatch.setattr(server_view.httpx, "get", lambda url, timeout=None: R(pages[state["now"]]))
    before = server_view.read_histogram(["http://127.0.0.1:1/metrics"])
    state["now"] = "end"
    run = server_view.batch_sizes(["http://127.0.0.1:1/metrics"], before)
    # a: +2 of 1, +3 of 2, +2 of 4; b restarted: 1 of 1, 1 of 4; c new: 1 of 2
    assert run == {"layout": {"<=1": 3, "<=2": 4, "<=4": 3, "calls": 10, "mean": round((3 + 8 + 12) / 10, 3)}}
    since_start = server_view.batch_sizes(["http://127.0.0.1:1/metrics"])
    assert since_start["layout"]["calls"] == 70  # what the old report showed: the server's whole life (67 + 2 + 1)


def test_report_charts_and_unauthorized_headline(tmp_path):
    recs = [{"t": 1000.0 + i * 0.5, "client": "http", "outcome": "ok", "kind": "200", "op": "pages",
             "latency_ms": 10.0 + i, "pages": 1, "routes": ["ocr"]} for i in range(20)]
    recs += [{"t": 1003.0, "client": "grpc", "outcome": "error", "kind": "UNAUTHENTICATED:unauthorized",
              "op": "unary_page", "latency_ms": 1.0, "pages": 0, "routes": []}]
    clients = {"http": summarize(recs[:20], 20, 10.0), "grpc": summarize(recs[20:], 1, 10.0)}
    assert clients["grpc"]["unauthorized"] == 1 and clients["http"]["unauthorized"] == 0
    rep = report_mod.build_report({"profile": {"kind": "steady"}, "start_t": 1000.0}, clients, [],
                                  {"layout": {"<=1": 3, "<=2": 4, "calls": 7, "mean": 1.571}}, recs)
    tl = rep["timeline"]["clients"]["http"]
    assert sum(r["requests_per_s"] for r in tl) * rep["timeline"]["bucket_s"] == 20
    assert all(r["p50_ms"] <= r["p95_ms"] for r in tl if r["p50_ms"] is not None)
    _, md_path = report_mod.write_report(rep, tmp_path)
    md = md_path.read_text()
    assert "**UNAUTHORIZED: 1 of 21 requests" in md
    for chart in ("throughput.png", "latency.png", "batch_sizes.png"):
        assert (tmp_path / chart).stat().st_size > 1000 and f"]({chart})" in md


def test_source_address_lists():
    from load_tests.access import parse_source_addresses

    assert parse_source_addresses("127.0.0.2-127.0.0.4,127.0.0.9") == ["127.0.0.2", "127.0.0.3", "127.0.0.4",
                                                                       "127.0.0.9"]
    assert parse_source_addresses("") == [] and parse_source_addresses(None) == []
    with pytest.raises(SystemExit, match="loopback"):
        parse_source_addresses("10.0.0.2")
    with pytest.raises(SystemExit):
        parse_source_addresses("127.0.0.9-127.0.0.2")


@pytest.mark.serve
def test_load_http_sends_the_key_and_calls_401s_unauthorized(fake_server, tmp_path):
    fake, url, _ = fake_server
    pdf = tmp_path / "digital.pdf"
    pdf.write_bytes(default_mix()[0].data)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PAGEROUTER_API_KEY", None)
    key_file = tmp_path / "key"
    key_file.write_text(FAKE_KEY + "\n")  # the file form: its first line is the key
    cmd = [sys.executable, str(REPO / "load_tests" / "load_http.py"), str(pdf), "--url", url, "--requests", "6",
           "--concurrency", "2", "--source-addresses", "127.0.0.4,127.0.0.5"]
    keyed = subprocess.run(cmd, env={**env, "PAGEROUTER_API_KEY_FILE": str(key_file)}, capture_output=True,
                           text=True, timeout=60)
    assert keyed.returncode == 0 and "statuses: 200: 6" in keyed.stdout, keyed.stdout + keyed.stderr
    assert set(fake.peers) == {"127.0.0.4", "127.0.0.5"} and fake.refused == 0
    env.pop("PAGEROUTER_API_KEY_FILE", None)
    bare = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert bare.returncode == 1 and bare.stdout.startswith("UNAUTHORIZED: 6 of 6"), bare.stdout
    assert "0 converted" in bare.stdout and fake.refused == 6
