"""Run the systems over the corpora and reduce what they read to the report's numbers.

Systems run one after another (never two at once: each gets the whole machine, and process CPU
time is then theirs alone). Each is warmed up on a throwaway page first, so model loading and
worker start-up are not billed to the corpus; its wall time and CPU time (this process, its
children and its live descendants: the isolation workers, Tesseract) are measured per corpus.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable

import pymupdf

from . import synth
from ..config import PagerouterConfig
from .corpus import Corpus
from .metrics import cer_counts, cost_per_million, percentile, process_tree_cpu
from .systems import PageResult, make_system

OCR_ROUTES = ("ocr", "mixed")


def warm_pdf() -> bytes:
    """A two-page document (born-digital + scan) every system reads once before it is timed: small
    pages, since only loading models and starting workers matters here."""
    doc = pymupdf.open()
    synth.add_text_page(doc, ["Warm up the readers before the clock starts."], title="Warm up", size=(298, 210))
    synth.add_scanned_page(doc, ["Warm up line one.", "Warm up line two."], dpi=150, size=(298, 210))
    return doc.tobytes()


def run_bench(corpora: list[Corpus], names: list[str], cfg: PagerouterConfig,
              log: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> dict:
    """{"corpora": [...], "systems": {name: {"skipped": reason} | {corpus: stats}}}."""
    out: dict = {"corpora": [_corpus_info(c) for c in corpora], "systems": {}}
    warm = warm_pdf()
    for name in names:
        system = make_system(name, cfg)
        reason = system.unavailable()
        if reason:
            log(f"pagerouter bench: {name}: skipped: {reason}")
            out["systems"][name] = {"skipped": reason}
            continue
        entry: dict = {}
        out["systems"][name] = entry
        try:
            t0 = time.perf_counter()
            system.warm(warm)
            log(f"pagerouter bench: {name}: warmed up in {time.perf_counter() - t0:.1f} s")
            for corpus in corpora:
                cpu0, gpu0, t0 = process_tree_cpu(), system.gpu_seconds, time.perf_counter()
                pages: list[PageResult] = []
                for f in corpus.files:
                    pages += system.run(f)
                wall = time.perf_counter() - t0
                for p in pages:
                    if p.error:
                        log(f"pagerouter bench: {name}: {p.error}")
                if corpus is corpora[-1]:
                    system.close()  # before the last CPU reading: stopped workers are reaped and counted
                cpu = process_tree_cpu() - cpu0
                stats = summarise(corpus, pages, wall, cpu, system.gpu_seconds - gpu0, cfg)
                entry[corpus.name] = stats
                cer = "" if stats["cer"] is None else f", CER {stats['cer']:.2%}"
                log(f"pagerouter bench: {name} on {corpus.name}: {stats['pages']} pages in {wall:.1f} s "
                    f"({stats['pages_per_s']:.2f} pages/s, {cpu:.1f} CPU s){cer}")
        except Exception as exc:  # noqa: BLE001 - one broken system must not lose the others' results
            log(f"pagerouter bench: {name}: failed: {type(exc).__name__}: {exc}")
            out["systems"][name] = {"skipped": f"failed while running: {type(exc).__name__}: {exc}"}
        finally:
            system.close()
    return out


def _corpus_info(c: Corpus) -> dict:
    info = {"name": c.name, "files": len(c.files), "pages": c.page_count, "has_truth": c.has_truth}
    if c.has_truth:
        info["kinds"] = dict(Counter(t.kind for f in c.files for t in f.truth or []))
    return info


def summarise(corpus: Corpus, pages: list[PageResult], wall: float, cpu: float, gpu: float,
              cfg: PagerouterConfig) -> dict:
    n = len(pages)
    truth = {(f.path.name, num): t for f in corpus.files if f.truth for num, t in zip(f.pages, f.truth)}
    seconds = [p.seconds for p in pages]
    routes = Counter(p.route for p in pages)
    by_route: dict[str, list[float]] = defaultdict(list)
    for p in pages:
        by_route[p.route].append(p.seconds)
    records, edits, ref_len = [], 0, 0
    kind_counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    agree = 0
    for p in pages:
        rec = {"file": p.file, "page": p.number, "route": p.route, "status": p.status,
               "seconds": round(p.seconds, 4), "stages": {k: round(v, 4) for k, v in p.stages.items()}}
        if p.error:
            rec["error"] = p.error
        t = truth.get((p.file, p.number))
        if t is not None:
            e, r = cer_counts(t.text, p.text)
            edits, ref_len = edits + e, ref_len + r
            kind_counts[t.kind][0] += e
            kind_counts[t.kind][1] += r
            agree += p.route == t.expected_route
            rec.update(kind=t.kind, expected_route=t.expected_route, edits=e, ref_chars=r,
                       cer=round(e / r, 4) if r else None)
        records.append(rec)
    stats = {
        "pages": n,
        "wall_s": round(wall, 3),
        "pages_per_s": n / wall if wall > 0 else math.nan,
        "cpu_s": cpu,
        "cpu_s_per_page": cpu / n if n else math.nan,
        "gpu_s": gpu,
        "cost_per_million_usd": cost_per_million(cpu, gpu, n, cfg.bench),
        "latency_s": {"mean": sum(seconds) / n if n else math.nan,
                      **{f"p{q}": percentile(seconds, q) for q in (50, 90, 99)}},
        "route_share": {r: c / n for r, c in sorted(routes.items())},
        "seconds_per_page_by_route": {r: sum(v) / len(v) for r, v in sorted(by_route.items())},
        "failed": sum(p.status == "failed" for p in pages),
        "flagged": sum(p.status == "flagged" for p in pages),
        "cer": edits / ref_len if ref_len else None,
        "cer_by_kind": {k: e / r if r else None for k, (e, r) in sorted(kind_counts.items())},
        "route_agreement": agree / len(truth) if truth else None,
        "stage_means_s": _stage_means(pages),
        "pages_detail": records,
    }
    return stats


def _stage_means(pages: list[PageResult]) -> dict:
    """Mean seconds per stage over the pages that took the OCR path (all pages for OCR-only
    systems): the profile of where an OCR page's time goes."""
    ocr = [p for p in pages if p.route in OCR_ROUTES] or [p for p in pages if p.stages]
    if not ocr:
        return {}
    keys = sorted({k for p in ocr for k in p.stages})
    return {"pages": len(ocr), "mean_s": {k: sum(p.stages.get(k, 0.0) for p in ocr) / len(ocr) for k in keys},
            "mean_total_s": sum(p.seconds for p in ocr) / len(ocr)}


def headline(result: dict, corpus: str, baseline: str = "rapidocr") -> dict | None:
    """The router against OCR-every-page on one corpus: speedups (wall and CPU) and both CERs."""
    r = result["systems"].get("router", {}).get(corpus)
    b = result["systems"].get(baseline, {}).get(corpus)
    if not r or not b:
        return None
    h = {"corpus": corpus, "baseline": baseline,
         "speedup_pages_per_s": r["pages_per_s"] / b["pages_per_s"],
         "speedup_cpu": b["cpu_s"] / r["cpu_s"] if r["cpu_s"] > 0 else math.inf,
         "router_cer": r["cer"], "baseline_cer": b["cer"]}
    h["met"] = bool(h["speedup_pages_per_s"] >= 5 and (r["cer"] is None or b["cer"] is None or r["cer"] <= b["cer"]))
    h["ocr_route"] = ocr_route_versus(r, b)
    return h


def ocr_route_versus(r: dict, b: dict) -> dict | None:
    """The router's seconds per page on the pages it OCR'd against the baseline's on the same
    pages (the same renders: both read the file's page), with both CERs on those pages."""
    base = {(p["file"], p["page"]): p for p in b.get("pages_detail", [])}
    pairs = [(p, base[(p["file"], p["page"])]) for p in r.get("pages_detail", [])
             if p["route"] in OCR_ROUTES and (p["file"], p["page"]) in base]
    if not pairs:
        return None
    n = len(pairs)
    out = {"pages": n, "router_s": sum(p["seconds"] for p, _ in pairs) / n,
           "baseline_s": sum(q["seconds"] for _, q in pairs) / n, "router_cer": None, "baseline_cer": None}
    out["ratio"] = out["router_s"] / out["baseline_s"] if out["baseline_s"] > 0 else math.inf
    chars = sum(p.get("ref_chars") or 0 for p, _ in pairs)
    if chars and all(p.get("edits") is not None and q.get("edits") is not None for p, q in pairs):
        out["router_cer"] = sum(p["edits"] for p, _ in pairs) / chars
        out["baseline_cer"] = sum(q["edits"] for _, q in pairs) / chars
    out["met"] = bool(out["ratio"] <= 0.6 and (out["router_cer"] is None or out["router_cer"] <= out["baseline_cer"]))
    return out


def headline_line(h: dict) -> str:
    cer = ""
    if h["router_cer"] is not None and h["baseline_cer"] is not None:
        cer = f"; CER {h['router_cer']:.2%} vs {h['baseline_cer']:.2%}"
    verdict = "meets" if h["met"] else "misses"
    extra = "" if h["router_cer"] is not None else " (no known text: speed only)"
    line = (f"router vs OCR of every page ({h['baseline']}) on {h['corpus']}: {h['speedup_pages_per_s']:.1f}x pages/s, "
            f"{h['speedup_cpu']:.1f}x less CPU{cer}; {verdict} the target (>= 5x at equal or lower error){extra}")
    o = h.get("ocr_route")
    if o:
        ocer = (f", CER {o['router_cer']:.2%} vs {o['baseline_cer']:.2%}" if o["router_cer"] is not None else "")
        line += (f". OCR route: {o['router_s']:.3f} s/page vs {h['baseline']} {o['baseline_s']:.3f} s/page on the same "
                 f"{o['pages']} pages ({o['ratio']:.2f}x{ocer}); {'meets' if o['met'] else 'misses'} the target "
                 "(<= 0.6x, CER no worse)")
    return line
