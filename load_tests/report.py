"""The load report: figures from the request records and the server samples, as JSON and Markdown.

Requests/s and pages/s over the run's wall time; p50/p95/p99 per operation and per page route
(a request counts once under each route its pages took, so a per-page request gives that route's
latency exactly, a document request its whole latency); errors by kind; replica counts per
deployment over time (Serve's view through /healthz); batch sizes seen (the replicas'
`pagerouter_batch_size` histogram); RSS of each replica process over time.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, math.ceil(q / 100 * len(v)) - 1))
    return round(v[k], 2)


def _pcts(values: list[float]) -> dict[str, Any]:
    return {"count": len(values), "p50_ms": percentile(values, 50), "p95_ms": percentile(values, 95),
            "p99_ms": percentile(values, 99), "max_ms": round(max(values), 2) if values else None}


def summarize(records: list[dict], sent: int, wall_s: float) -> dict[str, Any]:
    """Counts, rates and percentiles of one generator's records. `sent` is the generator's own
    count of requests started; those never answered when it stopped are `unfinished_at_stop`."""
    outcomes = Counter(r["outcome"] for r in records)
    errors = Counter(r["kind"] for r in records if r["outcome"] == "error")
    expected = Counter(r["kind"] for r in records if r["outcome"] == "expected")
    unfinished = max(0, sent - len(records))
    if unfinished:
        errors["unfinished_at_stop"] = unfinished
    ok = [r for r in records if r["outcome"] == "ok"]
    pages = sum(r["pages"] for r in ok)
    by_op: dict[str, list[float]] = defaultdict(list)
    by_route: dict[str, list[float]] = defaultdict(list)
    route_pages: Counter[str] = Counter()
    for r in ok:
        by_op[r["op"]].append(r["latency_ms"])
        for route in set(r["routes"]):
            by_route[route].append(r["latency_ms"])
        route_pages.update(r["routes"])
    answered = outcomes["ok"] + outcomes["expected"]
    wall = max(wall_s, 1e-9)
    return {
        "sent": sent, "answered": answered, "ok": outcomes["ok"], "expected_4xx": dict(expected),
        "errors": dict(errors), "error_count": sum(errors.values()),
        "requests_per_s": round(answered / wall, 3), "pages": pages, "pages_per_s": round(pages / wall, 3),
        "wall_s": round(wall_s, 3), "latency_by_op": {k: _pcts(v) for k, v in sorted(by_op.items())},
        "latency_by_route": {k: _pcts(v) for k, v in sorted(by_route.items())},
        "pages_by_route": dict(route_pages),
    }


def replica_summary(samples: list[dict]) -> dict[str, dict[str, int]]:
    """Per deployment: running replicas at the first sample, the most seen, at the last sample."""
    out: dict[str, dict[str, int]] = {}
    for s in samples:
        for name, n in (s.get("replicas") or {}).items():
            e = out.setdefault(name, {"first": n, "max": n, "last": n})
            e["max"], e["last"] = max(e["max"], n), n
    return out


def memory_summary(samples: list[dict]) -> dict[str, dict[str, float]]:
    """Per deployment: the largest RSS (MB) one replica reached and the most all its replicas held."""
    out: dict[str, dict[str, float]] = {}
    for s in samples:
        for name, rss in (s.get("rss_mb") or {}).items():
            e = out.setdefault(name, {"max_replica_mb": 0.0, "max_total_mb": 0.0})
            e["max_replica_mb"] = max(e["max_replica_mb"], max(rss.values(), default=0.0))
            e["max_total_mb"] = max(e["max_total_mb"], round(sum(rss.values()), 1))
    return out


def phases(profile: dict, start: float, records: list[dict], samples: list[dict]) -> dict[str, dict]:
    """A burst run cut in three (before, burst, after) by the answer time of each request: the
    requests, p99 and errors of each, and the most replicas each deployment ran in it. A request
    answered in the burst may have been sent just before it: the cut is by answer time."""
    if profile.get("kind") != "burst":
        return {}
    a, b = start + profile["burst_at_s"], start + profile["burst_at_s"] + profile["burst_for_s"]
    cuts = {"before": (start, a), "burst": (a, b), "after": (b, float("inf"))}
    out = {}
    for name, (lo, hi) in cuts.items():
        recs = [r for r in records if lo <= r["t"] < hi]
        lat = [r["latency_ms"] for r in recs if r["outcome"] != "error"]
        reps: dict[str, int] = {}
        for smp in samples:
            if lo <= smp["t"] < hi:
                for dep, n in (smp.get("replicas") or {}).items():
                    reps[dep] = max(reps.get(dep, 0), n)
        out[name] = {"requests": len(recs), "p99_ms": percentile(lat, 99),
                     "errors": dict(Counter(r["kind"] for r in recs if r["outcome"] == "error")),
                     "max_replicas": reps}
    return out


def build_report(meta: dict, clients: dict[str, dict], samples: list[dict], batch_sizes: dict,
                 records: list[dict] | None = None) -> dict:
    return {"meta": meta, "clients": clients, "replicas": replica_summary(samples),
            "phases": phases(meta.get("profile") or {}, meta.get("start_t", 0.0), records or [], samples),
            "memory": memory_summary(samples), "batch_sizes": batch_sizes, "samples": samples}


def _fmt(v: Any) -> str:
    return "-" if v is None else (f"{v:g}" if isinstance(v, float) else str(v))


def to_markdown(rep: dict) -> str:
    m = rep["meta"]
    lines = [f"# Load report: {m.get('profile', {}).get('kind', '?')} profile", "",
             f"Target {m.get('url')} (gRPC {m.get('grpc')}); started {m.get('started')}; {m.get('note', '')}", "",
             "```", json.dumps(m.get("profile", {})), "```", ""]
    for name, c in rep["clients"].items():
        lines += [f"## {name}", "",
                  f"sent {c['sent']} = answered {c['answered']} (ok {c['ok']}, expected 4xx "
                  f"{sum(c['expected_4xx'].values())}) + errors {c['error_count']}; "
                  f"{c['requests_per_s']} requests/s, {c['pages']} pages = {c['pages_per_s']} pages/s "
                  f"over {c['wall_s']} s", "",
                  "| latency | count | p50 ms | p95 ms | p99 ms | max ms |", "|---|---|---|---|---|---|"]
        for group, table in (("op", c["latency_by_op"]), ("route", c["latency_by_route"])):
            for k, v in table.items():
                lines.append(f"| {group} {k} | {v['count']} | {_fmt(v['p50_ms'])} | {_fmt(v['p95_ms'])} | "
                             f"{_fmt(v['p99_ms'])} | {_fmt(v['max_ms'])} |")
        lines += ["", "Expected 4xx: " + (", ".join(f"{k} x{v}" for k, v in c["expected_4xx"].items()) or "none"),
                  "Errors by kind: " + (", ".join(f"{k} x{v}" for k, v in c["errors"].items()) or "none"),
                  "Pages by route: " + ", ".join(f"{k} {v}" for k, v in c["pages_by_route"].items()), ""]
    lines += ["## Replicas (running, from Serve's status)", "", "| deployment | first | max | last |",
              "|---|---|---|---|"]
    lines += [f"| {k} | {v['first']} | {v['max']} | {v['last']} |" for k, v in rep["replicas"].items()]
    lines += ["", "Over time (s since the load started: running replicas per deployment; a line where they changed):",
              ""]
    t0, last = rep["meta"].get("start_t") or (rep["samples"][0]["t"] if rep["samples"] else 0), None
    for i, s in enumerate(rep["samples"]):
        counts = " ".join(f"{k}={v}" for k, v in sorted((s.get("replicas") or {}).items())) or s.get("error", "-")
        if counts != last or i == len(rep["samples"]) - 1:
            lines.append(f"- {s['t'] - t0:6.1f} s: {counts}")
        last = counts
    if rep.get("phases"):
        lines += ["", "## Burst phases (by answer time)", "", "| phase | requests | p99 ms | errors | most replicas |",
                  "|---|---|---|---|---|"]
        for name, ph in rep["phases"].items():
            errs = ", ".join(f"{k} x{v}" for k, v in ph["errors"].items()) or "none"
            reps = " ".join(f"{k}={v}" for k, v in sorted(ph["max_replicas"].items()))
            lines.append(f"| {name} | {ph['requests']} | {_fmt(ph['p99_ms'])} | {errs} | {reps} |")
    lines += ["", "## Memory (RSS of replica processes, MB)", "", "| deployment | max one replica | max all replicas |",
              "|---|---|---|"]
    lines += [f"| {k} | {v['max_replica_mb']:.0f} | {v['max_total_mb']:.0f} |" for k, v in rep["memory"].items()]
    lines += ["", "## Batch sizes seen (engine calls per batch size bucket, from pagerouter_batch_size)", ""]
    if rep["batch_sizes"]:
        for stage, buckets in rep["batch_sizes"].items():
            lines.append(f"- {stage}: " + ", ".join(f"{k}: {v:g}" for k, v in buckets.items()))
    else:
        lines.append("- not available (no metrics endpoint given, or no OCR page ran)")
    return "\n".join(lines) + "\n"


def write_report(rep: dict, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    j, md = out_dir / "report.json", out_dir / "report.md"
    j.write_text(json.dumps(rep, indent=1))
    md.write_text(to_markdown(rep))
    return j, md
