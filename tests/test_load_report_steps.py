"""The load report per step (number of users): p50/p95, error rate, sent and answered requests
with their rates, and whether the `--requests` cap ended the run early. The figures come from
recorded samples (no server); one test runs Locust for real against a slow stand-in server
(no Ray) to check that the cap ends the run without Locust's "This should never happen"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from load_tests.profiles import Profile
from load_tests.report import build_report, summarize, to_markdown

REPO = Path(__file__).resolve().parent.parent
T0 = 1_700_000_000.0
RAMP = Profile(kind="ramp", users=4, duration_s=40.0, max_requests=50).bounded()


def _ramp_records() -> list[dict]:
    """A request sent every 0.5 s from t=0 until the cap of 50 (the last at 24.5 s), at the
    users RAMP asks for then: 1 user to 6.5 s, 2 from 7 s, 3 from 20 s (4 from 33.3 s: never
    reached). Latency 100 ms per user; every fifth request from 2 users on is refused (429)."""
    recs = []
    for i in range(50):
        sent = 0.5 * i
        users = RAMP.users_at(sent)
        refused = i % 5 == 4 and users >= 2
        latency = 5.0 if refused else 100.0 * users
        recs.append({"t": T0 + sent + latency / 1000, "client": "http", "input": "x", "op": "pages",
                     "latency_ms": latency, "outcome": "error" if refused else "ok",
                     "kind": "429:too_many_requests" if refused else "200", "pages": 0 if refused else 1,
                     "routes": [] if refused else ["text_layer"], "users": users})
    return recs


def test_steps_sent_answered_errors_and_latency_per_number_of_users():
    s = summarize(_ramp_records(), sent=50, wall_s=31.0, profile=RAMP.__dict__, capped_at_s=24.5)
    assert (s["sent"], s["answered"], s["error_count"], s["error_rate"]) == (50, 42, 8, 0.16)
    assert s["load_s"] == 24.505  # first sent (0 s) to last answer (24.5 s + 5 ms), not the 31 s wall
    assert (s["sent_per_s"], s["answered_per_s"]) == (round(50 / 24.505, 3), round(42 / 24.505, 3))
    assert (s["latency"]["p50_ms"], s["latency"]["p95_ms"], s["latency"]["count"]) == (200.0, 300.0, 42)
    rows = {r["users"]: r for r in s["steps"]}
    assert sorted(rows) == [1, 2, 3, 4]
    one, two, three = rows[1], rows[2], rows[3]
    assert (one["seconds"], one["sent"], one["answered"], one["error_count"]) == (7.0, 14, 14, 0)
    assert (one["sent_per_s"], one["p50_ms"], one["p95_ms"], one["cut_by_cap"]) == (2.0, 100.0, 100.0, False)
    assert (two["seconds"], two["sent"], two["answered"], two["errors"]) == (13.0, 26, 20, {"429:too_many_requests": 6})
    assert (two["error_rate"], two["sent_per_s"], two["answered_per_s"]) == (0.2308, 2.0, 1.538)
    assert (two["p50_ms"], two["p95_ms"]) == (200.0, 200.0)
    assert (three["seconds"], three["sent"], three["answered"], three["error_rate"]) == (4.51, 10, 8, 0.2)
    assert three["cut_by_cap"] and three["planned_s"] == 13.35
    assert rows[4] == {"users": 4, "ran": False, "planned_s": 6.65}
    assert s["cap"] == {"max_requests": 50, "reached": True, "reached_at_s": 24.5, "duration_s": 40.0,
                        "ended_early": True}


def _table(md: str, header: str) -> list[list[str]]:
    """The rows (cells) of the Markdown table whose header line starts with `header`."""
    lines = md.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def test_markdown_says_what_each_step_measured_and_that_the_cap_cut_the_run():
    recs = _ramp_records()
    clients = {"http": summarize(recs, 50, 31.0, RAMP.__dict__, 24.5)}
    md = to_markdown(build_report({"profile": RAMP.__dict__, "start_t": T0}, clients, [], {}, recs))
    assert _table(md, "| users |") == [
        ["1", "7", "14", "2", "14", "2", "0", "0.0 %", "100", "100", ""],
        ["2", "13", "26", "2", "20", "1.538", "6 (429:too_many_requests x6)", "23.1 %", "200", "200", ""],
        ["3", "4.51", "10", "2.22", "8", "1.776", "2 (429:too_many_requests x2)", "20.0 %", "300", "300",
         "cut short by the --requests cap"],
        ["4", "-", "-", "-", "-", "-", "-", "-", "-", "-", "not run: the cap ended the run first"],
    ]
    assert ("**The --requests cap (50 requests) ended the run early at 24.5 s, before the profile's 40 s: the "
            "3-user step ran 4.51 s of the 13.35 s planned; steps never run: 4 users.") in md
    head = next(line for line in md.splitlines() if line.startswith("sent "))
    assert head.startswith("sent 50 (2.04/s) = answered 42 (1.714/s; ok 42, expected 4xx 0) + errors 8 (16.0 % of sent)")
    assert ["all ok answers", "42", "200", "300", "300", "300"] in _table(md, "| latency |")


def test_a_steady_run_within_its_cap_is_one_step_and_no_cap_line():
    """Records without `users` (an older generator) fall back on a steady profile's users; a run
    that ended at its duration says nothing about the cap."""
    steady = Profile(kind="steady", users=8, duration_s=10.0, max_requests=500).bounded()
    recs = [{"t": T0 + i * 0.25 + 0.1, "op": "pages", "latency_ms": 100.0, "outcome": "ok", "kind": "200",
             "pages": 1, "routes": ["ocr"]} for i in range(40)]
    s = summarize(recs, sent=41, wall_s=12.0, profile=steady.__dict__, capped_at_s=None)
    assert s["cap"]["ended_early"] is False and not s["cap"]["reached"]
    [step] = s["steps"]
    assert (step["users"], step["sent"], step["answered"], step["errors"]) == (8, 41, 40, {"unfinished_at_stop": 1})
    md = to_markdown(build_report({"profile": steady.__dict__}, {"http": s}, [], {}, recs))
    assert "--requests cap" not in md


# -- Locust for real, at the cap ---------------------------------------------------------------
class _Slow:
    """A stand-in API that answers every conversion after 0.2-0.6 s (users stay mid-request)."""

    def __enter__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import parse_qsl, urlparse

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(200, {"deployments": {"Ingress": {"running_replicas": 1}}})

            def do_POST(self):
                url = urlparse(self.path)
                query = dict(parse_qsl(url.query))
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                time.sleep(0.2 + (hash(body[-64:] + url.query.encode()) % 5) / 10)
                if not body.startswith(b"%PDF"):
                    return self._send(422, {"error": {"code": "bad_input"}})
                if query.get("page") == "99":
                    return self._send(422, {"error": {"code": "bad_pages"}})
                page = {"number": 1, "status": "ok", "blocks": [],
                        "route": "ocr" if "scan" in query.get("filename", "") else "text_layer"}
                return self._send(200, page if url.path == "/v1/pages" else {"pages": [page, page]})

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # 64 users connect at once
            daemon_threads = True

        self.http = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        return f"http://127.0.0.1:{self.http.server_address[1]}"

    def __exit__(self, *exc):
        self.http.shutdown()
        self.http.server_close()
        self.thread.join(10)


@pytest.mark.slow
@pytest.mark.serve
def test_locust_ends_at_the_cap_without_stopping_users_twice(tmp_path):
    """64 users against a cap of 150: the cap ends the run long before its 60 s; every request
    sent is answered and recorded, the report says the cap ended the run, and Locust stops each
    user once (before the fix, its main greenlet quit a second time while the cap's quit was still
    stopping users, and every user mid-task raised "This should never happen")."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PAGEROUTER_API_KEY", None)
    env.pop("PAGEROUTER_API_KEY_FILE", None)
    out = tmp_path / "capped"
    with _Slow() as url:
        run = subprocess.run(
            [sys.executable, str(REPO / "load_tests" / "run_profile.py"), "--out", str(out), "--url", url,
             "--client", "http", "--users", "64", "--duration", "60", "--requests", "150",
             "--sample-interval", "2", "--metrics-wait", "0", "--timeout", "20"],
            check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    log = (out / "locust.out").read_text()
    assert "This should never happen" not in log and "Traceback" not in log, log[-3000:]
    rep = json.loads((out / "report.json").read_text())
    c = rep["clients"]["http"]
    assert (c["sent"], c["answered"] + c["error_count"], c["locust"]["requests"]) == (150, 150, 150), run.stderr[-2000:]
    assert c["cap"]["ended_early"] and c["cap"]["reached_at_s"] < 60
    assert [s["users"] for s in c["steps"]] == [64] and c["steps"][0]["cut_by_cap"]
    assert "**The --requests cap (150 requests) ended the run early" in (out / "report.md").read_text()
