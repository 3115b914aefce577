"""Run a load profile against the pagerouter graph and write a report (Markdown + JSON).

    python load_tests/run_profile.py --out /tmp/load --profile burst --users 12 --base-users 1 \\
        --burst-at 20 --burst-for 40 --duration 120 --client http [--replicas auto]
    python load_tests/run_profile.py --url http://127.0.0.1:8000 --grpc 127.0.0.1:9000 --client both ...
    python load_tests/run_profile.py --cluster 2+4 --replicas auto --profile burst ...   # see README
    python load_tests/run_profile.py --address 127.0.0.1:6390 --ray-temp-dir /tmp/prc ...  # a `ray start` cluster

Without --url it starts `pagerouter serve` (a subprocess on free loopback ports, its own Ray temp
dir, --config/--replicas/--num-cpus passed on) and stops it with Ctrl-C at the end. With
--cluster HEAD+WORKER it first starts a local two-node Ray cluster (ray.cluster_utils: a head
with HEAD logical CPUs and a worker node with WORKER, both processes of this runner, in a temp
dir of its own), serves the graph on it with `pagerouter serve --address`, and shuts down only
that cluster. Clients: Locust headless (load_tests/locustfile.py) for HTTP, load_tests/load_grpc.py
for gRPC, or both at once. While they run, a sampler reads running replicas per deployment
(/healthz), RSS of every replica process (psutil) and, at the start and the end, the batch-size
histogram (metrics): the report's batch sizes are the difference, this run's only.

The API key (PAGEROUTER_API_KEY or PAGEROUTER_API_KEY_FILE) in this runner's environment is
passed on to both generators (and to the server it starts); with --source-addresses each user
connects from one of several loopback addresses (README: per-client limits).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from load_tests.access import SOURCES_ENV, auth_headers, parse_source_addresses  # noqa: E402
from load_tests.profiles import PROFILE_ENV, RECORDS_ENV, Profile, add_profile_args, check_target  # noqa: E402
from load_tests.records import read_records  # noqa: E402
from load_tests.report import build_report, summarize, write_report  # noqa: E402
from load_tests import server_view  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(pred, timeout: float, what: str, interval: float = 1.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(interval)
    raise SystemExit(f"run_profile: timed out after {timeout:.0f} s waiting for {what}")


@contextmanager
def local_cluster(spec: str, temp_dir: str):
    """A head and a worker node on this machine (HEAD+WORKER logical CPUs); yields
    (gcs address, metrics URLs). Teardown stops exactly these nodes."""
    head_cpus, _, worker_cpus = spec.partition("+")
    if not (head_cpus.isdecimal() and worker_cpus.isdecimal()):
        raise SystemExit(f"run_profile: --cluster {spec!r}: expected HEAD+WORKER CPUs, e.g. 2+4")
    os.environ["RAY_TMPDIR"] = temp_dir  # Ray writes its address file here, not in the shared /tmp/ray
    os.makedirs(os.path.join(temp_dir, "ray"), exist_ok=True)
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=False)
    try:  # the head inside the try: a failed start still shuts down what it started
        cluster.add_node(num_cpus=int(head_cpus), include_dashboard=False, metrics_export_port=free_port(),
                         temp_dir=temp_dir)
        cluster.add_node(num_cpus=int(worker_cpus), metrics_export_port=free_port(),
                         object_store_memory=200 * 2**20)
        cluster.wait_for_nodes()
        urls = [f"http://127.0.0.1:{n.metrics_export_port}/metrics" for n in cluster.list_all_nodes()]
        print(f"run_profile: cluster {cluster.address}: head {head_cpus} CPUs + worker {worker_cpus} CPUs",
              file=sys.stderr, flush=True)
        yield cluster.address, urls
    finally:
        cluster.shutdown()


def _default_config(out: Path, a) -> Path:
    """The started server's config when none is given: defaults, except a per-client limit that
    lets every user of the profile (all from 127.0.0.1) have two requests in flight; the
    replica-wide limit (limits.max_in_flight_requests) and Serve's queue stay as shipped, so a
    burst still meets them."""
    import yaml

    clients = 2 if a.client == "both" else 1
    path = out / "serve-config.yaml"
    path.write_text(yaml.safe_dump({"limits": {"max_requests_per_client": min(64, max(4, 2 * a.users * clients))}}))
    return path


@contextmanager
def served(a, out: Path, ray_tmp: str, address: str | None):
    """`pagerouter serve` as a subprocess; yields (url, grpc target, pid, metrics URLs)."""
    http_port, grpc_port = free_port(), free_port()
    cmd = [sys.executable, "-m", "pagerouter.cli.main", "serve", "--http-port", str(http_port),
           "--grpc-port", str(grpc_port)]
    metrics = []
    cmd += ["--config", str(a.config or _default_config(out, a))]
    if a.replicas:
        cmd += ["--replicas", a.replicas]
    if address:
        cmd += ["--address", address]
    else:
        mport = free_port()
        metrics.append(f"http://127.0.0.1:{mport}/metrics")
        cmd += ["--metrics-port", str(mport), *(["--num-cpus", str(a.num_cpus)] if a.num_cpus else [])]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp, "PYTHONPATH": str(REPO)}
    if not address:
        env["RAY_ADDRESS"] = "local"
    err = (out / "serve.err").open("w")
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=err, stderr=subprocess.STDOUT, env=env, text=True)
    url = f"http://127.0.0.1:{http_port}"
    try:
        def up() -> bool:
            if proc.poll() is not None:
                raise SystemExit(f"run_profile: pagerouter serve exited {proc.returncode}; see {out / 'serve.err'}")
            try:
                return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        _wait(up, 300, "pagerouter serve to answer /healthz")
        _wait(lambda: "serving in" in (out / "serve.err").read_text(), 60, "the gRPC front", 0.5)
        yield url, f"127.0.0.1:{grpc_port}", proc.pid, metrics
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
        err.close()


class Sampler(threading.Thread):
    """Every `interval` s: running replicas per deployment and RSS per replica process."""

    def __init__(self, url: str, roots, interval: float, app: str):
        super().__init__(daemon=True)
        self.url, self.roots, self.interval, self.app = url, roots, interval, app
        self.samples: list[dict] = []
        self.stop = threading.Event()

    def sample(self) -> None:
        s: dict = {"t": round(time.time(), 3)}
        try:
            s["replicas"] = server_view.replicas_from_healthz(self.url)
        except Exception as exc:  # noqa: BLE001 - a slow /healthz under load is a gap, not the end
            s["error"] = f"/healthz: {type(exc).__name__}"
        s["rss_mb"] = server_view.replica_rss(self.roots(), self.app)
        self.samples.append(s)

    def run(self) -> None:
        while True:
            self.sample()
            if self.stop.wait(self.interval):
                self.sample()
                return


def _locust(a, profile: Profile, url: str, out: Path, env: dict) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "locust", "-f", str(REPO / "load_tests" / "locustfile.py"), "--headless",
           "--host", url, "--csv", str(out / "locust"), "--json-file", str(out / "locust"),
           "--stop-timeout", str(int(a.timeout)),
           "--only-summary", "--loglevel", "WARNING", "--run-time", f"{int(profile.duration_s + a.timeout)}s"]
    env = {**env, PROFILE_ENV: profile.to_env(), RECORDS_ENV: str(out / "http.jsonl")}
    if a.source_addresses:
        env[SOURCES_ENV] = a.source_addresses
    if a.allow_remote:
        env["PAGEROUTER_LOAD_ALLOW_REMOTE"] = "1"
    if a.weights:
        env["PAGEROUTER_LOAD_WEIGHTS"] = a.weights
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=(out / "locust.out").open("w"), stderr=subprocess.STDOUT)


def _grpc(a, profile: Profile, target: str, out: Path, env: dict) -> subprocess.Popen:
    cmd = [sys.executable, str(REPO / "load_tests" / "load_grpc.py"), "--target", target,
           "--profile", profile.kind, "--users", str(profile.users), "--base-users", str(profile.base_users),
           "--burst-at", str(profile.burst_at_s), "--burst-for", str(profile.burst_for_s),
           "--duration", str(profile.duration_s), "--requests", str(profile.max_requests),
           "--stream-share", str(a.stream_share), "--records", str(out / "grpc.jsonl"), "--timeout", str(a.timeout)]
    if a.weights:
        cmd += ["--weights", a.weights]
    if a.source_addresses:
        cmd += ["--source-addresses", a.source_addresses]
    if a.allow_remote:
        cmd += ["--allow-remote"]
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=(out / "grpc.out").open("w"), stderr=subprocess.STDOUT)


def _locust_totals(out: Path) -> dict:
    """Locust's own counts (its final stats, --json-file), to check ours against."""
    path = out / "locust.json"
    if not path.exists():
        return {}
    stats = json.loads(path.read_text())
    return {"requests": sum(e["num_requests"] for e in stats), "failures": sum(e["num_failures"] for e in stats)}


def run(a) -> dict:
    out = a.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("http.jsonl", "grpc.jsonl"):
        (out / stale).unlink(missing_ok=True)
    profile = Profile(kind=a.profile, users=a.users, duration_s=a.duration, base_users=a.base_users,
                      burst_at_s=a.burst_at, burst_for_s=a.burst_for, max_requests=a.requests,
                      spawn_rate=a.spawn_rate).bounded()
    ray_tmp = tempfile.mkdtemp(prefix="prload", dir="/tmp")  # short: Ray's unix sockets live there
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, ray_tmp, True)
        metrics = list(a.metrics_url or [])
        if a.url:
            url, target = check_target(a.url, a.allow_remote), check_target(a.grpc, a.allow_remote)
            if a.serve_pid:
                roots = lambda: [a.serve_pid]  # noqa: E731
            else:
                roots = lambda: server_view.roots_by_temp_dir(a.ray_temp_dir) if a.ray_temp_dir else []  # noqa: E731
        else:
            address = a.address
            if a.cluster:
                address, cluster_metrics = stack.enter_context(local_cluster(a.cluster, ray_tmp))
                metrics += cluster_metrics
            url, target, pid, serve_metrics = stack.enter_context(served(a, out, ray_tmp, address))
            metrics += serve_metrics
            if a.cluster:
                roots = lambda: [os.getpid()]  # noqa: E731 - its nodes are this runner's children
            elif a.address:
                roots = lambda: server_view.roots_by_temp_dir(a.ray_temp_dir) if a.ray_temp_dir else []  # noqa: E731
            else:
                roots = lambda: [pid]  # noqa: E731 - its local Ray is the server's child
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        headers = auth_headers()
        sampler = Sampler(url, roots, a.sample_interval, a.app)
        meta = {"profile": profile.__dict__, "url": url, "grpc": target, "client": a.client,
                "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "replicas_mode": a.replicas, "cluster": a.cluster, "cores": os.cpu_count(),
                "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
                "note": "figures on a shared machine are noisy; rerun the command on a quiet one",
                "command": " ".join(sys.argv),
                "deployments_at_start": server_view.applied_deployments(url, headers=headers),
                "api_key_sent": bool(headers),
                "source_addresses": parse_source_addresses(a.source_addresses, a.allow_remote)}
        # the server's counters before the load: the report's batch sizes are end minus start
        batch_before = server_view.read_histogram(metrics) if metrics else {}
        sampler.start()
        t0 = time.monotonic()
        meta["start_t"] = round(time.time(), 3)
        procs = {}
        if a.client in ("http", "both"):
            procs["http"] = _locust(a, profile, url, out, env)
        if a.client in ("grpc", "both"):
            procs["grpc"] = _grpc(a, profile, target, out, env)
        walls = {}
        for name, p in procs.items():
            p.wait(profile.duration_s + 2 * a.timeout + 60)
            walls[name] = time.monotonic() - t0
        sampler.stop.set()
        sampler.join(60)
        time.sleep(a.metrics_wait)  # replicas push metrics every few seconds: let the last batch arrive
        clients, all_records = {}, []
        if "http" in procs:
            log = (out / "locust.out").read_text()
            m = re.search(r"locustfile: sent (\d+) recorded (\d+)(?: capped_at_s ([\d.]+))?", log)
            recs = read_records(out / "http.jsonl")
            sent = int(m.group(1)) if m else len(recs)
            capped = float(m.group(3)) if m and m.group(3) else None
            clients["http"] = {**summarize(recs, sent, walls["http"], profile.__dict__, capped),
                               "locust": _locust_totals(out)}
            all_records += recs
        if "grpc" in procs:
            lines = [ln for ln in (out / "grpc.out").read_text().splitlines() if ln.startswith("{")]
            own = json.loads(lines[-1]) if lines else {}
            recs = read_records(out / "grpc.jsonl")
            clients["grpc"] = {**summarize(recs, int(own.get("sent", len(recs))), walls["grpc"], profile.__dict__,
                                           own.get("capped_at_s")), "generator": own}
            all_records += recs
        meta["deployments_at_end"] = server_view.applied_deployments(url, headers=headers)
        rep = build_report(meta, clients, sampler.samples, server_view.batch_sizes(metrics, batch_before), all_records)
    j, md = write_report(rep, out)
    print(f"run_profile: report {md} and {j}", file=sys.stderr)
    if rep.get("unauthorized"):
        print(f"run_profile: UNAUTHORIZED: {rep['unauthorized']} requests were refused for the API key; set "
              "PAGEROUTER_API_KEY or PAGEROUTER_API_KEY_FILE to the server's key", file=sys.stderr)
    return rep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="folder for the report and the raw records")
    ap.add_argument("--url", help="a running server's HTTP URL (default: start `pagerouter serve`)")
    ap.add_argument("--grpc", default="127.0.0.1:9000", help="with --url: its gRPC host:port")
    ap.add_argument("--serve-pid", type=int, help="with --url: pid of its `pagerouter serve` (replica RSS)")
    ap.add_argument("--ray-temp-dir", help="with --url: its Ray temp dir (replica RSS on a `ray start` cluster)")
    ap.add_argument("--metrics-url", action="append", help="Ray metrics endpoint(s) for batch sizes")
    ap.add_argument("--config", type=Path, help="pagerouter config for the started server")
    ap.add_argument("--replicas", help="`auto` or N for the started server (pagerouter serve --replicas)")
    ap.add_argument("--num-cpus", type=int, help="logical CPUs of the started server's local Ray")
    ap.add_argument("--cluster", help="HEAD+WORKER: serve on a local two-node Ray cluster, e.g. 2+4")
    ap.add_argument("--address", help="serve on this running Ray cluster (e.g. one from `ray start --head`); "
                                      "with --ray-temp-dir for replica memory, --metrics-url for batch sizes")
    ap.add_argument("--client", choices=["http", "grpc", "both"], default="http")
    add_profile_args(ap)
    ap.add_argument("--spawn-rate", type=float, default=50.0, help="Locust users started per second")
    ap.add_argument("--timeout", type=float, default=120.0, help="per-request timeout; in-flight grace at the end")
    ap.add_argument("--sample-interval", type=float, default=2.0, help="seconds between server samples")
    ap.add_argument("--metrics-wait", type=float, default=6.0, help="seconds to wait for the last metrics push")
    ap.add_argument("--app", default="pagerouter", help="Serve application name")
    ap.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --url/--grpc")
    a = ap.parse_args(argv)
    if a.url and (a.cluster or a.replicas or a.config or a.address):
        raise SystemExit("run_profile: --cluster/--address/--replicas/--config start a server; "
                         "--url uses a running one")
    parse_source_addresses(a.source_addresses, a.allow_remote)  # a bad list stops here, before any server starts
    auth_headers()  # so does an unreadable key file
    if a.cluster and a.address:
        raise SystemExit("run_profile: --cluster starts its own Ray cluster; --address joins one: pick one")
    rep = run(a)
    errors = sum(c["error_count"] for c in rep["clients"].values())
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
