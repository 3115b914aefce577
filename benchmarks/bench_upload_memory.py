"""Replica memory under large uploads against a real `pagerouter serve` (a benchmark, not a timed test).

    python benchmarks/bench_upload_memory.py [--uploads 4] [--mb 150] [--settle-s 10]

Builds one PDF of `--mb` MB (five text pages plus an incompressible embedded file, so every byte
travels through the ingress, Triage and its isolation worker while the pages stay cheap to read),
starts `pagerouter serve` on loopback (OCR off), sends `--uploads` copies at once over HTTP and
prints, per process under the serve process, RSS before, the peak during the uploads (sampled
every 0.2 s) and RSS `--settle-s` seconds after the last answer.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

import pymupdf  # noqa: E402
import yaml  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pagerouter.bench import synth  # noqa: E402
from tests import hostile_corpus as hc  # noqa: E402
from tests.serve_fixtures import free_port, pagerouter_serve_process  # noqa: E402
from tests.test_hostile import MemoryWatch  # noqa: E402


def big_pdf(path: Path, mb: float) -> None:
    doc = pymupdf.open()
    for i in range(5):
        synth.add_text_page(doc, [f"Page {i + 1}. " + synth.LOREM[:400]])
    doc.embfile_add("payload.bin", os.urandom(int(mb * 1024 * 1024)))
    doc.save(path)


def snapshot(root: int) -> dict[int, tuple[str, float]]:
    return {pid: (hc.cmdline(pid)[:60], hc.rss_mb(pid)) for pid, _ in hc.descendants(root, with_parents=True)}


def rss_parts(pid: int) -> str:
    """RssAnon (the process's own heap) / RssShmem (shared memory it has touched: Ray's object
    store is mapped into every worker, so objects it read count here, freed or not) in MB."""
    try:
        fields = dict(ln.split(":", 1) for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in ln)
        return "/".join(f"{int(fields[k].split()[0]) / 1024:.0f}" for k in ("RssAnon", "RssShmem"))
    except (OSError, KeyError, ValueError):
        return "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uploads", type=int, default=4)
    ap.add_argument("--mb", type=float, default=150.0)
    ap.add_argument("--settle-s", type=float, default=10.0)
    args = ap.parse_args()

    d = Path(tempfile.mkdtemp(prefix="bench-upload-"))
    pdf = d / "big.pdf"
    big_pdf(pdf, args.mb)
    data = pdf.read_bytes()
    cfg = d / "serve.yaml"
    cfg.write_text(yaml.safe_dump({"ocr": {"enabled": False}, "serve": {"max_upload_mb": args.mb + 50}}))
    ray_tmp = tempfile.mkdtemp(prefix="prbu", dir="/tmp")
    http_port, grpc_port = free_port(), free_port()
    env = {**os.environ, "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp,
           "PYTHONPATH": str(REPO)}
    for var in ("PAGEROUTER_API_KEY", "PAGEROUTER_API_KEY_FILE", "PAGEROUTER_FAULT_INJECTION_FOR_TESTS"):
        env.pop(var, None)
    url = f"http://127.0.0.1:{http_port}/v1/convert"
    print(f"{args.uploads} uploads of {len(data) / 1e6:.0f} MB at once", flush=True)
    with pagerouter_serve_process(d, cfg, env, http_port, grpc_port, ray_tmp) as proc:
        small = d / "small.pdf"
        doc = pymupdf.open()
        synth.add_text_page(doc, ["warm up"])
        doc.save(small)
        httpx.post(url, content=small.read_bytes(), timeout=120)  # starts the isolation workers
        before = snapshot(proc.pid)
        watch = MemoryWatch(proc.pid)
        watch.start()
        t0 = time.monotonic()
        with ThreadPoolExecutor(args.uploads) as pool:
            answers = list(pool.map(lambda _: httpx.post(url, content=data, timeout=600), range(args.uploads)))
        wall = time.monotonic() - t0
        watch.stop.set()
        watch.join()
        time.sleep(args.settle_s)
        after = snapshot(proc.pid)
        parts = {pid: rss_parts(pid) for pid in after}
    ok = [r.status_code == 200 and [p["status"] for p in r.json()["pages"]] == ["ok"] * 5 for r in answers]
    print(f"answers: {[r.status_code for r in answers]}, all five pages ok: {all(ok)}; {wall:.1f} s")
    print(f"{'process':<62} {'before':>7} {'peak':>7} {'after':>7} {'after anon/shmem':>17}  (MB)")
    for pid, peak in sorted(watch.peak.items(), key=lambda kv: -kv[1]):
        name = watch.names.get(pid, "?")
        b = before.get(pid, (name, 0.0))[1]
        a = after.get(pid, (name, float("nan")))[1]
        if peak >= 150 or a >= 150:
            print(f"{name[:60]:<62} {b:>7.0f} {peak:>7.0f} {a:>7.0f} {parts.get(pid, '-'):>17}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
