"""VLM tier benchmark: engine start and memory, batched vs one-by-one requests, tokens/s, and
pages/s and seconds per page for each tier (region VLM as small reader, page VLM as
escalation), on the engines a config names.

    # on a GPU machine with the weights present (configs/serve-gpu.yaml names them):
    python benchmarks/bench_vlm.py --config configs/serve-gpu.yaml --pdf some.pdf [--pages 20]

    # on this CPU, with the tiny random-weight Qwen2-VL the tests build (plumbing figures only:
    # random weights read nothing, every output runs to max_tokens):
    python benchmarks/bench_vlm.py --tiny

Every page of `--pdf` is sent to each tier as an OCR page (whatever triage would say), so the
figures are per tier, not per routed document. The large tier runs the full retry ladder.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402
from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

import pymupdf  # noqa: E402

from pagerouter.bench import synth  # noqa: E402
from pagerouter.config import PagerouterConfig, load_config  # noqa: E402
from pagerouter.flow.engines import build_engine  # noqa: E402
from pagerouter.model import TriageDecision  # noqa: E402
from pagerouter.ocr.task import make_ocr_task  # noqa: E402
from pagerouter.common.stages import Reading  # noqa: E402
from pagerouter.vlm.base import VlmRequest  # noqa: E402


def rss_mb() -> float:
    """Peak RSS of this process plus its finished children (vLLM's engine core is a child)."""
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (me + kids) / 1024


def tree_rss_mb() -> float:
    """Current RSS of this process and all its descendants (live engine processes)."""
    try:
        import psutil
    except ImportError:
        return float("nan")
    p = psutil.Process()
    return sum(q.memory_info().rss for q in [p, *p.children(recursive=True)]) / 2**20


def tiny_config(workdir: Path) -> PagerouterConfig:
    from tests.tiny_vlm import build_tiny_qwen2vl

    model = build_tiny_qwen2vl(workdir / "tiny-qwen2vl")
    eng = {"kind": "vllm", "model": str(model), "dtype": "float32", "enforce_eager": True, "max_model_len": None,
           "cpu_kv_cache_gib": 1, "max_num_seqs": 32}
    return PagerouterConfig.model_validate({"ocr": {
        "small_reader": {"kind": "vlm", "render_engine": "paddleocr_vl",
                         "vlm": {"engine": eng, "max_new_tokens": 32, "ladder": {"max_attempts": 1}}},
        "escalation": {"kind": "vlm", "vlm": {"engine": eng, "max_new_tokens": 64, "ladder": {"max_attempts": 2}}},
    }})


def sample_pdf(workdir: Path, pages: int) -> Path:
    path = workdir / "scans.pdf"
    doc = pymupdf.open()
    for i in range(pages):
        synth.add_scanned_page(doc, [f"Invoice number {4711 + i}", "Total due 99 EUR", "Payable within 30 days"],
                               size=(420, 300), fontsize=14)
    doc.save(path)
    doc.close()
    return path


def engine_figures(engine, n: int = 16, max_tokens: int = 32) -> dict:
    """n concurrent requests (one per thread, as region ladders call) vs the same n one by one."""
    rng = np.random.default_rng(0)
    imgs = [(rng.random((224, 224, 3)) * 255).astype(np.uint8) for _ in range(n)]
    reqs = [VlmRequest(prompt="OCR:", image=im, max_tokens=max_tokens, temperature=0.0) for im in imgs]
    engine.generate(reqs[:2])  # warm-up: the first call compiles kernels
    before = dict(engine.stats().get("batch_sizes", {}))
    out = [None] * n
    t0 = time.perf_counter()
    threads = [threading.Thread(target=lambda i=i: out.__setitem__(i, engine.generate([reqs[i]])[0])) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    batched = time.perf_counter() - t0
    after = engine.stats().get("batch_sizes", {})
    seen = {int(k): v - before.get(k, 0) for k, v in after.items() if v > before.get(k, 0)}
    t0 = time.perf_counter()
    for r in reqs:
        engine.generate([r])
    serial = time.perf_counter() - t0
    tokens = sum(g.completion_tokens for g in out)
    return {"requests": n, "max_tokens": max_tokens, "batched_s": round(batched, 2), "one_by_one_s": round(serial, 2),
            "speedup": round(serial / batched, 2) if batched else None, "batch_sizes_seen": dict(sorted(seen.items())),
            "tokens_per_s_batched": round(tokens / batched, 1), "tokens_per_s_one_by_one": round(tokens / serial, 1)}


def tier_figures(cfg: PagerouterConfig, pdf: Path, pages: int) -> dict:
    doc = pymupdf.open(pdf)
    numbers = list(range(min(pages, doc.page_count)))
    tasks = [make_ocr_task(doc[i], i + 1, pdf.name, TriageDecision(route="ocr"), [], cfg.ocr) for i in numbers]
    doc.close()
    results: dict = {}

    t0 = time.perf_counter()
    reader = build_engine("small_reader", cfg.ocr)
    layout = build_engine("layout", cfg.ocr)
    results["small_start_s"] = round(time.perf_counter() - t0, 1)
    results["small_engine"] = engine_figures(reader.engine)
    results["rss_after_small_mb"] = round(tree_rss_mb(), 0)
    t0 = time.perf_counter()
    layouts = layout.detect_batch(tasks)
    readings = reader.read_batch(tasks, layouts)  # all pages at once: the engine batches their regions
    s = time.perf_counter() - t0
    results["small_tier"] = {"pages": len(tasks), "seconds": round(s, 2), "pages_per_s": round(len(tasks) / s, 3),
                             "s_per_page": round(s / len(tasks), 3),
                             "regions": sum(len(r.attempts) for r in readings)}

    t0 = time.perf_counter()
    large = build_engine("escalation", cfg.ocr)
    results["large_start_s"] = round(time.perf_counter() - t0, 1)
    results["rss_after_large_mb"] = round(tree_rss_mb(), 0)
    t0 = time.perf_counter()
    with_threads: list = [None] * len(tasks)

    def one(i):
        with_threads[i] = large.escalate(tasks[i], Reading(blocks=[], engine="none"))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(tasks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = time.perf_counter() - t0
    attempts = [len(r.attempts) for r in with_threads]
    results["large_tier"] = {"pages": len(tasks), "seconds": round(s, 2), "pages_per_s": round(len(tasks) / s, 3),
                             "s_per_page": round(s / len(tasks), 3), "attempts_per_page": attempts,
                             "accepted": sum(1 for r in with_threads if not any(c.name == "vlm_ladder_exhausted" for c in r.checks))}
    results["peak_rss_mb"] = round(rss_mb(), 0)
    for e in (reader, large):
        e.close()
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", type=Path, help="pagerouter or Serve config naming the VLM tiers (e.g. configs/serve-gpu.yaml)")
    ap.add_argument("--pdf", type=Path, help="pages to read (default: synthetic scans)")
    ap.add_argument("--pages", type=int, default=8, help="pages per tier")
    ap.add_argument("--tiny", action="store_true", help="use the tiny random-weight model the tests build (CPU)")
    args = ap.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.tiny:
            cfg = tiny_config(work)
        elif args.config:
            cfg = load_config(args.config)
        else:
            ap.error("give --config (with real weights) or --tiny")
        if cfg.ocr.small_reader.kind != "vlm" or cfg.ocr.escalation.kind != "vlm":
            ap.error("the config must set ocr.small_reader.kind and ocr.escalation.kind to vlm")
        pdf = args.pdf or sample_pdf(work, args.pages)
        figures = tier_figures(cfg, pdf, args.pages)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
