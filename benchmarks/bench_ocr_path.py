"""Where the router's OCR seconds go, page by page, against bare RapidOCR on the same render.

    PYTHONPATH=. python benchmarks/bench_ocr_path.py                 # real corpus, 32 OCR pages
    PYTHONPATH=. python benchmarks/bench_ocr_path.py --pages 12 --per-doc 2 --json out.json

Pages: the triage decides (route `ocr` or `mixed`) on ../shared/corpus/real (or --corpus);
at most --per-doc pages per file, --pages in all, so one long scanned file does not dominate.

For each page the router's OCR path runs in-process exactly as `pipeline.ocr_flow` runs it
(layout -> small reader -> checks -> escalation when flagged) with the engines of an
`EngineSet`; engine entry points are wrapped with a timer that books each second to the
innermost step only (exclusive time), so the steps add up to the total. Then bare
`rapidocr.RapidOCR()(image)` (its defaults) reads the same render. The two are interleaved page
by page so load swings on a shared machine hit both.

Served-graph copies: in `pagerouter serve` each OCR page's `OcrTask` (render + page bytes) is
pickled from Triage to the ingress (the `Triage.outcomes` stream), then from the ingress to
Layout (`layout.run.remote(task)`), to SmallReader (`small_reader.run.remote(task, lay)`) and,
when flagged, to the escalation tier (`large_reader.escalate.remote(task, first)`), all in
deployments/ingress.py. The `copy` rows estimate that cost as measured pickle
dump+load seconds of the task times the crossings the page would make; they are not part of
the in-process total.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pickle
import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

from pagerouter.config import PagerouterConfig  # noqa: E402
from pagerouter.flow.engines import EngineSet  # noqa: E402
from pagerouter.intake.inputs import open_source  # noqa: E402
from pagerouter.flow.pipeline import DocumentTriage, ocr_flow  # noqa: E402

REAL = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"  # beside the checkout


class StepTimer:
    """Exclusive seconds per step: a nested step's time is taken out of its parent's."""

    def __init__(self):
        self.stack: list[list] = []  # [label, start, child seconds]
        self.totals: dict[str, float] = defaultdict(float)

    @contextmanager
    def step(self, label: str):
        if self.stack and self.stack[-1][0].startswith("escalation") and not label.startswith("escalation"):
            label = f"escalation: {label}"  # the re-read's own detection etc. stay escalation's
        if self.stack and self.stack[-1][0] == "orientation" and label in ("detection", "line classifier"):
            label = "orientation"
        frame = [label, time.perf_counter(), 0.0]
        self.stack.append(frame)
        try:
            yield
        finally:
            self.stack.pop()
            spent = time.perf_counter() - frame[1]
            self.totals[label] += spent - frame[2]
            if self.stack:
                self.stack[-1][2] += spent

    def take(self) -> dict[str, float]:
        out, self.totals = dict(self.totals), defaultdict(float)
        return out


TIMER = StepTimer()


def wrap(owner, attr: str, label: str) -> None:
    """Time every call of `owner.attr` (a class or module attribute) as `label`."""
    inner = getattr(owner, attr)

    def timed(*a, **kw):
        with TIMER.step(label):
            return inner(*a, **kw)

    setattr(owner, attr, timed)


def instrument() -> None:
    from rapidocr import RapidOCR
    from rapidocr.ch_ppocr_cls.main import TextClassifier
    from rapidocr.ch_ppocr_det.main import TextDetector
    from rapidocr.ch_ppocr_rec.main import TextRecognizer

    from pagerouter.ocr import checks, escalate, layout_rapid, orientation, reader_rapidocr, regions, tables, vote
    from pagerouter.ocr import reader_tesseract, task as task_mod

    wrap(TextDetector, "__call__", "detection")
    # the reader's detection in the window around the ink calls the network itself
    wrap(reader_rapidocr.RapidOcrReader, "_detect_in_ink_window", "detection")
    wrap(TextRecognizer, "__call__", "recognition")
    wrap(TextClassifier, "__call__", "line classifier")
    wrap(RapidOCR, "__call__", "rapidocr crops+glue")
    wrap(orientation.OrientationDetector, "detect", "orientation")
    wrap(layout_rapid.RapidLayoutEngine, "regions", "layout model")
    wrap(layout_rapid.RapidLayoutEngine, "detect", "layout other")
    wrap(reader_rapidocr.RapidOcrReader, "read_task", "reader other")
    wrap(reader_rapidocr.RapidOcrReader, "_remask_foreign_lines", "script re-mask")
    wrap(reader_rapidocr, "osd_script", "tesseract OSD")
    wrap(reader_tesseract.TesseractReader, "read_image_lines", "tesseract")
    wrap(regions, "read_task_with_lines", "blocks+order")
    wrap(tables.TableReader, "read", "table reading")
    wrap(checks, "check_reading", "checks")
    wrap(escalate.VoteEscalator, "escalate", "escalation other")
    wrap(escalate, "vote", "escalation: vote")
    wrap(escalate, "render_task", "render")
    if hasattr(reader_tesseract, "render_task"):
        wrap(reader_tesseract, "render_task", "render")
    wrap(task_mod, "render_page", "render")
    wrap(task_mod, "single_page_pdf", "page bytes")
    wrap(task_mod, "ink_share", "ink share")
    # pipeline imports check_reading inside ocr_flow from the module: the wrapper above is seen.
    del vote


def pick_tasks(corpus: Path, cfg: PagerouterConfig, pages: int, per_doc: int):
    """(file, OcrTask, render timings) for up to `pages` OCR/mixed pages, `per_doc` per file."""
    out = []
    for path in sorted(corpus.glob("*.pdf")):
        if len(out) >= pages:
            break
        try:
            src = open_source(str(path))
        except Exception as exc:  # noqa: BLE001 - a file the router refuses is not an OCR page
            print(f"skip {path.name}: {exc}", file=sys.stderr)
            continue
        taken = 0
        try:
            for outcome in DocumentTriage(cfg).iter_pages(src, list(range(1, src.page_count + 1))):
                if outcome.task is None:
                    continue
                out.append((path.name, outcome.task, TIMER.take()))
                taken += 1
                if taken >= per_doc or len(out) >= pages:
                    break
        finally:
            src.close()
        TIMER.take()  # triage of text-layer pages is not the OCR path's
    return out


def copy_seconds(task, crossings: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    blob = pickle.dumps(task, protocol=5)
    pickle.loads(blob)
    return (time.perf_counter() - t0) * crossings, len(blob)


def served(tasks, clients: int, batch_wait_s: float | None) -> dict:
    """Batch sizes under load: `clients` concurrent single-page requests (the OCR pages, each as
    its own one-page PDF, from distinct loopback addresses) against the real served graph with
    the default config; Layout/SmallReader Serve batch sizes and the reader's pages per
    recognition run, from their `stats`."""
    import socket
    from concurrent.futures import ThreadPoolExecutor

    import httpx
    import ray
    from ray import serve

    from pagerouter.clients.http_client import PagerouterHttpClient
    from pagerouter.graph.builder import build_app, serve_start_options

    def port() -> int:
        with socket.socket() as so:
            so.bind(("127.0.0.1", 0))
            return so.getsockname()[1]

    cfg = PagerouterConfig()
    cfg.serve.http_port, cfg.serve.grpc_port = port(), port()
    if batch_wait_s is not None:
        cfg.serve.layout.batch_wait_timeout_s = cfg.serve.small_reader.batch_wait_timeout_s = batch_wait_s
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2 * (os.cpu_count() or 1), include_dashboard=False, log_to_driver=False)
    try:
        serve.start(**serve_start_options(cfg.serve))
        serve.run(build_app(cfg), name=cfg.serve.app_name, route_prefix="/")
        url = f"http://127.0.0.1:{cfg.serve.http_port}"
        pdfs = [t.page_bytes for _n, t, _r in tasks]

        def post(i: int) -> float:
            t0 = time.perf_counter()
            with PagerouterHttpClient(url, timeout=600) as c:
                c._http.close()  # distinct loopback clients: the per-client request limit stays out of it
                c._http = httpx.Client(base_url=url, timeout=600,
                                       transport=httpx.HTTPTransport(local_address=f"127.0.0.{40 + i % 200}"))
                doc = c.convert(pdfs[i % len(pdfs)], filename=f"p{i}.pdf")
            assert doc.pages[0].status != "failed", doc.pages[0].error
            return time.perf_counter() - t0

        post(0)  # warm every stage
        handles = {d: serve.get_deployment_handle(d, app_name=cfg.serve.app_name) for d in ("Layout", "SmallReader")}
        before = {d: h.stats.remote().result(timeout_s=60) for d, h in handles.items()}
        t0 = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            lat = sorted(pool.map(post, range(clients)))
        wall = time.perf_counter() - t0
        after = {d: h.stats.remote().result(timeout_s=60) for d, h in handles.items()}
    finally:
        serve.shutdown()
        ray.shutdown()

    def grown(key: str, d: str) -> dict[int, int]:
        a, b = after[d].get(key, {}), before[d].get(key, {})
        return {int(k): v - b.get(k, 0) for k, v in sorted(a.items()) if v - b.get(k, 0) > 0}

    return {"clients": clients, "wall_s": round(wall, 1), "pages_per_s": round(clients / wall, 3),
            "p50_s": round(lat[len(lat) // 2], 1), "max_s": round(lat[-1], 1),
            "layout_batch_sizes": grown("batch_sizes", "Layout"),
            "reader_batch_sizes": grown("batch_sizes", "SmallReader"),
            "reader_pages_per_recognition_run": grown("pages_per_recognition_run", "SmallReader")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=REAL)
    ap.add_argument("--pages", type=int, default=32, help="OCR pages in all")
    ap.add_argument("--per-doc", type=int, default=3, help="at most this many OCR pages per file")
    ap.add_argument("--no-bare", action="store_true", help="skip bare RapidOCR")
    ap.add_argument("--json", type=Path, help="write per-page figures here")
    ap.add_argument("--rec-batch", type=int, help="RapidOCR rec_batch_num for the router (default: RapidOCR's 6)")
    ap.add_argument("--served", type=int, metavar="N",
                    help="instead: N concurrent single-page requests of these pages against the served graph; "
                    "prints Serve batch sizes and pages per recognition run")
    ap.add_argument("--batch-wait", type=float, help="with --served: batch_wait_timeout_s of Layout and SmallReader")
    args = ap.parse_args()

    cfg = PagerouterConfig()
    instrument()
    tasks = pick_tasks(args.corpus, cfg, args.pages, args.per_doc)
    if not tasks:
        sys.exit(f"no OCR pages found under {args.corpus}")
    if args.served:
        print(json.dumps(served(tasks, args.served, args.batch_wait), indent=1))
        return
    engines = EngineSet(cfg.ocr)
    if args.rec_batch:
        engines.get("small_reader").engine._load_rec_model().rec_batch_num = args.rec_batch
    calls = engines.calls()
    bare = None
    if not args.no_bare:
        import logging

        from rapidocr import RapidOCR

        bare = RapidOCR(params={"Global.log_level": "warning"})
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    # Warm every model once (first calls load ONNX sessions), off the clock.
    asyncio.run(ocr_flow(tasks[0][1], calls, cfg))
    if bare is not None:
        bare(tasks[0][1].image)
    TIMER.take()

    steps: dict[str, float] = defaultdict(float)
    rows = []
    router_total = bare_total = copy_total = router_cpu = bare_cpu = 0.0
    for name, task, render in tasks:
        t0, c0 = time.perf_counter(), time.process_time()
        reading = asyncio.run(ocr_flow(task, calls, cfg))
        ocr_s = time.perf_counter() - t0
        r_cpu = time.process_time() - c0  # onnxruntime's threads included; render (triage) not
        router_cpu += r_cpu
        own = TIMER.take()
        own.update({k: v for k, v in render.items()})
        page_s = ocr_s + sum(render.values())
        escalated = "escalate" in reading.timings
        crossings = 4 if escalated else 3
        cs, size = copy_seconds(task, crossings)
        b_s = b_cpu = None
        if bare is not None:
            t1, c1 = time.perf_counter(), time.process_time()
            bare(task.image)
            b_s = time.perf_counter() - t1
            b_cpu = time.process_time() - c1
            bare_total += b_s
            bare_cpu += b_cpu
            TIMER.take()
        for k, v in own.items():
            steps[k] += v
        router_total += page_s
        copy_total += cs
        rows.append({"file": name, "page": task.number, "route": task.decision.route, "router_s": page_s,
                     "bare_s": b_s, "router_cpu_s": r_cpu, "bare_cpu_s": b_cpu, "escalated": escalated,
                     "copy_s": cs, "task_bytes": size,
                     "steps": own, "flags": [c.name for c in reading.checks if not c.passed]})
        print(f"{name} p{task.number} {task.decision.route:6s} router {page_s:6.2f} s ({r_cpu:6.2f} CPU s)"
              + (f"  bare {b_s:6.2f} s ({b_cpu:6.2f} CPU s)" if b_s is not None else "")
              + ("  escalated" if escalated else ""), flush=True)

    n = len(rows)
    print(f"\n{n} OCR/mixed pages from {len({r['file'] for r in rows})} files "
          f"({sum(r['route'] == 'mixed' for r in rows)} mixed, {sum(r['escalated'] for r in rows)} escalated)\n")
    print(f"| step | s/page | share |\n|---|---:|---:|")
    for k, v in sorted(steps.items(), key=lambda kv: -kv[1]):
        print(f"| {k} | {v / n:.3f} | {100 * v / router_total:.1f}% |")
    print(f"| **router OCR path, in-process** | **{router_total / n:.3f}** | 100% |")
    if bare is not None:
        print(f"| bare RapidOCR whole page (same render) | {bare_total / n:.3f} | "
              f"{100 * bare_total / router_total:.1f}% |")
    mb = sum(r["task_bytes"] for r in rows) / n / 1e6
    print(f"| served graph: OcrTask pickle copies ({mb:.1f} MB/task, 3-4 crossings) | {copy_total / n:.3f} | "
          f"(+{100 * copy_total / router_total:.1f}%) |")
    if bare is not None:
        print(f"\nrouter / bare RapidOCR: {router_total / max(bare_total, 1e-9):.2f}x wall (render included); "
              f"CPU s/page (no render; steady on a shared machine): router {router_cpu / n:.3f}, "
              f"bare {bare_cpu / n:.3f}, {router_cpu / max(bare_cpu, 1e-9):.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"pages": rows, "steps_s_per_page": {k: v / n for k, v in steps.items()},
                                         "router_s_per_page": router_total / n, "router_cpu_s_per_page": router_cpu / n,
                                         "bare_cpu_s_per_page": bare_cpu / n if bare else None,
                                         "bare_s_per_page": bare_total / n if bare else None}, indent=1))


if __name__ == "__main__":
    main()
