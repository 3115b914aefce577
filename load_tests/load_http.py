"""A bounded load generator for a pagerouter server on loopback (never a remote host).

    python load_tests/load_http.py FILE [--url http://127.0.0.1:8000] [--endpoint pages|convert]
        [--concurrency 8] [--requests 200] [--duration 60]

Stops at whichever comes first: --requests sent or --duration seconds. Hard caps keep it a
test tool: at most 5000 requests, 600 s, 64 concurrent requests, loopback addresses only.
Prints requests sent and converted with their rates, latency percentiles, errors by status, and
a line when the --requests cap ended the run before --duration. Sends the API key from
PAGEROUTER_API_KEY (or the first line of PAGEROUTER_API_KEY_FILE) as `Authorization: Bearer KEY`;
401s are errors (an UNAUTHORIZED line first), never latency or throughput figures.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from load_tests.access import auth_headers, parse_source_addresses  # noqa: E402
from load_tests.records import is_unauthorized  # noqa: E402

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
    headers = {"content-type": "application/octet-stream", **auth_headers()}  # the environment's API key
    sources = parse_source_addresses(a.source_addresses)

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal sent
        while True:
            async with lock:
                if sent >= a.requests or time.monotonic() >= deadline:
                    return
                sent += 1
            t = time.perf_counter()
            try:
                r = await client.post(path, content=data, params={"filename": a.file.name}, headers=headers)
                statuses[str(r.status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
                continue
            if r.status_code == 200:  # only conversions make the latency and throughput figures
                latencies.append((time.perf_counter() - t) * 1000)

    t0 = time.perf_counter()
    clients = []
    for i in range(len(sources) or 1):  # one client (a pool of its own) per source address
        transport = httpx.AsyncHTTPTransport(local_address=sources[i]) if sources else None
        clients.append(httpx.AsyncClient(base_url=a.url, timeout=a.timeout, transport=transport,
                                         limits=httpx.Limits(max_connections=a.concurrency)))
    try:
        await asyncio.gather(*(worker(clients[i % len(clients)]) for i in range(a.concurrency)))
    finally:
        for c in clients:
            await c.aclose()
    wall = time.perf_counter() - t0
    lat = sorted(latencies)
    q = lambda p: lat[min(len(lat) - 1, int(p * (len(lat) - 1)))] if lat else float("nan")  # noqa: E731
    refused = sum(v for k, v in statuses.items() if is_unauthorized(k))
    if refused:
        print(f"UNAUTHORIZED: {refused} of {sent} requests got 401 (missing or wrong API key): set "
              "PAGEROUTER_API_KEY or PAGEROUTER_API_KEY_FILE to the server's key; they are errors, not figures")
    failed = sent - len(lat)
    print(f"requests {sent} in {wall:.1f} s = {sent / wall:.1f} sent/s: {len(lat)} converted = "
          f"{len(lat) / wall:.1f} req/s, {failed} not converted ({100 * failed / max(1, sent):.1f} %)  "
          f"(concurrency {a.concurrency}" + (f", {len(sources)} source addresses" if sources else "") + ")")
    if sent >= a.requests and time.monotonic() < deadline:
        print(f"the --requests cap ({a.requests}) ended the run before --duration ({a.duration:g} s)")
    print(f"latency ms (200s): p50 {q(0.5):.1f}  p95 {q(0.95):.1f}  p99 {q(0.99):.1f}  max {q(1.0):.1f}")
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
    ap.add_argument("--source-addresses", metavar="ADDRS",
                    help="loopback source addresses (127.0.0.2-127.0.0.9 or a,b,...): worker i connects "
                         "from address i mod n, so per-client limits apply per address")
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
