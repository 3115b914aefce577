"""The hostile-input corpus against a real `pagerouter serve` (a benchmark script, not a timed test).

    python benchmarks/bench_hostile.py [--rounds 2] [--baseline-s 15] [--page-timeout-s 3] [--json out.json]

Builds the corpus of tests/hostile_corpus.py, starts `pagerouter serve` on loopback (OCR off, the
limits of tests/test_hostile.py) and prints:
  1. case x front end (CLI, HTTP, gRPC) -> outcome (an error's status and code, or each page's status);
  2. peak RSS of each Serve replica, and of its isolation workers, sampled every 0.2 s from /proc
     during the hostile run (and the idle figure before it);
  3. good-file requests/s (one-page PDF, two clients in a loop over HTTP) without the hostile run and
     during it (`--rounds` passes of the whole corpus over HTTP and gRPC at once, 8 in flight).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests import hostile_corpus as hc  # noqa: E402
from tests.serve_fixtures import free_port, pagerouter_serve_process  # noqa: E402
from tests.test_hostile import CONFIG, MemoryWatch, _http, _text, grpc_outcome, http_outcome  # noqa: E402


def brief(got: tuple) -> str:
    if got[0] == "error":
        return f"{got[1]} {got[2]}"
    statuses = defaultdict(int)
    for p in got[1]:
        statuses[p["status"]] += 1
    return "200 " + ",".join(f"{n} {s}" for s, n in sorted(statuses.items())) + why(got[1])


def why(pages: list[dict]) -> str:
    p = next((p for p in pages if p["status"] != "ok"), None)
    if p is None:
        return ""
    if p.get("error"):
        return " (" + p["error"].split(": ", 2)[-1].replace("reading failed: ", "")[:24] + ")"
    return f" ({','.join(p.get('flags') or [])})"


def cli_outcomes(corpus: dict[str, Path], cfg: Path, out: Path) -> dict[str, str]:
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "pagerouter.cli.main", "convert", "--config", str(cfg), "--format", "json", "-q",
         "-o", str(out), *map(str, corpus.values())],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    res = {}
    for case, path in corpus.items():
        err = [ln for ln in r.stderr.splitlines() if ln.startswith("pagerouter: error:") and str(path) + ":" in ln]
        if err:
            res[case] = "exit 2: " + err[0].split(str(path) + ": ", 1)[1][:30]
        else:
            pages = json.loads((out / f"{path.stem}.json").read_text())["pages"]
            res[case] = brief(("pages", pages))
    res["_wall_s"] = f"{time.monotonic() - t0:.1f}"
    res["_exit"] = str(r.returncode)
    return res


def good_rate(url: str, good: Path, stop: threading.Event, clients: int = 2) -> tuple[int, int, float, list]:
    """Good-file requests until `stop`: (answered right, wrong, seconds, latencies)."""
    ok, bad, lat = [0], [0], []
    lock = threading.Lock()

    def loop(i):
        while not stop.is_set():
            t = time.monotonic()
            r = _http(url, good, source=f"127.0.0.{50 + i}")
            right = r.status_code == 200 and hc.GOOD_TEXT in _text(r.json()["pages"][0])
            with lock:
                (ok if right else bad)[0] += 1
                lat.append(time.monotonic() - t)

    t0 = time.monotonic()
    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ok[0], bad[0], time.monotonic() - t0, lat


def replica_table(watch: MemoryWatch) -> list[tuple[str, float, float, int]]:
    """(Ray process, its own peak MB, peak MB of the biggest process below it (isolation workers), count)."""
    rows = []
    for pid, name in watch.names.items():
        if name.startswith("ray::") and ("ServeReplica" in name or "Proxy" in name or "Controller" in name):
            below = watch.under(pid)
            # a Ray worker's title names the method it runs at the moment: keep the actor's name only
            rows.append((name.replace("ray::", "").split(".")[0].split()[0][:52], watch.peak[pid],
                         max((watch.peak[c] for c in below), default=0.0), len(below)))
    return sorted(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2, help="passes of the corpus over HTTP and gRPC")
    ap.add_argument("--baseline-s", type=float, default=15.0, help="seconds of good requests without hostile load")
    ap.add_argument("--page-timeout-s", type=float, default=3.0, help="isolation.page_timeout_s of the server")
    ap.add_argument("--json", type=Path, help="write the figures here too")
    args = ap.parse_args()

    d = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    corpus = hc.build_corpus(d / "corpus")
    good = d / "corpus" / "good.pdf"
    config = json.loads(json.dumps(CONFIG))
    config["isolation"]["page_timeout_s"] = args.page_timeout_s
    cfg = d / "serve.yaml"
    cfg.write_text(yaml.safe_dump(config))
    print(f"corpus: {', '.join(f'{k} ({p.stat().st_size} B)' for k, p in corpus.items())}", flush=True)

    cli = cli_outcomes(corpus, cfg, d / "cli-out")
    print(f"CLI: whole corpus in one `pagerouter convert`: exit {cli['_exit']}, {cli['_wall_s']} s", flush=True)

    ray_tmp = tempfile.mkdtemp(prefix="prbh", dir="/tmp")
    http_port, grpc_port = free_port(), free_port()
    env = {**os.environ, "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp,
           "PYTHONPATH": str(REPO)}
    for var in ("PAGEROUTER_API_KEY", "PAGEROUTER_API_KEY_FILE", "PAGEROUTER_FAULT_INJECTION_FOR_TESTS"):
        env.pop(var, None)
    http, target = f"http://127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}"
    with pagerouter_serve_process(d, cfg, env, http_port, grpc_port, ray_tmp) as proc:
        _http(http, good)  # warm: the first request starts the isolation workers
        idle = MemoryWatch(proc.pid)
        idle.start()
        stop = threading.Event()
        timer = threading.Timer(args.baseline_s, stop.set)
        timer.start()
        base_ok, base_bad, base_s, base_lat = good_rate(http, good, stop)
        idle.stop.set()
        idle.join()

        watch = MemoryWatch(proc.pid)
        watch.start()
        stop = threading.Event()
        during: list = []
        goods = threading.Thread(target=lambda: during.append(good_rate(http, good, stop)), daemon=True)
        goods.start()
        jobs = [(r, front, case) for r in range(args.rounds) for case in corpus for front in ("http", "grpc")]
        t0 = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(lambda j: (j, http_outcome(http, corpus[j[2]]) if j[1] == "http"
                                           else grpc_outcome(target, corpus[j[2]])), jobs))
        hostile_s = time.monotonic() - t0
        stop.set()
        goods.join()
        watch.stop.set()
        watch.join()
        after = _http(http, good).status_code

    outcomes = defaultdict(set)
    for (_, front, case), res in got:
        outcomes[(case, front)].add(brief(res))
    print(f"\n{'case':<16} {'CLI':<40} {'HTTP':<40} gRPC")
    for case in corpus:
        row = [cli[case], " | ".join(sorted(outcomes[(case, 'http')])), " | ".join(sorted(outcomes[(case, 'grpc')]))]
        print(f"{case:<16} {row[0][:39]:<40} {row[1][:39]:<40} {row[2][:39]}")

    print(f"\npeak RSS (MB), sampled every 0.2 s; hostile run: {len(jobs)} requests in {hostile_s:.1f} s")
    print(f"{'process':<54} {'idle':>6} {'hostile':>8} {'below it (workers)':>23}")
    idle_rows = {r[0]: r for r in replica_table(idle)}
    for name, mb, worker_mb, n in replica_table(watch):
        i = idle_rows.get(name, (name, 0.0, 0.0, 0))
        print(f"{name:<54} {i[1]:>6.0f} {mb:>8.0f} {worker_mb:>15.0f} ({n} seen)")
    all_peak = max(watch.peak.values(), default=0)
    print(f"largest single process under the serve process: {all_peak:.0f} MB")

    d_ok, d_bad, d_s, d_lat = during[0]
    p50 = lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan")  # noqa: E731
    print(f"\ngood file (1 page, 2 clients): without hostile load {base_ok / base_s:.1f} req/s "
          f"(p50 {p50(base_lat) * 1000:.0f} ms, {base_bad} wrong); during the hostile run "
          f"{d_ok / d_s:.1f} req/s (p50 {p50(d_lat) * 1000:.0f} ms, max {max(d_lat, default=0):.1f} s, {d_bad} wrong); "
          f"after: HTTP {after}")
    if args.json:
        args.json.write_text(json.dumps({
            "outcomes": {f"{c}/{f}": sorted(v) for (c, f), v in outcomes.items()}, "cli": cli,
            "rss_mb": {watch.names[p]: round(mb) for p, mb in watch.peak.items()},
            "good_rps": {"baseline": base_ok / base_s, "hostile": d_ok / d_s}, "wrong": [base_bad, d_bad],
        }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
