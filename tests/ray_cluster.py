"""A real Ray cluster on loopback, as load_tests/local_cluster.sh builds one with MODE=ray-start:
`ray start --head --block` plus worker nodes (`ray start --address ... --block`), each a
process of ours with its own temp dir under a fresh /tmp dir and every port chosen free.
PYTHONPATH (this checkout) is exported before `ray start`, so the nodes' workers import this
copy of pagerouter. Teardown is by pid only: SIGTERM to our `ray start` processes (a blocking
`ray start` stops its node when it ends), after 10 s SIGKILL to whatever of their process
trees is left, then the temp dir goes. Never `ray stop`.

Used by tests/test_batch_ray.py and benchmarks/bench_batch_ray.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .hostile_corpus import descendants
from .serve_fixtures import free_ports  # below the ephemeral range: Ray's own bind-to-0 ports can't take them

REPO = Path(__file__).resolve().parents[1]


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


class RayStartCluster:
    """`with RayStartCluster(head_cpus=2, workers=[2]) as c: ... c.address ... c.kill_worker(0)`"""

    def __init__(self, head_cpus: float = 2, workers: list[float] | None = None, env: dict | None = None):
        self.head_cpus, self.worker_cpus = head_cpus, list(workers if workers is not None else [2])
        self.tmp = Path(tempfile.mkdtemp(prefix="prray"))
        self.env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": str(self.tmp),
                    "PYTHONPATH": str(REPO), "RAY_USAGE_STATS_ENABLED": "0", **(env or {})}
        self.head: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen | None] = []
        self.address = ""

    def _common(self) -> list[str]:
        metrics, agent, runtime_env = free_ports(3)
        return ["--node-ip-address", "127.0.0.1", "--disable-usage-stats", "--block", "--metrics-export-port",
                str(metrics), "--dashboard-agent-listen-port", str(agent), "--runtime-env-agent-port", str(runtime_env)]

    def start(self) -> RayStartCluster:
        gcs, client = free_ports(2)
        self.address = f"127.0.0.1:{gcs}"
        log = open(self.tmp / "head.log", "wb")
        self.head = subprocess.Popen(
            ["ray", "start", "--head", "--port", str(gcs), "--num-cpus", str(self.head_cpus), "--temp-dir",
             str(self.tmp / "head"), "--include-dashboard", "false", "--ray-client-server-port", str(client),
             *self._common()], env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 180  # a busy 2-core machine
        while not _port_open(gcs):
            if self.head.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray head did not start: {(self.tmp / 'head.log').read_text()[-2000:]}")
            time.sleep(0.5)
        for cpus in self.worker_cpus:
            self.add_worker(cpus)
        self.wait_nodes(1 + len(self.worker_cpus))
        return self

    def add_worker(self, cpus: float) -> int:
        i = len(self.workers)
        log = open(self.tmp / f"worker{i}.log", "wb")
        self.workers.append(subprocess.Popen(
            ["ray", "start", "--address", self.address, "--num-cpus", str(cpus), "--temp-dir",
             str(self.tmp / f"worker{i}"), *self._common()], env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True))
        return i

    def alive_nodes(self) -> int:
        """Nodes the GCS counts as alive (asked from a child process: this one never joins Ray)."""
        code = ("import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False); "
                "print(sum(n['Alive'] for n in ray.nodes()))")
        r = subprocess.run(["python", "-c", code, self.address], env=self.env, capture_output=True, text=True, timeout=120)
        return int(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else -1

    def wait_nodes(self, n: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.alive_nodes() != n:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster did not reach {n} alive nodes")
            time.sleep(1)

    def kill_worker(self, i: int) -> list[int]:
        """SIGKILL every process of worker node `i` (its `ray start`, raylet, workers, their
        children) at once, as a machine dying would; returns the pids killed."""
        proc = self.workers[i]
        pids = descendants(proc.pid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=30)
        self.workers[i] = None
        return pids

    def stop(self) -> None:
        procs = [p for p in [*self.workers, self.head] if p is not None]
        trees = [pid for p in procs for pid in descendants(p.pid)]
        for p in procs:
            try:
                p.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10  # a test cluster need not stop gracefully: its temp dir goes anyway
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for pid in trees:  # anything of our nodes that outlived its `ray start`
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> RayStartCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
