"""The run summary at the top of the review: pages per route and status, flags, seconds, cost.

Cost is `pagerouter bench`'s formula at the config's `bench` prices, from the seconds the run
recorded: VLM attempts' seconds count as GPU seconds, every other recorded stage second as one
CPU core busy for that second. It is an estimate from the JSON (wall time per stage, not CPU
time measured by the OS), and the page says so.
"""

from __future__ import annotations

import math
from collections import Counter

from ..bench.metrics import cost_per_million
from ..config.bench import BenchConfig
from ..model import Document
from ..render.output import route_order


def run_summary(docs: list[Document], prices: BenchConfig | None = None) -> dict:
    prices = prices or BenchConfig()
    routes: dict[str, dict] = {}
    status: Counter[str] = Counter()
    flags: Counter[str] = Counter()
    stage_s = gpu_s = 0.0
    pages = 0
    for doc in docs:
        for p in doc.pages:
            pages += 1
            key = "failed" if p.status == "failed" else (p.route or "failed")
            row = routes.setdefault(key, {"route": key, "pages": 0, "flagged": 0, "failed": 0, "seconds": 0.0})
            seconds = sum(p.timings.values())
            row["pages"] += 1
            row["flagged"] += p.status == "flagged"
            row["failed"] += p.status == "failed"
            row["seconds"] += seconds
            status[p.status] += 1
            flags.update(p.flags)
            stage_s += seconds
            gpu_s += sum(a.seconds for a in p.attempts)
    cpu_s = max(stage_s - gpu_s, 0.0)
    usd_m = cost_per_million(cpu_s, gpu_s, pages, prices)
    return {
        "documents": len(docs),
        "pages": pages,
        "status": {k: status.get(k, 0) for k in ("ok", "flagged", "failed")},
        "routes": sorted(routes.values(), key=lambda r: route_order(r["route"])),
        "flags": dict(flags.most_common()),
        "seconds": round(stage_s, 3),
        "cpu_seconds": round(cpu_s, 3),
        "gpu_seconds": round(gpu_s, 3),
        "usd_per_million": None if math.isnan(usd_m) else round(usd_m, 2),
        "prices": {"cpu_core_hour_usd": prices.cpu_core_hour_usd, "gpu_hour_usd": prices.gpu_hour_usd},
    }
