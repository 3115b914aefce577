"""A bounded gRPC load generator for pagerouter: unary (ConvertPage, ConvertDocument) and
streaming (StreamDocument) calls through clients/grpc_client.py, from the same weighted mix and
profiles as the Locust file.

    python load_tests/load_grpc.py [--target 127.0.0.1:9000] [--profile steady|ramp|burst]
        [--users 4] [--duration 30] [--requests 500] [--stream-share 0.5] [--records out.jsonl]
        [--source-addresses 127.0.0.2-127.0.0.9]

Per-page inputs go as ConvertPage; whole documents as ConvertDocument or, for a `--stream-share`
of them, StreamDocument. A bad input must end with its expected status (INVALID_ARGUMENT and the
`error-code` trailer, e.g. bad_input): then it counts as `expected`, not as an error. Stops at
--requests or --duration, whichever first; loopback only unless --allow-remote. Prints one JSON
summary line (sent, recorded, outcomes, kinds) on stdout.

The API key (PAGEROUTER_API_KEY or PAGEROUTER_API_KEY_FILE) goes as `authorization` metadata;
a call refused for it is an `UNAUTHENTICATED` error (load_tests/access.py). With
--source-addresses, worker i connects from address i mod n through a local relay (grpcio cannot
bind a channel's source address), so the server's per-client limit applies per address.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pagerouter.clients.errors import PagerouterClientError  # noqa: E402
from pagerouter.clients.grpc_client import AsyncPagerouterGrpcClient  # noqa: E402
from load_tests.access import SourceRelay, api_key, parse_source_addresses, source_for  # noqa: E402
from load_tests.inputs import LoadInput, Picker, default_mix, parse_weights  # noqa: E402
from load_tests.profiles import Profile, add_profile_args, check_target  # noqa: E402
from load_tests.records import RecordWriter  # noqa: E402


BACKOFF_S = 1.0


async def _call(client: AsyncPagerouterGrpcClient, item: LoadInput, streaming: bool) -> tuple[str, list[str]]:
    """(op, page routes) of one call; raises PagerouterClientError for a non-OK status."""
    if item.endpoint == "pages":
        page = await client.convert_page(item.data, item.page, filename=item.filename)
        return "unary_page", [page.route or "none"]
    if streaming:
        items = [x async for x in client.stream(item.data, filename=item.filename)]
        pages = [x for x in items if hasattr(x, "blocks")]
        return "stream", [p.route or "none" for p in pages]
    doc = await client.convert(item.data, filename=item.filename)
    return "unary_doc", [p.route or "none" for p in doc.pages]


def _judge(item: LoadInput, routes: list[str] | None, err: PagerouterClientError | None) -> tuple[str, str]:
    if err is not None:
        kind = f"{err.status}:{err.code}" if err.code and err.code != "grpc_error" else str(err.status)
        ok = item.bad and err.status == item.expect_grpc and err.code == item.expect_code
        return ("expected" if ok else "error"), kind
    if item.bad:
        return "error", "OK_for_bad_input"
    missing = [r for r in item.routes if r not in (routes or [])]
    return ("error", "wrong_answer") if missing or not routes else ("ok", "OK")


async def run(profile: Profile, target: str, mix: list[LoadInput], records: RecordWriter,
              stream_share: float = 0.5, timeout_s: float = 300.0, sources: list[str] | None = None) -> dict:
    """Drive `profile` against `target`; returns the summary (sent = recorded when all ended).
    `sources`: loopback source addresses, worker i connecting from sources[i % n] (a relay each)."""
    sent = 0
    kinds: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    t0 = time.monotonic()

    docs = {"n": 0}
    capped: dict[str, float | None] = {"at_s": None}  # seconds into the run when the last request the cap allows went
    picker = Picker(mix, seed=profile.seed)  # shared by the workers: every round of the mix is sent whole
    key = api_key()  # the environment's key, sent as `authorization` metadata ("" sends none)
    secret = key.header_value().split(" ", 1)[1] if key is not None else ""
    sources = list(dict.fromkeys(sources or []))
    relays: dict[str, SourceRelay] = {}
    clients: dict[str | None, AsyncPagerouterGrpcClient] = {}

    async def worker(i: int) -> None:
        nonlocal sent
        client = clients[source_for(i, sources)]
        while True:
            users = profile.users_at(time.monotonic() - t0)
            if users is None or sent >= profile.max_requests:
                return
            if i >= users:  # this worker is not wanted now (ramp, burst): look again shortly
                await asyncio.sleep(0.1)
                continue
            sent += 1
            if sent == profile.max_requests:  # the cap: the run ends once the last answers are in
                capped["at_s"] = round(time.monotonic() - t0, 3)
            item = picker.next()
            streaming = False
            if item.endpoint != "pages":  # every 1/stream_share-th document is streamed, not drawn at random
                docs["n"] += 1
                streaming = int(docs["n"] * stream_share) != int((docs["n"] - 1) * stream_share)
            op = "unary_page" if item.endpoint == "pages" else ("stream" if streaming else "unary_doc")
            t = time.perf_counter()
            routes, err = None, None
            try:
                op, routes = await _call(client, item, streaming)
            except PagerouterClientError as exc:
                err = exc
            except Exception as exc:  # noqa: BLE001 - counted by its type, the run goes on
                err = PagerouterClientError(type(exc).__name__, "", str(exc))
            outcome, kind = _judge(item, routes, err)
            outcomes[outcome] += 1
            kinds[kind] += 1
            latency = round((time.perf_counter() - t) * 1000, 2)
            records.write(client="grpc", input=item.name, op=op, latency_ms=latency, outcome=outcome,
                          kind=kind, pages=len(routes or []), routes=routes or [],
                          source=source_for(i, sources) or "", users=users)
            if err is not None and err.status in ("RESOURCE_EXHAUSTED", "UNAVAILABLE"):
                await asyncio.sleep(BACKOFF_S)  # refused: back off instead of spinning on refusals

    try:
        for src in sources or [None]:
            via = target
            if src is not None:
                relays[src] = await SourceRelay(target, src).start()
                via = relays[src].target
            clients[src] = AsyncPagerouterGrpcClient(via, timeout=timeout_s, api_key=secret)
        await asyncio.gather(*(worker(i) for i in range(profile.peak())))
    finally:
        for c in clients.values():
            await c.close()
        for r in relays.values():
            await r.close()
    return {"sent": sent, "recorded": records.count, "outcomes": dict(outcomes), "kinds": dict(kinds),
            "wall_s": round(time.monotonic() - t0, 3), "sources": sources, "capped_at_s": capped["at_s"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="127.0.0.1:9000", help="gRPC host:port")
    add_profile_args(ap)
    ap.add_argument("--sample", type=Path, help="add this PDF to the mix as a whole-document input")
    ap.add_argument("--records", type=Path, help="append one JSON line per call here")
    ap.add_argument("--timeout", type=float, default=300.0, help="per-call deadline, seconds")
    ap.add_argument("--allow-remote", action="store_true", help="allow a non-loopback target")
    a = ap.parse_args(argv)
    sources = parse_source_addresses(a.source_addresses, a.allow_remote)
    target = check_target(a.target, a.allow_remote, "load_grpc")
    if a.sample is not None and not a.sample.is_file():
        raise SystemExit(f"load_grpc: {a.sample}: no such file")
    profile = Profile(kind=a.profile, users=a.users, duration_s=a.duration, base_users=a.base_users,
                      burst_at_s=a.burst_at, burst_for_s=a.burst_for, max_requests=a.requests).bounded()
    records = RecordWriter(a.records)
    try:
        summary = asyncio.run(run(profile, target, default_mix(parse_weights(a.weights), a.sample), records,
                                  max(0.0, min(1.0, a.stream_share)), a.timeout, sources))
    finally:
        records.close()
    print(json.dumps(summary), flush=True)
    return 0 if not summary["outcomes"].get("error") else 1


if __name__ == "__main__":
    sys.exit(main())
