"""The README's "Try the VLM tiers on a CPU", as a new user runs it: its command block verbatim
(the tiny model built by scripts/build_tiny_vlm.py, configs/vlm-cpu.yaml, a real vLLM engine on
this CPU), then `pagerouter serve` with the same config, its LargeReader going 0 -> 1 -> 0.

The model has random weights: every attempt is rejected and the page keeps its first reading,
flagged. What is checked is what the issue asked the output to tell truthfully: the attempts
and their reasons, the flags, no control characters, timings that add up, a quiet stdout."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from pagerouter.bench.systems import ROUTER_STAGES
from pagerouter.render.output import has_control_chars
from tests.conftest import require_vlm_cpu
from tests.serve_fixtures import free_ports, wait_for
from tests.test_output_hygiene import strings

REPO = Path(__file__).resolve().parents[1]
LADDER = [0.1, 0.1, 0.2, 0.3, 0.5, 0.8, 0.9, 1.0]
NOISE = ("Traceback", "Task was destroyed", "shutdown failed", "Exception ignored")


def readme_steps() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- cpu-vlm-steps", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def workdir(tmp_path: Path) -> Path:
    """A directory that looks like the repository root to the README's relative paths."""
    for name in ("samples", "configs", "scripts"):
        (tmp_path / name).symlink_to(REPO / name)
    return tmp_path


def env() -> dict[str, str]:
    # the checkout under test first (the installed package may be another checkout)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.vlm
@pytest.mark.slow
def test_readme_cpu_vlm_steps_verbatim(tmp_path):
    require_vlm_cpu()
    cwd = workdir(tmp_path)
    steps = readme_steps()
    assert len(steps) == 3 and "configs/vlm-cpu.yaml" in steps[1]
    runs = []
    for step in steps:
        t0 = time.perf_counter()
        r = subprocess.run(["bash", "-c", step], cwd=cwd, capture_output=True, text=True, timeout=1200, env=env())
        runs.append((r, time.perf_counter() - t0))
        assert r.returncode == 0, f"{step}\n{r.stderr[-3000:]}"
        print(f"\n{time.perf_counter() - t0:6.1f} s  {step[:90]}")
    (build, _), (convert, convert_s), (show, _) = runs
    assert "models/tiny-qwen2vl" in build.stdout
    # stdout carries only the document (here: nothing, it went to out/): vLLM's own log lines, which
    # it writes to stdout unless told otherwise (engine_vllm.py), would land here; no exit noise on stderr
    assert convert.stdout == ""
    assert not [n for n in NOISE if n in convert.stderr], convert.stderr[-3000:]

    data = json.loads((cwd / "out" / "mixed-sample.json").read_text(encoding="utf-8"))
    page = data["pages"][0]
    assert page["number"] == 2 and page["route"] == "ocr" and page["status"] == "flagged"
    assert "vlm_ladder_exhausted" in page["flags"]
    small = [a for a in page["attempts"] if a["tier"] == "small_reader"]
    large = [a for a in page["attempts"] if a["tier"] == "escalation"]
    assert small and large and all(a["engine"].startswith("vllm 0.32") for a in small + large)
    assert [a["temperature"] for a in large] == LADDER[: len(large)]
    assert all(not a["accepted"] and a["rejected_because"] for a in small + large)
    # a length stop names the limit it hit, with the numbers of that very attempt
    for a in small + large:
        for why in a["rejected_because"]:
            m = re.match(r"vlm_truncated: hit max_tokens (\d+) \((\d+) tokens generated\)", why)
            if m:
                assert int(m[1]) == int(m[2]) == a["completion_tokens"], a
            m = re.match(r"vlm_truncated: hit max_model_len (\d+) \((\d+) prompt \+ (\d+) generated", why)
            if m:
                assert int(m[2]) == a["prompt_tokens"] and int(m[2]) + int(m[3]) >= int(m[1]), a
    exhausted = next(c for c in page["checks"] if c["name"] == "vlm_ladder_exhausted")
    assert exhausted["reason"].startswith("kept the first reading")

    # no control characters anywhere; the kept reading is marked in the Markdown
    assert not [s for s in strings(data) if has_control_chars(s)]
    md = (cwd / "out" / "mixed-sample.md").read_text(encoding="utf-8")
    assert not has_control_chars(md)
    assert md.startswith("<!-- page 2 flagged vlm_ladder_exhausted")

    # one key per stage, adding up to at most the wall time (the run's, and the table's own line)
    assert set(page["timings"]) <= set(ROUTER_STAGES) and "escalate" in page["timings"], page["timings"]
    total = sum(page["timings"].values())
    assert total <= convert_s
    table = dict(re.findall(r"^(total|wall)\s+(?:\d+\s+\d+\s+)?([\d.]+)", convert.stderr, re.M))
    assert float(table["total"]) <= float(table["wall"]) <= convert_s

    # the one-liner shows where the attempts are
    lines = show.stdout.splitlines()
    assert lines[0].startswith("flagged [") and len(lines) == 1 + len(page["attempts"])
    assert lines[1].startswith("small_reader 1 0.1")


def healthz(url: str) -> dict:
    try:
        return httpx.get(f"{url}/healthz", timeout=10).json()
    except (httpx.HTTPError, ValueError):
        return {}


def large_state(url: str) -> str:
    return ((healthz(url).get("deployments") or {}).get("LargeReader") or {}).get("state", "")


@pytest.mark.vlm
@pytest.mark.serve
@pytest.mark.slow
def test_serve_with_the_cpu_vlm_config_wakes_the_large_reader_and_lets_it_sleep(tmp_path, tiny_vlm_dir):
    cwd = workdir(tmp_path)
    (cwd / "models").mkdir()
    (cwd / "models" / "tiny-qwen2vl").symlink_to(tiny_vlm_dir)
    http_port, grpc_port = free_ports(2)
    url = f"http://127.0.0.1:{http_port}"
    err_path = tmp_path / "serve.err"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pagerouter.cli.main", "serve", "--config", "configs/vlm-cpu.yaml",
         "--http-port", str(http_port), "--grpc-port", str(grpc_port)],
        cwd=cwd, stdout=subprocess.PIPE, stderr=err_path.open("w"), text=True,
        env={**env(), "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled"},
    )
    try:
        def up():
            assert proc.poll() is None, err_path.read_text()[-3000:]
            return healthz(url).get("status") == "ok"

        wait_for(up, 600, "pagerouter serve with the CPU VLM config to be ready", interval=2)
        assert large_state(url) == "scaled_to_zero"
        states: list[str] = []
        done = threading.Event()

        def watch():
            while not done.is_set():
                states.append(large_state(url))
                time.sleep(1)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        t0 = time.perf_counter()
        with open(REPO / "samples" / "mixed-sample.pdf", "rb") as f:
            r = httpx.post(f"{url}/v1/convert", params={"pages": "2"}, timeout=900,
                           files={"file": ("mixed-sample.pdf", f, "application/pdf")})
        done.set()
        watcher.join(timeout=15)
        print(f"\nflagged page through a LargeReader woken from zero: {time.perf_counter() - t0:.1f} s")
        assert r.status_code == 200, r.text[:500]
        page = r.json()["pages"][0]
        # it woke in time (no escalation_timeout): the ladder ran on the woken engine, then the fallback
        assert page["status"] == "flagged" and "escalation_timeout" not in page["flags"], page["flags"]
        assert "vlm_ladder_exhausted" in page["flags"], page["flags"]
        tiers = [a["tier"] for a in page["attempts"]]
        assert "small_reader" in tiers and tiers.count("escalation") >= 1, tiers
        assert all(a["engine"].startswith("vllm 0.32") for a in page["attempts"]), page["attempts"]
        assert {"waking", "ready", "busy"} & set(states), states  # 0 -> 1
        t1 = time.perf_counter()
        wait_for(lambda: large_state(url) == "scaled_to_zero", 180, "the LargeReader back at zero", interval=2)
        print(f"back at zero {time.perf_counter() - t1:.1f} s after the page")  # 1 -> 0
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, err_path.read_text()[-3000:]
        assert out == ""  # Ray's own lines (raylet, controller, shutdown) are not on stdout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)
