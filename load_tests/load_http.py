"""A bounded load generator for a pagerouter server on loopback (never a remote host).

    python load_tests/load_http.py FILE [--url http://127.0.0.1:8000] [--endpoint pages|convert]
        [--concurrency 8] [--requests 200] [--duration 60]

Stops at whichever comes first: --requests sent or --duration seconds. Hard caps keep it a
test tool: at most 5000 requests, 600 s, 64 concurrent requests, loopback addresses only.
Prints throughput, latency percentiles and errors by status.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse

import httpx

MAX_REQUESTS, MAX_DURATION_S, MAX_CONCURRENCY = 5000, 600.0, 64


def loopback_only(url: str) -> str:
    host = urlparse(url).hostname or ""
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise SystemExit(f"load_http: refusing {url}: only loopback targets (127.0.0.0/8, ::1, localhost)")
    return url.rstrip("/")


async def run(a) -> int:
    data = a.file.read_bytes()
    path = "/v1/pages" if a.endpoint == "pages" else "/v1/convert"
    deadline = time.monotonic() + a.duration
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    sent = 0
    lock = asyncio.Lock()

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal sent
        while True:
            async with lock:
                if sent >= a.requests or time.monotonic() >= deadline:
                    return
                sent += 1
            t = time.perf_counter()
            try:
                r = await client.post(path, content=data, params={"filename": a.file.name},
                                      headers={"content-type": "application/octet-stream"})
                statuses[str(r.status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
                continue
            latencies.append((time.perf_counter() - t) * 1000)

    t0 = time.perf_counter()
    async with httpx.AsyncClient(base_url=a.url, timeout=a.timeout,
                                 limits=httpx.Limits(max_connections=a.concurrency)) as client:
        await asyncio.gather(*(worker(client) for _ in range(a.concurrency)))
    wall = time.perf_counter() - t0
    lat = sorted(latencies)
    q = lambda p: lat[min(len(lat) - 1, int(p * (len(lat) - 1)))] if lat else float("nan")  # noqa: E731
    print(f"requests {sent} in {wall:.1f} s = {len(lat) / wall:.1f} req/s  (concurrency {a.concurrency})")
    print(f"latency ms: p50 {q(0.5):.1f}  p95 {q(0.95):.1f}  p99 {q(0.99):.1f}  max {q(1.0):.1f}")
    print("statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    return 0 if set(statuses) <= {"200"} else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", type=Path)
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--endpoint", choices=["pages", "convert"], default="pages")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds")
    ap.add_argument("--timeout", type=float, default=120.0, help="per-request timeout, seconds")
    a = ap.parse_args(argv)
    a.url = loopback_only(a.url)
    a.requests = max(1, min(a.requests, MAX_REQUESTS))
    a.duration = max(1.0, min(a.duration, MAX_DURATION_S))
    a.concurrency = max(1, min(a.concurrency, MAX_CONCURRENCY))
    if not a.file.is_file():
        raise SystemExit(f"load_http: {a.file}: no such file")
    return asyncio.run(run(a))


if __name__ == "__main__":
    sys.exit(main())
