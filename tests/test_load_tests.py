"""load_tests/ against a real `pagerouter serve`: Locust headless (HTTP) and the gRPC generator
run together by the runner for a few seconds; the report's counts must add up against the
generators' own counts (Locust's stats CSV, the gRPC generator's summary), the bad inputs must
show as their expected 4xx / INVALID_ARGUMENT kinds, the scanned page must take the `ocr`
route, replica counts must be there. Plus the pure parts (profiles, percentiles, caps)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from load_tests.inputs import Picker, default_mix, parse_weights
from load_tests.profiles import Profile, check_target
from load_tests.records import judge
from load_tests.report import percentile, summarize
from load_tests import report as report_mod
from load_tests import server_view
from tests.serve_fixtures import free_port, pagerouter_serve_process

REPO = Path(__file__).resolve().parent.parent
CONFIG = {
    "limits": {"max_requests_per_client": 16},
    # replicas 2: `pagerouter serve` derives ceilings and fractional CPUs (graph/replicas.py); floors stay 1
    "serve": {"replicas": 2, "layout": {"max_batch_size": 4, "batch_wait_timeout_s": 0.05},
              "small_reader": {"max_batch_size": 4, "batch_wait_timeout_s": 0.05}},
}
# Each input once per round of 5 requests (inputs.Picker), so a capped run still sends every kind.
WEIGHTS = "digital_page=1,digital_doc=1,scanned_page=1,bad_not_pdf=1,bad_page=1"
REQUESTS = 10


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    # Never `import locust` here: importing it monkey-patches the whole process with gevent,
    # which hung every later test of the session. The runner starts Locust in its own process.
    assert importlib.util.find_spec("locust"), "locust is missing: install the `load` extra"
    d = tmp_path_factory.mktemp("load")
    cfg = d / "serve.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    ray_tmp = tempfile.mkdtemp(prefix="prlt", dir="/tmp")
    http_port, grpc_port = free_port(), free_port()
    env = {**os.environ, "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp,
           "PYTHONPATH": str(REPO)}
    env.pop("PAGEROUTER_API_KEY_FILE", None)
    # a keyed server: the runner and both generators get the same environment, so `errors == {}`
    # below also proves every generator sent the key (the server answers 401 without it)
    env["PAGEROUTER_API_KEY"] = "real-server-load-key-42"
    with pagerouter_serve_process(d, cfg, env, http_port, grpc_port, ray_tmp) as proc:
        out = d / "report"
        # Bounded by the request count (the duration is only a backstop): the counts the tests
        # check do not depend on how fast this machine is today.
        t0 = time.monotonic()
        run = subprocess.run(
            [sys.executable, str(REPO / "load_tests" / "run_profile.py"), "--out", str(out),
             "--url", f"http://127.0.0.1:{http_port}", "--grpc", f"127.0.0.1:{grpc_port}", "--serve-pid", str(proc.pid),
             "--client", "both", "--users", "2", "--duration", "120", "--requests", str(REQUESTS),
             "--weights", WEIGHTS, "--sample-interval", "1", "--metrics-wait", "0", "--timeout", "90"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
        )
        print(f"load run: {time.monotonic() - t0:.1f} s")
    assert (out / "report.json").exists(), run.stdout[-2000:] + run.stderr[-3000:]
    return json.loads((out / "report.json").read_text()), out, run


def _check_counts(c: dict) -> None:
    assert c["sent"] == c["answered"] + c["error_count"]
    assert c["answered"] == c["ok"] + sum(c["expected_4xx"].values())


@pytest.mark.slow
@pytest.mark.serve
def test_locust_run_counts_add_up_and_bad_inputs_are_their_4xx(report):
    rep, out, run = report
    http = rep["clients"]["http"]
    _check_counts(http)
    assert http["sent"] >= 5, (out / "locust.out").read_text()[-2000:]
    assert http["locust"]["requests"] == http["answered"] + http["error_count"] - http["errors"].get(
        "unfinished_at_stop", 0)
    assert http["locust"]["failures"] == http["error_count"] - http["errors"].get("unfinished_at_stop", 0)
    assert http["errors"] == {}, http["errors"]
    assert set(http["expected_4xx"]) == {"422:bad_input", "422:bad_pages"}
    assert http["pages_per_s"] > 0
    for route in ("text_layer", "ocr"):  # the born-digital page and the scan must take these
        assert http["latency_by_route"][route]["p99_ms"] > 0
    assert set(http["latency_by_op"]) == {"pages", "convert"}
    md = (out / "report.md").read_text()
    assert "| route ocr |" in md and "422:bad_input" in md


@pytest.mark.slow
@pytest.mark.serve
def test_grpc_run_counts_add_up_with_unary_and_streaming(report):
    rep, _, _ = report
    g = rep["clients"]["grpc"]
    _check_counts(g)
    assert g["sent"] == g["generator"]["sent"] == g["generator"]["recorded"] >= 5
    assert g["errors"] == {}, g["errors"]
    assert set(g["expected_4xx"]) == {"INVALID_ARGUMENT:bad_input", "INVALID_ARGUMENT:bad_pages"}
    assert g["pages_per_s"] > 0 and g["latency_by_route"]["ocr"]["count"] >= 1
    assert {"unary_page", "unary_doc"} <= set(g["latency_by_op"])


@pytest.mark.slow
@pytest.mark.serve
def test_report_has_replica_counts_and_replica_memory(report):
    rep, _, _ = report
    assert {"Ingress", "Triage", "Layout", "SmallReader"} <= set(rep["replicas"])
    assert all(rep["replicas"][n]["max"] >= 1 for n in ("Ingress", "Triage", "Layout", "SmallReader"))
    assert len(rep["samples"]) >= 2
    # every running replica process was found and measured (a Layout replica holds its model: > 100 MB)
    assert rep["memory"]["Layout"]["max_replica_mb"] > 100



@pytest.mark.slow
@pytest.mark.serve
def test_served_replicas_come_from_the_derivation(report):
    """serve.replicas: 2 went through `pagerouter serve` into what Serve applied."""
    rep, _, _ = report
    applied = rep["meta"]["deployments_at_start"]
    for name in ("Triage", "Layout", "SmallReader"):
        assert applied[name]["autoscaling_config"]["max_replicas"] == 2, applied[name]
        assert applied[name]["autoscaling_config"]["min_replicas"] == 1
    assert applied["Ingress"]["autoscaling_config"]["max_replicas"] == 1
    reserved = sum(applied[n]["autoscaling_config"]["max_replicas"] * applied[n]["ray_actor_options"]["num_cpus"]
                   for n in ("Ingress", "Triage", "Layout", "SmallReader", "LargeReader"))
    assert reserved <= 4 + 1e-9  # every ceiling fits in the 4 logical CPUs the fixture gives Ray


# -- pure parts ---------------------------------------------------------------------------------
def test_profiles_shape_users_over_time():
    burst = Profile(kind="burst", users=8, base_users=1, duration_s=30, burst_at_s=10, burst_for_s=5)
    assert [burst.users_at(t) for t in (0, 9.9, 10, 14.9, 15, 29.9)] == [1, 1, 8, 8, 1, 1]
    assert burst.users_at(30) is None
    ramp = Profile(kind="ramp", users=5, duration_s=10)
    seen = [ramp.users_at(t) for t in range(10)]
    assert seen[0] == 1 and seen[-1] == 5 and seen == sorted(seen)
    capped = Profile(users=10_000, duration_s=1e6, max_requests=10**9).bounded()
    assert (capped.users, capped.duration_s, capped.max_requests) == (64, 600.0, 5000)


def test_remote_targets_are_refused_unless_allowed():
    assert check_target("http://127.0.0.1:8000/") == "http://127.0.0.1:8000"
    assert check_target("localhost:9000") == "localhost:9000"
    with pytest.raises(SystemExit, match="loopback"):
        check_target("http://10.1.2.3:8000")
    with pytest.raises(SystemExit, match="loopback"):
        check_target("example.com:9000")
    assert check_target("example.com:9000", allow_remote=True) == "example.com:9000"


def test_mix_rounds_hold_every_input_in_their_weights():
    mix = default_mix(parse_weights("digital_page=3,digital_doc=0"))
    picker = Picker(mix)
    first = [picker.next().name for _ in range(len(picker.sequence))]
    # digital_page as asked, digital_doc dropped, the others at their default weights
    assert sorted(first) == sorted(["digital_page"] * 3 + ["scanned_page"] * 2 + ["bad_not_pdf", "bad_page"])
    assert [picker.next().name for _ in first] == first  # the next round repeats the sequence
    with pytest.raises(SystemExit):
        default_mix(parse_weights("no_such_input=1"))


def test_judging_and_summary_counts():
    assert judge(422, "bad_input", 422, "bad_input", [], ()) == ("expected", "422:bad_input")
    assert judge(422, "bad_input", 200, "", ["text_layer"], ()) == ("error", "200")
    assert judge(200, "", 200, "", ["text_layer"], ("ocr",)) == ("error", "wrong_answer")
    assert judge(200, "", 503, "overloaded", [], ()) == ("error", "503:overloaded")
    recs = [{"outcome": "ok", "kind": "200", "op": "pages", "latency_ms": float(i), "pages": 1, "routes": ["ocr"]}
            for i in range(1, 101)]
    recs.append({"outcome": "expected", "kind": "422:bad_input", "op": "convert", "latency_ms": 3.0, "pages": 0,
                 "routes": []})
    s = summarize(recs, sent=103, wall_s=10.0)
    assert s["answered"] == 101 and s["errors"] == {"unfinished_at_stop": 2} and s["sent"] == 103
    assert s["latency_by_route"]["ocr"]["p99_ms"] == 99.0 and s["pages_per_s"] == 10.0
    assert percentile([], 50) is None



# -- a keyed fake server: the generators' key, per-run batch figures, charts, source addresses --
# The real graph is exercised above (slow); these run the runner and both generators for real
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
                    return self._send(429, {"error": {"code": "too_many_requests"}})
                time.sleep(0.02)
                status, payload = fake.answer(url.path, dict(parse_qsl(url.query)), body,
                                              self.headers.get("authorization"), peer)
                return self._send(status, payload)
            finally:
                with fake.lock:
                    fake.in_flight[peer] -= 1

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
    from deployments.limits import peer_host

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
