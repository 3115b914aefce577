"""What the runner samples from the server while load runs (read-only; nothing here changes it).

- Running replicas per deployment: the server's /healthz, which reads them from the Serve
  controller (deployments/health.py), so no second Ray driver joins the cluster under test.
- RSS per replica process: psutil on the Serve replica processes (Ray titles them
  `ray::ServeReplica:<app>:<Deployment>...`) below the given root processes: the `pagerouter
  serve` subprocess (its local Ray is its child), or the raylets of a cluster found by the
  cluster's temp dir in their command line. Other Ray clusters on the machine are never counted.
- Batch sizes: the replicas' `pagerouter_batch_size` histogram on the Ray metrics export
  port(s) (Ray pushes replica metrics there every few seconds).
"""

from __future__ import annotations

import re
from collections import defaultdict

import httpx
import psutil

_REPLICA = re.compile(r"ServeReplica:([^:\s]+):([A-Za-z0-9_]+)")
_BUCKET = re.compile(r'^ray_pagerouter_batch_size_bucket\{([^}]*)\}\s+([0-9.eE+-]+)')


def replicas_from_healthz(url: str, timeout: float = 10.0) -> dict[str, int]:
    """{deployment: running replicas} from /healthz (200 or 503 both carry the figures)."""
    r = httpx.get(f"{url}/healthz", timeout=timeout)
    deps = (r.json() or {}).get("deployments") or {}
    return {name: int(d.get("running_replicas", 1 if d.get("ready") else 0)) for name, d in deps.items()}


def applied_deployments(url: str, timeout: float = 20.0) -> dict:
    """Per deployment the settings Serve runs it with (autoscaling included), from /v1/config."""
    try:
        return httpx.get(f"{url}/v1/config", timeout=timeout).json().get("deployments") or {}
    except (httpx.HTTPError, ValueError) as exc:
        return {"error": f"/v1/config: {type(exc).__name__}"}


def roots_by_temp_dir(temp_dir: str) -> list[int]:
    """Pids of the Ray daemons (raylet, gcs) whose command line names `temp_dir`."""
    out = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if any(temp_dir in part for part in p.info["cmdline"] or ()):
                out.append(p.info["pid"])
        except (psutil.Error, TypeError):
            continue
    return out


def replica_rss(roots: list[int], app: str = "pagerouter") -> dict[str, dict[str, float]]:
    """{deployment: {pid: RSS MB}} of the Serve replicas of `app` below `roots`."""
    seen: set[int] = set()
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for root in roots:
        try:
            procs = psutil.Process(root).children(recursive=True)
        except psutil.Error:
            continue
        for p in procs:
            if p.pid in seen:
                continue
            seen.add(p.pid)
            try:
                title = " ".join(p.cmdline()) or p.name()
                m = _REPLICA.search(title)
                if m and m.group(1) == app:
                    out[m.group(2)][str(p.pid)] = round(p.memory_info().rss / 2**20, 1)
            except psutil.Error:
                continue
    return dict(out)


def batch_sizes(metrics_urls: list[str], timeout: float = 10.0) -> dict[str, dict[str, float]]:
    """{stage: {"<=N": engine calls}} summed over the replicas on every metrics endpoint.

    The histogram's buckets are cumulative (`le`); differences give calls per bucket, which for
    boundaries 1, 2, 3, 4 are exact sizes."""
    cumulative: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for url in metrics_urls:
        try:
            text = httpx.get(url, timeout=timeout).text
        except httpx.HTTPError:
            continue
        for line in text.splitlines():
            m = _BUCKET.match(line)
            if not m:
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            le = labels.get("le", "+Inf")
            bound = float("inf") if le in ("+Inf", "Inf") else float(le)
            cumulative[labels.get("stage", "?")][bound] += float(m.group(2))
    out: dict[str, dict[str, float]] = {}
    for stage, buckets in cumulative.items():
        prev, row = 0.0, {}
        for bound in sorted(buckets):
            n = buckets[bound] - prev
            prev = buckets[bound]
            if n > 0:
                row["<=" + (f"{bound:g}" if bound != float("inf") else "inf")] = n
        out[stage] = row
    return out
