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
from tests.serve_fixtures import free_ports, pagerouter_serve_process

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
    http_port, grpc_port = free_ports(2)
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
