"""Serving overhead figures (a benchmark script, not a timed test).

    python benchmarks/bench_serve.py [--requests 200] [--pages 100] [--json out.json]

Measures, on loopback:
  1. p50/p95 latency of POST /v1/pages and gRPC ConvertPage for one born-digital page, against
     the same call in-process (`pagerouter.Converter`, what the CLI runs).
     Target: under 30 ms p50 added by serving.
  2. pages/s for a born-digital PDF of --pages pages over HTTP vs. in-process.
  3. cold start of the LargeReader from zero replicas (replica start + engine load).
  4. a trivial Serve app on the same proxy (a FastAPI ingress that reads the upload and answers
     a small JSON, no handle call), the same page as its body: the floor serving itself costs here.
     Issue 23's target: served born-digital p50 <= 1.5x the trivial app's p50, same run.
     The served calls, the trivial app and the in-process conversion are timed interleaved;
     `served_vs_trivial_p50.floor` is (trivial + in-process conversion) / trivial: the ratio of
     a server whose only cost beyond the trivial app's is converting the page.
The in-process figures are taken before Ray starts, in the same process.
"""

# No `from __future__ import annotations`: FastAPI must see real annotations in trivial_app.

import argparse
import json
import os
import socket
import statistics
import sys
import time
from pathlib import Path

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

import pymupdf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pagerouter.bench import synth  # noqa: E402
from pagerouter.config import PagerouterConfig  # noqa: E402

PARA = ("Serving adds a proxy hop, a handle call to the ingress and a streamed handle call to triage. "
        "This paragraph is ordinary born-digital text of a typical report page. ") * 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def born_digital_pdf(pages: int) -> bytes:
    doc = pymupdf.open()
    for i in range(pages):
        synth.add_text_page(doc, [PARA, f"Page {i + 1} closing sentence."] * 3, title=f"Section {i + 1}")
    data = doc.tobytes()
    doc.close()
    return data


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def summary(ms: list[float]) -> dict:
    return {"p50_ms": round(pct(ms, 0.5), 2), "p95_ms": round(pct(ms, 0.95), 2), "mean_ms": round(statistics.mean(ms), 2)}


def bench_config() -> PagerouterConfig:
    return PagerouterConfig.model_validate({
        "serve": {
            "large_reader": {"min_replicas": 0, "initial_replicas": 0, "max_replicas": 1,
                             "downscale_delay_s": 2, "downscale_to_zero_delay_s": 2,
                             "look_back_period_s": 2, "metrics_interval_s": 0.5},
        }
    })


def trivial_app():
    """The floor: one FastAPI replica behind the same proxy that reads the body and answers."""
    from fastapi import FastAPI, Request
    from ray import serve

    api = FastAPI()

    @serve.deployment(num_replicas=1, ray_actor_options={"num_cpus": 0})
    @serve.ingress(api)
    class Trivial:
        @api.post("/echo")
        async def echo(self, request: Request) -> dict:
            body = await request.body()
            return {"bytes": len(body), "pages": [{"number": 1, "status": "ok"}]}

    return Trivial.bind()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=200, help="single-page requests per protocol")
    ap.add_argument("--pages", type=int, default=100, help="pages of the throughput PDF")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--ingress-triage-max-pages", type=int, default=None,
                    help="serve.ingress_triage_max_pages for this run (0: every request through the Triage "
                         "deployment, the path before issue 23; default: the config's)")
    a = ap.parse_args()
    cfg = bench_config()
    if a.ingress_triage_max_pages is not None:
        cfg.serve.ingress_triage_max_pages = a.ingress_triage_max_pages
    one_page, many_pages = born_digital_pdf(1), born_digital_pdf(a.pages)
    results: dict = {"requests": a.requests, "pages": a.pages,
                     "ingress_triage_max_pages": cfg.serve.ingress_triage_max_pages}

    # -- in-process (the Converter the CLI uses), before Ray exists in this process
    from pagerouter.convert.converter import Converter

    converter = Converter(cfg)
    converter.convert(one_page, name="page.pdf")  # warm
    results["in_process_page"] = summary(timed(lambda: converter.convert(one_page, name="page.pdf"), a.requests))
    t = time.perf_counter()
    doc = converter.convert(many_pages, name="many.pdf")
    results["in_process_pages_per_s"] = round(len(doc.pages) / (time.perf_counter() - t), 1)

    # -- served
    import httpx
    import ray
    from ray import serve

    from pagerouter.clients.grpc_client import PagerouterGrpcClient
    from pagerouter.clients.http_client import PagerouterHttpClient
    from pagerouter.graph.builder import build_app, serve_start_options

    cfg.serve.http_port, cfg.serve.grpc_port = _free_port(), _free_port()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    t = time.perf_counter()
    ray.init(num_cpus=2 * (os.cpu_count() or 1), include_dashboard=False, log_to_driver=False)
    try:
        serve.start(**serve_start_options(cfg.serve))
        serve.run(build_app(cfg), name=cfg.serve.app_name, route_prefix="/")
        results["startup_s"] = round(time.perf_counter() - t, 1)
        serve.run(trivial_app(), name="trivial", route_prefix="/trivial")
        url, target = f"http://127.0.0.1:{cfg.serve.http_port}", f"127.0.0.1:{cfg.serve.grpc_port}"
        with PagerouterHttpClient(url, timeout=120) as h, PagerouterGrpcClient(target, timeout=120) as g:
            with httpx.Client(base_url=url, timeout=120) as raw:
                def trivial() -> None:
                    raw.post("/trivial/echo", content=one_page, headers={"content-type": "application/pdf"}).raise_for_status()

                calls = {
                    "http_page": lambda: h.convert_page(one_page, 1, filename="page.pdf"),
                    "grpc_page": lambda: g.convert_page(one_page, 1, filename="page.pdf"),
                    # the same HTTP call with the answer left as bytes, as the trivial app's is: the
                    # client's parse of the Page (pydantic) is the caller's cost, not serving's
                    "http_page_unparsed": lambda: h._post("/v1/pages", one_page, "page.pdf", page=1),
                    "trivial_http_page": trivial,
                    # the same conversion in this process, timed among the served calls: any server
                    # that converts the page answers no sooner than the trivial app plus this
                    "in_process_page_in_run": lambda: converter.convert(one_page, name="page.pdf"),
                }
                for _ in range(10):  # warm every path
                    for fn in calls.values():
                        fn()
                # Interleaved, one call of each kind per round in a rotating order: the machine's
                # speed drifts over a run (other tenants, CPU boost), and timing all of one kind
                # first, then all of the next, put that drift into the ratios.
                ms: dict[str, list[float]] = {k: [] for k in calls}
                names = list(calls)
                for i in range(a.requests):
                    for k in names[i % len(names):] + names[:i % len(names)]:
                        ms[k] += timed(calls[k], 1)
                for k, v in ms.items():
                    results[k] = summary(v)
            results["served_vs_trivial_p50"] = {
                "http": round(results["http_page"]["p50_ms"] / results["trivial_http_page"]["p50_ms"], 2),
                "grpc": round(results["grpc_page"]["p50_ms"] / results["trivial_http_page"]["p50_ms"], 2),
                "http_unparsed": round(results["http_page_unparsed"]["p50_ms"]
                                       / results["trivial_http_page"]["p50_ms"], 2),
                # the floor of that ratio for a server with no cost of its own beyond the trivial
                # app's: (trivial + the page's conversion in-process) / trivial
                "floor": round((results["trivial_http_page"]["p50_ms"] + results["in_process_page_in_run"]["p50_ms"])
                               / results["trivial_http_page"]["p50_ms"], 2),
            }
            t = time.perf_counter()
            doc = h.convert(many_pages, filename="many.pdf")
            results["http_pages_per_s"] = round(len(doc.pages) / (time.perf_counter() - t), 1)
        ingress = serve.get_deployment_handle("Ingress", app_name=cfg.serve.app_name)
        results["ingress_triage_paths"] = ingress.stats.remote().result(timeout_s=30)["triage"]
        base = results["in_process_page"]["p50_ms"]
        results["added_p50_ms"] = {
            "http": round(results["http_page"]["p50_ms"] - base, 2),
            "grpc": round(results["grpc_page"]["p50_ms"] - base, 2),
        }
        # -- LargeReader cold start from zero
        large = serve.get_deployment_handle("LargeReader", app_name=cfg.serve.app_name)

        def running() -> int:
            st = serve.status().applications[cfg.serve.app_name].deployments["LargeReader"]
            return int(st.replica_states.get("RUNNING", 0))

        deadline = time.monotonic() + 120
        while running() and time.monotonic() < deadline:
            time.sleep(0.5)
        t = time.perf_counter()
        large.stats.remote().result(timeout_s=300)
        results["large_reader_cold_start_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        large.stats.remote().result(timeout_s=60)
        results["large_reader_warm_call_ms"] = round((time.perf_counter() - t) * 1000, 2)
        httpx.get(url + "/healthz", timeout=10)
    finally:
        serve.shutdown()
        ray.shutdown()

    print(json.dumps(results, indent=2))
    if a.json:
        a.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
