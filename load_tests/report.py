"""The load report: figures from the request records and the server samples, as JSON and Markdown.

Requests/s and pages/s over the run's wall time; p50/p95/p99 per operation and per page route
(a request counts once under each route its pages took, so a per-page request gives that route's
latency exactly, a document request its whole latency); errors by kind; replica counts per
deployment over time (Serve's view through /healthz); batch sizes of this run (the replicas'
`pagerouter_batch_size` histogram at the end less at the start); RSS of each replica process over
time. Requests the server refused for the API key (401, UNAUTHENTICATED) are `unauthorized`
errors, announced first in the Markdown. Charts (PNG, matplotlib; left out with a note when it is
not installed): throughput and p50/p95 latency per time bucket of the run, batch-size histogram.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from load_tests.records import is_refusal, is_unauthorized

BATCH_BOUNDS = (1, 2, 3, 4, 6, 8, 12, 16, 32)  # pagerouter_batch_size's buckets (deployments/observe.py)
CHARTS = {"throughput": "throughput.png", "latency": "latency.png", "batch_sizes": "batch_sizes.png"}


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


def summarize(records: list[dict], sent: int, wall_s: float, profile: dict | None = None,
              capped_at_s: float | None = None) -> dict[str, Any]:
    """Counts, rates and percentiles of one generator's records. `sent` is the generator's own
    count of requests started; those never answered when it stopped are `unfinished_at_stop`.

    Rates are over the time the load ran (`load_s`: the first request sent to the last answer,
    from the records' times; the generator's `wall_s` also holds its start-up, seconds for
    Locust): sent/s counts every request sent, answered/s the ones answered as their input
    must be (ok or expected 4xx); errors (refusals such as 429/503 included) are neither.
    `profile` (the run's `Profile` as a dict) and `capped_at_s` (when the generator sent the
    last request its `--requests` cap allows, None if it never got there) give the per-step
    figures (`steps`) and whether the cap ended the run early (`cap`)."""
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
    span = load_span(records)
    load_s = span[1] - span[0] if span else 0.0
    over = max(load_s if load_s > 0 else wall_s, 1e-9)
    error_count = sum(errors.values())
    cap = cap_summary(profile, sent, capped_at_s)
    return {
        "sent": sent, "answered": answered, "ok": outcomes["ok"], "expected_4xx": dict(expected),
        "errors": dict(errors), "error_count": error_count,
        "error_rate": round(error_count / sent, 4) if sent else 0.0,
        "sent_per_s": round(sent / over, 3), "answered_per_s": round(answered / over, 3),
        "requests_per_s": round(answered / over, 3), "pages": pages, "pages_per_s": round(pages / over, 3),
        "wall_s": round(wall_s, 3), "load_s": round(load_s, 3),
        "latency": _pcts([r["latency_ms"] for r in ok]),
        "refusal_latency": _pcts([r["latency_ms"] for r in records if is_refusal(r["kind"])]),
        "latency_by_op": {k: _pcts(v) for k, v in sorted(by_op.items())},
        "latency_by_route": {k: _pcts(v) for k, v in sorted(by_route.items())},
        "pages_by_route": dict(route_pages),
        "unauthorized": sum(v for k, v in errors.items() if is_unauthorized(k)),
        "steps": steps(records, unfinished, profile, cap), "cap": cap,
    }


def _sent_t(r: dict) -> float:
    """When a request was sent (unix s): its answer time less its latency."""
    return r["t"] - r["latency_ms"] / 1000


def load_span(records: list[dict]) -> tuple[float, float] | None:
    """(first request sent, last answer) in unix s; None without timed records."""
    timed = [r for r in records if "t" in r]
    if not timed:
        return None
    return min(_sent_t(r) for r in timed), max(r["t"] for r in timed)


def planned_steps(profile: dict | None) -> dict[int, tuple[float, float]]:
    """Per number of users: (seconds the profile spends at it, when it first asks for it), at
    0.05 s resolution."""
    if not profile:
        return {}
    from load_tests.profiles import Profile

    p = Profile(**profile)
    secs: dict[int, float] = defaultdict(float)
    first: dict[int, float] = {}
    dt = 0.05
    for i in range(round(p.duration_s / dt)):
        n = p.users_at(i * dt)
        if n is not None:
            secs[n] += dt
            first.setdefault(n, round(i * dt, 2))
    return {n: (round(v, 2), first[n]) for n, v in sorted(secs.items())}


def cap_summary(profile: dict | None, sent: int, capped_at_s: float | None) -> dict[str, Any] | None:
    """Whether the `--requests` cap ended the run before the profile's duration: the cap, when
    it was reached (s into the run), the duration, and `ended_early`. None without a profile."""
    if not profile:
        return None
    limit, duration = profile.get("max_requests"), profile.get("duration_s")
    reached = sent >= limit if limit else False
    at = capped_at_s if reached else None
    # without the generator's own time of the cap, a run that sent all it may ended early
    early = reached and (at is None or at < duration - 0.5)
    return {"max_requests": limit, "reached": reached, "reached_at_s": at, "duration_s": duration,
            "ended_early": bool(early)}


def steps(records: list[dict], unfinished: int = 0, profile: dict | None = None,
          cap: dict | None = None) -> list[dict]:
    """Per number of users (a step of the profile: each request's `users`, the users asked for
    when it was sent): the seconds the load ran at it, requests sent and answered and their
    rates, errors and the error rate, p50/p95 of its ok answers. A step's time runs from its
    first request sent to the next step's first (the last step: to the last answer); a burst's
    two base-user stretches are one step. Requests never answered count as errors of the last
    step. When the cap ended the run early, the step it cut is `cut_by_cap` and each step the
    profile planned but never reached is listed with `ran: False`."""
    timed = sorted((r for r in records if "t" in r), key=_sent_t)
    default_users = (profile or {}).get("users") if (profile or {}).get("kind") == "steady" else None
    keyed = [(r.get("users", default_users), r) for r in timed]
    if not keyed or any(n is None for n, _ in keyed):
        return []
    last_answer = max(r["t"] for r in timed)
    segments: list[tuple[int, float, list[dict]]] = []
    for n, r in keyed:
        if not segments or segments[-1][0] != n:
            segments.append((n, _sent_t(r), []))
        segments[-1][2].append(r)
    acc: dict[int, dict[str, Any]] = {}
    for i, (n, start, recs) in enumerate(segments):
        end = segments[i + 1][1] if i + 1 < len(segments) else last_answer
        a = acc.setdefault(n, {"seconds": 0.0, "recs": []})
        a["seconds"] += max(0.0, end - start)
        a["recs"] += recs
    last_users = segments[-1][0]
    plan = planned_steps(profile)
    planned = {n: v[0] for n, v in plan.items()}
    early = bool(cap and cap.get("ended_early"))
    cut_at = plan.get(last_users, (0.0, 0.0))[1]
    # the steps the profile would have reached after the one the cap cut
    never = {n for n, (_, first) in plan.items() if early and n not in acc and first > cut_at}
    out = []
    for n in sorted(set(acc) | never):
        if n not in acc:
            out.append({"users": n, "ran": False, "planned_s": planned.get(n)})
            continue
        recs, secs = acc[n]["recs"], acc[n]["seconds"]
        lost = unfinished if n == last_users else 0
        ok = [r["latency_ms"] for r in recs if r["outcome"] == "ok"]
        answered = sum(r["outcome"] in ("ok", "expected") for r in recs)
        errs = Counter(r["kind"] for r in recs if r["outcome"] == "error")
        if lost:
            errs["unfinished_at_stop"] = lost
        sent = len(recs) + lost
        per = max(secs, 1e-9)
        out.append({
            "users": n, "ran": True, "planned_s": planned.get(n), "seconds": round(secs, 2), "sent": sent,
            "answered": answered, "ok": len(ok), "errors": dict(errs), "error_count": sum(errs.values()),
            "error_rate": round(sum(errs.values()) / sent, 4) if sent else 0.0,
            "sent_per_s": round(sent / per, 3), "answered_per_s": round(answered / per, 3),
            "p50_ms": percentile(ok, 50), "p95_ms": percentile(ok, 95),
            "cut_by_cap": early and n == last_users,
        })
    return out


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


def timeline(records: list[dict], start: float | None = None, buckets: int = 30) -> dict[str, Any]:
    """Per client, the run cut into time buckets by answer time (about `buckets` of them, at least
    1 s wide): answered requests/s, errors, p50 and p95 latency of the answered (ok or expected)."""
    if not records:
        return {"bucket_s": 0, "clients": {}}
    t0 = start if start else min(r["t"] for r in records)
    span = max(r["t"] for r in records) - t0
    width = max(1.0, math.ceil(span / buckets)) if span > 0 else 1.0
    out: dict[str, list] = {}
    for client in sorted({r.get("client", "?") for r in records}):
        rows: dict[int, list[dict]] = defaultdict(list)
        for r in records:
            if r.get("client", "?") == client:
                rows[max(0, int((r["t"] - t0) // width))].append(r)
        series = []
        for i in range(max(rows) + 1 if rows else 0):
            recs = rows.get(i, [])
            lat = [r["latency_ms"] for r in recs if r["outcome"] != "error"]
            series.append({"t_s": round(i * width, 3), "requests_per_s": round(len(lat) / width, 3),
                           "errors": sum(r["outcome"] == "error" for r in recs),
                           "p50_ms": percentile(lat, 50), "p95_ms": percentile(lat, 95)})
        out[client] = series
    return {"bucket_s": width, "clients": out}


def build_report(meta: dict, clients: dict[str, dict], samples: list[dict], batch_sizes: dict,
                 records: list[dict] | None = None) -> dict:
    return {"meta": meta, "clients": clients, "replicas": replica_summary(samples),
            "phases": phases(meta.get("profile") or {}, meta.get("start_t", 0.0), records or [], samples),
            "memory": memory_summary(samples), "batch_sizes": batch_sizes, "samples": samples,
            "unauthorized": sum(c.get("unauthorized", 0) for c in clients.values()),
            "timeline": timeline(records or [], meta.get("start_t"))}


def _fmt(v: Any) -> str:
    return "-" if v is None else (f"{v:g}" if isinstance(v, float) else str(v))


def to_markdown(rep: dict) -> str:
    m = rep["meta"]
    lines = [f"# Load report: {m.get('profile', {}).get('kind', '?')} profile", "",
             f"Target {m.get('url')} (gRPC {m.get('grpc')}); started {m.get('started')}; {m.get('note', '')}", "",
             "```", json.dumps(m.get("profile", {})), "```", ""]
    refused = rep.get("unauthorized", 0)
    if refused:
        sent = sum(c["sent"] for c in rep["clients"].values())
        lines += [f"**UNAUTHORIZED: {refused} of {sent} requests were refused for the API key (HTTP 401, gRPC "
                  "UNAUTHENTICATED). Set PAGEROUTER_API_KEY or PAGEROUTER_API_KEY_FILE to the server's key: "
                  "these requests are errors and measure nothing.**", ""]
    charts = rep.get("charts") or {}
    if charts.get("files"):
        lines += ["## Charts", ""] + [f"![{name}]({f})" for name, f in charts["files"].items()] + [""]
    elif charts.get("note"):
        lines += ["## Charts", "", charts["note"], ""]
    for name, c in rep["clients"].items():
        lines += [f"## {name}", "", *client_headline(c), "",
                  "| latency | count | p50 ms | p95 ms | p99 ms | max ms |", "|---|---|---|---|---|---|"]
        for group, table in (("all", {"ok answers": c["latency"]} if c.get("latency") else {}),
                             ("op", c["latency_by_op"]), ("route", c["latency_by_route"])):
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
    lines += ["", "## Batch sizes of this run (engine calls per batch size, from pagerouter_batch_size: "
              "the server's histogram at the end less at the start)", ""]
    if rep["batch_sizes"]:
        for stage, row in rep["batch_sizes"].items():
            sizes = ", ".join(f"{k}: {v:g}" for k, v in row.items() if k.startswith("<="))
            lines.append(f"- {stage}: {sizes or 'none'}; {_fmt(row.get('calls'))} calls, "
                         f"mean batch size {_fmt(row.get('mean'))}")
    else:
        lines.append("- not available (no metrics endpoint given, or no OCR page ran)")
    return "\n".join(lines) + "\n"


def _pct(v: float) -> str:
    return f"{100 * v:.1f} %"


def client_headline(c: dict) -> list[str]:
    """The lines under a client's heading: requests sent and answered with their rates, errors
    with the error rate, overall latency, whether the cap ended the run, the per-step table."""
    load = c.get("load_s") or c["wall_s"]
    out = [(f"sent {c['sent']} ({_fmt(c.get('sent_per_s'))}/s) = answered {c['answered']} "
            f"({_fmt(c.get('answered_per_s', c['requests_per_s']))}/s; ok {c['ok']}, expected 4xx "
            f"{sum(c['expected_4xx'].values())}) + errors {c['error_count']} "
            f"({_pct(c.get('error_rate', 0.0))} of sent); {c['pages']} pages = {c['pages_per_s']} pages/s; "
            f"rates over the {load:g} s the load ran (first request sent to last answer; the runner "
            f"waited {c['wall_s']:g} s for the generator, its start-up included)")]
    lat = c.get("latency") or {}
    if lat.get("count"):
        out += ["", (f"Latency of all ok answers: p50 {_fmt(lat['p50_ms'])} ms, p95 {_fmt(lat['p95_ms'])} ms, "
                     f"p99 {_fmt(lat['p99_ms'])} ms ({lat['count']} answers)")]
    ref = c.get("refusal_latency") or {}
    if ref.get("count"):
        out += ["", (f"Time to a refusal (429/503, gRPC RESOURCE_EXHAUSTED/UNAVAILABLE): p50 {_fmt(ref['p50_ms'])} ms, "
                     f"p95 {_fmt(ref['p95_ms'])} ms, max {_fmt(ref['max_ms'])} ms ({ref['count']} refusals)")]
    cap = c.get("cap") or {}
    rows = c.get("steps") or []
    if cap.get("ended_early"):
        at = f" at {cap['reached_at_s']:g} s" if cap.get("reached_at_s") is not None else ""
        cut = next((s for s in rows if s.get("cut_by_cap")), None)
        never = [str(s["users"]) for s in rows if not s["ran"]]
        what = []
        if cut:
            planned = f" of the {cut['planned_s']:g} s planned" if cut.get("planned_s") else ""
            what.append(f"the {cut['users']}-user step ran {cut['seconds']:g} s{planned}")
        if never:
            what.append("steps never run: " + ", ".join(never) + " users")
        out += ["", f"**The --requests cap ({cap['max_requests']} requests) ended the run early{at}, before the "
                    f"profile's {cap['duration_s']:g} s" + (": " + "; ".join(what) if what else "") +
                    ". Raise --requests to measure the whole profile.**"]
    if rows:
        out += ["", "Per step (users the profile asked for when each request was sent; latency of the ok answers):", "",
                "| users | s | sent | sent/s | answered | answered/s | errors | error rate | p50 ms | p95 ms | note |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for s in rows:
            if not s["ran"]:
                out.append(f"| {s['users']} | - | - | - | - | - | - | - | - | - | not run: the cap ended the run first |")
                continue
            note = "cut short by the --requests cap" if s.get("cut_by_cap") else ""
            errs = ", ".join(f"{k} x{v}" for k, v in s["errors"].items())
            out.append(f"| {s['users']} | {s['seconds']:g} | {s['sent']} | {_fmt(s['sent_per_s'])} | {s['answered']} | "
                       f"{_fmt(s['answered_per_s'])} | {s['error_count']}{f' ({errs})' if errs else ''} | "
                       f"{_pct(s['error_rate'])} | {_fmt(s['p50_ms'])} | {_fmt(s['p95_ms'])} | {note} |")
    return out


def write_charts(rep: dict, out_dir: Path) -> dict[str, Any]:
    """The charts as PNG files in `out_dir`: {"files": {name: file name}} or {"note": why none}."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {"note": "no charts: matplotlib is not installed (pip install -e \".[load]\")"}
    files: dict[str, str] = {}
    tl = (rep.get("timeline") or {}).get("clients") or {}
    width = (rep.get("timeline") or {}).get("bucket_s") or 1
    if tl:
        fig, ax = plt.subplots(figsize=(8, 3.5))
        for client, series in tl.items():
            ax.plot([r["t_s"] for r in series], [r["requests_per_s"] for r in series], marker="o",
                    label=f"{client} answered")
            if any(r["errors"] for r in series):
                ax.plot([r["t_s"] for r in series], [r["errors"] / width for r in series], linestyle=":",
                        label=f"{client} errors")
        ax.set(xlabel=f"s since the load started ({width:g} s buckets)", ylabel="requests/s", title="Throughput")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(out_dir / CHARTS["throughput"], dpi=90)
        plt.close(fig)
        files["throughput"] = CHARTS["throughput"]

        fig, ax = plt.subplots(figsize=(8, 3.5))
        for client, series in tl.items():
            for q, style in (("p50_ms", "-"), ("p95_ms", "--")):
                pts = [(r["t_s"], r[q]) for r in series if r[q] is not None]
                if pts:
                    ax.plot(*zip(*pts), linestyle=style, marker=".", label=f"{client} {q[:3]}")
        ax.set(xlabel=f"s since the load started ({width:g} s buckets)", ylabel="ms", title="Latency (answered)")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(out_dir / CHARTS["latency"], dpi=90)
        plt.close(fig)
        files["latency"] = CHARTS["latency"]
    stages = {k: {b: n for b, n in v.items() if b.startswith("<=")} for k, v in (rep.get("batch_sizes") or {}).items()}
    stages = {k: v for k, v in stages.items() if v}
    if stages:
        seen = {b for v in stages.values() for b in v}
        top = max(float(b[2:]) for b in seen)
        # every bucket up to the largest seen, empty ones too (deployments/observe.py's boundaries)
        labels = sorted(seen | {f"<={b:g}" for b in BATCH_BOUNDS if b <= top}, key=lambda b: float(b[2:]))
        fig, ax = plt.subplots(figsize=(8, 3.5))
        bar = 0.8 / len(stages)
        for i, (stage, row) in enumerate(sorted(stages.items())):
            ax.bar([x + i * bar for x in range(len(labels))], [row.get(b, 0) for b in labels], bar, label=stage)
        ax.set_xticks([x + bar * (len(stages) - 1) / 2 for x in range(len(labels))], labels)
        ax.set(xlabel="batch size (bucket upper bound)", ylabel="engine calls",
               title="Batch sizes of this run (mean " + ", ".join(
                   f"{k} {_fmt((rep['batch_sizes'][k] or {}).get('mean'))}" for k in sorted(stages)) + ")")
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(out_dir / CHARTS["batch_sizes"], dpi=90)
        plt.close(fig)
        files["batch_sizes"] = CHARTS["batch_sizes"]
    return {"files": files}


def write_report(rep: dict, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    j, md = out_dir / "report.json", out_dir / "report.md"
    for stale in CHARTS.values():
        (out_dir / stale).unlink(missing_ok=True)
    rep["charts"] = write_charts(rep, out_dir)
    j.write_text(json.dumps(rep, indent=1))
    md.write_text(to_markdown(rep))
    return j, md
