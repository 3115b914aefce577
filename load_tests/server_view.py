"""What the runner samples from the server while load runs (read-only; nothing here changes it).

- Running replicas per deployment: the server's /healthz, which reads them from the Serve
  controller (deployments/health.py), so no second Ray driver joins the cluster under test.
- RSS per replica process: psutil on the Serve replica processes (Ray titles them
  `ray::ServeReplica:<app>:<Deployment>...`) below the given root processes: the `pagerouter
  serve` subprocess (its local Ray is its child), or the raylets of a cluster found by the
  cluster's temp dir in their command line. Other Ray clusters on the machine are never counted.
- Batch sizes: the replicas' `pagerouter_batch_size` histogram on the Ray metrics export
  port(s) (Ray pushes replica metrics there every few seconds), read at the run's start and end:
  the report's figures are the difference, this run's engine calls only.
"""

from __future__ import annotations

import re
from collections import defaultdict

import httpx
import psutil

_REPLICA = re.compile(r"ServeReplica:([^:\s]+):([A-Za-z0-9_]+)")


def replicas_from_healthz(url: str, timeout: float = 10.0) -> dict[str, int]:
    """{deployment: running replicas} from /healthz (200 or 503 both carry the figures)."""
    r = httpx.get(f"{url}/healthz", timeout=timeout)
    deps = (r.json() or {}).get("deployments") or {}
    return {name: int(d.get("running_replicas", 1 if d.get("ready") else 0)) for name, d in deps.items()}


def applied_deployments(url: str, timeout: float = 20.0, headers: dict | None = None) -> dict:
    """Per deployment the settings Serve runs it with (autoscaling included), from /v1/config
    (`headers`: the API key of a keyed server)."""
    try:
        r = httpx.get(f"{url}/v1/config", timeout=timeout, headers=headers or {})
        if r.status_code == 401:
            return {"error": "/v1/config: 401 unauthorized (no or wrong API key)"}
        return r.json().get("deployments") or {}
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


def read_histogram(metrics_urls: list[str], name: str = "pagerouter_batch_size",
                   timeout: float = 10.0) -> dict[str, float]:
    """A snapshot of one Prometheus histogram on the metrics endpoints: {series: value} for each
    `_bucket`, `_sum` and `_count` line, the series named by endpoint, metric and its full label
    set (one per replica process), so two snapshots can be differenced series by series."""
    pat = re.compile(rf'^(ray_{name}_(?:bucket|sum|count))(?:\{{([^}}]*)\}})?\s+([0-9.eE+-]+|NaN)')
    out: dict[str, float] = {}
    for url in metrics_urls:
        try:
            text = httpx.get(url, timeout=timeout).text
        except httpx.HTTPError:
            continue
        for line in text.splitlines():
            m = pat.match(line)
            if m and m.group(3) != "NaN":
                labels = ",".join(sorted(re.findall(r'\w+="[^"]*"', m.group(2) or "")))
                out[f"{url}|{m.group(1)}|{labels}"] = out.get(f"{url}|{m.group(1)}|{labels}", 0.0) + float(m.group(3))
    return out


def histogram_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """What the run added to each series: after - before. A series that went down (its replica
    restarted, counting from 0 again) counts its whole `after`; one new since the start (a replica
    scaled up) counts all of it; one gone by the end (a replica stopped) is lost to both."""
    out = {}
    for series, value in after.items():
        prior = before.get(series, 0.0)
        out[series] = value - prior if value >= prior else value
    return out


def batch_sizes_from(snapshot: dict[str, float]) -> dict[str, dict]:
    """{stage: {"<=N": engine calls, ..., "calls": n, "mean": mean batch size}} from a histogram
    snapshot or delta, summed over replicas and endpoints. The buckets are cumulative (`le`);
    differences give calls per bucket, which for boundaries 1, 2, 3, 4 are exact sizes."""
    cumulative: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, float] = defaultdict(float)
    for series, value in snapshot.items():
        _, metric, labels_text = series.split("|", 2)
        labels = dict(re.findall(r'(\w+)="([^"]*)"', labels_text))
        stage = labels.get("stage", "?")
        if metric.endswith("_bucket"):
            le = labels.get("le", "+Inf")
            cumulative[stage][float("inf") if le in ("+Inf", "Inf") else float(le)] += value
        elif metric.endswith("_sum"):
            sums[stage] += value
        else:
            counts[stage] += value
    out: dict[str, dict] = {}
    for stage in sorted(set(cumulative) | set(counts)):
        prev, row = 0.0, {}
        lower, pages, exact = 0.0, 0.0, True
        for bound in sorted(cumulative.get(stage, {})):
            n = cumulative[stage][bound] - prev
            prev = cumulative[stage][bound]
            if n > 0:
                row["<=" + (f"{bound:g}" if bound != float("inf") else "inf")] = round(n, 6)
                size, exact_here = _bucket_size(lower, bound)
                pages += n * size
                exact = exact and exact_here
            lower = bound
        calls = counts.get(stage, prev)
        if calls <= 0 and not row:
            continue  # nothing of this stage ran in the run
        row["calls"] = round(calls, 6)
        # Ray 2.60 exports a histogram's _sum from bucket midpoints (a batch of one counts 0.5), so
        # _sum / _count understates. Batch sizes are integers: when every call lies in a bucket one
        # size wide (pagerouter_batch_size has one per size up to 8), the buckets give the exact
        # mean; otherwise _sum is all there is.
        if exact and prev > 0:
            row["mean"] = round(pages / prev, 3)
        else:
            row["mean"] = round(sums[stage] / calls, 3) if calls > 0 else None
        out[stage] = row
    return out


def _bucket_size(lower: float, upper: float) -> tuple[float, bool]:
    """The batch size a histogram bucket (lower, upper] stands for, and whether it is the only one."""
    if upper == float("inf"):
        return lower + 1, False
    first = float(int(lower) + 1)  # the smallest integer size above `lower`
    return (upper, True) if upper - first < 1 else ((first + upper) / 2, False)


def batch_sizes(metrics_urls: list[str], before: dict[str, float] | None = None,
                timeout: float = 10.0) -> dict[str, dict]:
    """Batch sizes of the run: the histogram now, less `before` (the snapshot at the run's start);
    everything since the server started only when there is no `before`."""
    now = read_histogram(metrics_urls, timeout=timeout)
    return batch_sizes_from(histogram_delta(before, now) if before is not None else now)
