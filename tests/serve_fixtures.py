"""One real Ray Serve session for all `serve` tests (imported via `pytest_plugins`).

Starts a local Ray (8 logical CPUs on 2 cores, no dashboard), Serve's HTTP and gRPC proxies
on free loopback ports with tracing on, and deploys configs/serve.yaml the way
`serve run configs/serve.yaml` does (controller `deploy_apps`, so the YAML's per-deployment
overrides are exercised), patched with short delays, plus a second application whose
LargeReader asks for a GPU this machine does not have. Teardown always stops Serve and Ray.
"""

from __future__ import annotations

import contextlib
import copy
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest
import yaml

from pagerouter.bench import synth

REPO = Path(__file__).resolve().parent.parent
SERVE_YAML = REPO / "configs" / "serve.yaml"
CALL_TIMEOUT_S = 120.0
GPU_ESCALATION_TIMEOUT_S = 4.0
REPEATED_LINE = "Repeat after me: the same line again"


# Below Linux's ephemeral range (32768-60999), where the kernel hands out port 0 binds, and
# above Ray's worker ports (10002-19999): a port picked here cannot be taken meanwhile by a Ray
# process's own bind-to-0. Two port-0 picks in a row also may return the same port (CI gave
# the HTTP and gRPC proxies one port), so every pick holds its socket until all are chosen.
_PORT_RANGE = (20000, 32000)


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports, each free at the moment it was picked."""
    import random

    held: list[socket.socket] = []
    try:
        for port in random.sample(range(*_PORT_RANGE), 200):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            held.append(s)
            if len(held) == count:
                return [h.getsockname()[1] for h in held]
        raise RuntimeError(f"no {count} free ports in {_PORT_RANGE}")
    finally:
        for h in held:
            h.close()


def free_port() -> int:
    return free_ports(1)[0]


def main_app_config() -> dict:
    """The pagerouter config of the main test app: short autoscaling delays, fast escalation."""
    return {
        "serve": {
            "escalation_timeout_s": 90,
            "tracing": {"enabled": True},
            "layout": {"max_batch_size": 4, "batch_wait_timeout_s": 0.2, "max_ongoing_requests": 16},
            "small_reader": {"max_batch_size": 4, "batch_wait_timeout_s": 0.2, "max_ongoing_requests": 16},
        },
        # Escalation witnesses here: Tesseract + the first RapidOCR reading, which are two independent
        # engines, so the Serve tests still run a real two-engine vote. The hi-res RapidOCR re-read is
        # left off: it is the SAME engine as the first reading (it would replace it in the vote, never
        # add an independent witness) and at 2600 px it costs seconds per page on these 2 cores, shared
        # with Ray's 8 logical CPUs, against escalation_timeout_s. Hi-res voting with real engines is
        # covered by tests/test_escalation.py::test_noisy_scan_end_to_end_is_voted.
        "ocr": {"pages_in_flight": 8, "escalation": {"use_rapidocr_hires": False}},
    }


def gpu_app_config() -> dict:
    cfg = main_app_config()
    cfg["serve"]["escalation_timeout_s"] = GPU_ESCALATION_TIMEOUT_S
    cfg["serve"]["app_name"] = "gpu"
    return cfg


def _autoscaling(min_r: int, max_r: int, **kw) -> dict:
    base = {"min_replicas": min_r, "max_replicas": max_r, "target_ongoing_requests": 2,
            "upscale_delay_s": 1, "downscale_delay_s": 2, "look_back_period_s": 2, "metrics_interval_s": 0.5}
    return {**base, **kw}


def serve_deploy_config(http_port: int, grpc_port: int) -> dict:
    """configs/serve.yaml with test ports, args and short delays; plus the GPU app."""
    raw = yaml.safe_load(SERVE_YAML.read_text())
    raw["http_options"]["port"] = http_port
    raw["grpc_options"]["port"] = grpc_port
    raw["tracing_config"] = {"enabled": True, "sampling_ratio": 1.0}
    main = raw["applications"][0]
    main["args"]["config"] = main_app_config()
    for dep in main["deployments"]:
        if dep["name"] == "LargeReader":
            dep["autoscaling_config"] = _autoscaling(0, 1, initial_replicas=0, downscale_to_zero_delay_s=2)
        else:
            dep["autoscaling_config"] = _autoscaling(1, 1)
    gpu = copy.deepcopy(main)
    gpu["name"] = "gpu"
    gpu["route_prefix"] = "/gpu"
    gpu["args"]["config"] = gpu_app_config()
    for dep in gpu["deployments"]:
        if dep["name"] == "LargeReader":
            dep["ray_actor_options"] = {"num_cpus": 0.5, "num_gpus": 1}
    raw["applications"].append(gpu)
    return raw


@dataclass
class ServeSession:
    http_url: str
    grpc_target: str
    gpu_http_url: str
    session_dir: str
    metrics_url: str

    def handle(self, deployment: str, app: str = "pagerouter"):
        from ray import serve

        return serve.get_deployment_handle(deployment, app_name=app)

    def replicas(self, deployment: str, app: str = "pagerouter") -> int:
        """Running replicas of a deployment, from Serve's status."""
        from ray import serve

        st = serve.status().applications[app].deployments[deployment]
        return int(st.replica_states.get("RUNNING", 0))


def wait_for(predicate, timeout: float, what: str, interval: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def wait_until_running(serve, names: list[str], timeout_s: float) -> None:
    """Wait until every application in `names` is RUNNING; raise at once on DEPLOY_FAILED, or
    after `timeout_s` with the statuses seen."""
    deadline = time.monotonic() + timeout_s
    while True:
        apps = serve.status().applications
        states = {n: (apps[n].status if n in apps else "MISSING") for n in names}
        failed = {n: apps[n].message for n in names if n in apps and apps[n].status == "DEPLOY_FAILED"}
        if failed:
            raise RuntimeError(f"Serve applications failed to deploy: {failed}")
        if all(s == "RUNNING" for s in states.values()):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"Serve applications not running after {timeout_s:.0f} s: {states}")
        time.sleep(0.5)


@pytest.fixture(scope="session")
def serve_session(tmp_path_factory):
    import ray
    from ray import serve
    from ray.serve.context import _get_global_client
    from ray.serve.config import HTTPOptions, gRPCOptions
    from ray.serve.schema import ServeDeploySchema, TracingConfig

    from pagerouter.graph.serve_command import SERVE_PROXY_PATIENCE

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    for name, seconds in SERVE_PROXY_PATIENCE.items():  # as `pagerouter serve` gives a local Ray
        os.environ.setdefault(name, seconds)
    http_port, grpc_port, metrics_port = free_ports(3)
    raw = serve_deploy_config(http_port, grpc_port)
    ray.init(num_cpus=8, include_dashboard=False, namespace="pagerouter-tests", log_to_driver=False,
             _metrics_export_port=metrics_port)
    try:
        serve.start(
            http_options=HTTPOptions(**raw["http_options"]),
            grpc_options=gRPCOptions(**raw["grpc_options"]),
            tracing_config=TracingConfig(enabled=True, sampling_ratio=1.0),
        )
        client = _get_global_client()  # the controller client `serve run config.yaml` deploys through
        client.deploy_apps(ServeDeploySchema.model_validate(raw))
        # Serve's own blocking deploy gives up after a fixed 60 s; on a busy machine starting every
        # replica (isolation workers, models) took longer. A deploy that fails still fails at once.
        wait_until_running(serve, [app["name"] for app in raw["applications"]], timeout_s=600)
        session_dir = ray._private.worker._global_node.get_session_dir_path()
        yield ServeSession(
            http_url=f"http://127.0.0.1:{http_port}",
            grpc_target=f"127.0.0.1:{grpc_port}",
            gpu_http_url=f"http://127.0.0.1:{http_port}/gpu",
            session_dir=session_dir,
            metrics_url=f"http://127.0.0.1:{metrics_port}/metrics",
        )
    finally:
        # ray.shutdown() of the driver that started this local Ray stops every Ray process,
        # Serve's detached actors included; serve.shutdown() first would add ~20 s of
        # graceful draining with nothing left to drain.
        ray.shutdown()


# -- test documents -------------------------------------------------------------------------
SMALL = (320.0, 220.0)


def build_mixed_pdf(path: Path) -> Path:
    """Born-digital, clean small scan, blank, born-digital: no page needs escalation."""
    doc = pymupdf.open()
    synth.add_text_page(doc, ["The quick brown fox jumps over the lazy dog. " * 4, "A second paragraph."], title="Served")
    synth.add_scanned_page(doc, ["Invoice number 4711", "Total amount due 99 EUR"], size=SMALL, fontsize=14)
    synth.add_blank_page(doc)
    synth.add_text_page(doc, ["Last page, born digital, with a closing sentence."])
    doc.save(path)
    doc.close()
    return path


def build_escalating_pdf(path: Path) -> Path:
    """Text page, then a scan of one line repeated (the repetition check flags it, so it is
    escalated), then a clean scan."""
    doc = pymupdf.open()
    synth.add_text_page(doc, ["This page has a healthy text layer and never needs OCR."])
    synth.add_scanned_page(doc, [REPEATED_LINE] * 8, size=(360.0, 300.0), fontsize=12)
    synth.add_scanned_page(doc, ["Shipping address 12 Main Street", "Springfield"], size=SMALL, fontsize=14)
    doc.save(path)
    doc.close()
    return path


def build_scans_pdf(path: Path, n: int) -> Path:
    """n small clean scans (for batching)."""
    doc = pymupdf.open()
    for i in range(n):
        synth.add_scanned_page(doc, [f"Scanned page number {i + 1}", "Some more words here"], size=SMALL, fontsize=14)
    doc.save(path)
    doc.close()
    return path


def comparable(doc) -> dict:
    """A document without its wall-clock timings (everything else must match exactly)."""
    d = doc.model_dump()
    for p in d["pages"]:
        p["timings"] = sorted(p["timings"])  # the same stages ran, durations differ
    return d


@contextlib.contextmanager
def pagerouter_serve_process(d: Path, cfg: Path, env: dict, http_port: int, grpc_port: int, ray_tmp: str):
    """A real `pagerouter serve` subprocess on loopback, logs in `d/serve.out` and `d/serve.err`;
    yields the process once HTTP answers /healthz and the gRPC front is listening, then stops it
    with Ctrl-C (SIGINT) as a user would, and removes Ray's temp dir."""
    import shutil
    import signal
    import subprocess
    import sys

    import httpx

    repo = Path(__file__).resolve().parents[1]
    out, err = (d / "serve.out").open("w"), (d / "serve.err").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pagerouter.cli.main", "serve", "--config", str(cfg), "--http-port", str(http_port),
         "--grpc-port", str(grpc_port), "--num-cpus", "4"],
        cwd=repo, stdout=out, stderr=err, text=True, env=env,
    )
    try:
        def healthy():
            assert proc.poll() is None, (d / "serve.err").read_text()[-3000:]
            try:
                return httpx.get(f"http://127.0.0.1:{http_port}/healthz", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(healthy, 180, "pagerouter serve to answer /healthz", interval=1)
        wait_for(lambda: "serving in" in (d / "serve.err").read_text(), 60, "the gRPC front", interval=0.5)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(90)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
        out.close()
        err.close()
        shutil.rmtree(ray_tmp, ignore_errors=True)
