"""`pagerouter bench`'s outputs: OUTDIR/report.json, OUTDIR/report.md and PNG charts in
OUTDIR/charts/ (matplotlib, the `bench` extra; without it the report says the charts are missing)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from .metrics import __doc__ as METRICS_DOC
from .runner import OCR_ROUTES, headline, headline_line

CHARTS = ("throughput_vs_error.png", "latency.png", "route_mix.png")


def _ran(result: dict, corpus: str) -> list[tuple[str, dict]]:
    return [(n, s[corpus]) for n, s in result["systems"].items() if corpus in s]


def _f(v, fmt: str = ".2f", none: str = "n/a") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return none
    return format(v, fmt)


def _pct(v) -> str:
    return "n/a" if v is None else f"{v * 100:.2f}%"


def write_json(result: dict, path: Path) -> None:
    def clean(v):  # JSON has no NaN: say null
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    path.write_text(json.dumps(clean(result), indent=1), encoding="utf-8")


def write_charts(result: dict, outdir: Path) -> list[str]:
    """The three charts; returns the problems (an empty list when all were written)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        return [f"charts not drawn: matplotlib is not installed ({exc}); pip install 'pagerouter[bench]'"]
    outdir.mkdir(parents=True, exist_ok=True)
    corpora = [c["name"] for c in result["corpora"]]
    truth = [c["name"] for c in result["corpora"] if c["has_truth"]]

    # throughput vs error (corpora with known text; else throughput vs CPU cost)
    fig, ax = plt.subplots(figsize=(7, 5))
    for corpus in (truth or corpora):
        for name, s in _ran(result, corpus):
            y = s["cer"] * 100 if truth and s["cer"] is not None else s["cost_per_million_usd"]
            ax.scatter(s["pages_per_s"], y, s=60)
            ax.annotate(f"{name} ({corpus})", (s["pages_per_s"], y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("pages per second (log)")
    ax.set_ylabel("character error rate, %" if truth else "USD per million pages")
    ax.set_title("Throughput vs error" if truth else "Throughput vs cost (no corpus with known text)")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(outdir / CHARTS[0], dpi=110)
    plt.close(fig)

    # latency percentiles per system (and corpus)
    rows = [(f"{n}\n{c}" if len(corpora) > 1 else n, s) for c in corpora for n, s in _ran(result, c)]
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(rows)), 4.5))
    width = 0.27
    for i, q in enumerate(("p50", "p90", "p99")):
        vals = [max(s["latency_s"][q], 1e-5) for _, s in rows]
        ax.bar([j + (i - 1) * width for j in range(len(rows))], vals, width, label=q)
    ax.set_xticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("seconds per page (log)")
    ax.set_title("Latency percentiles per page")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(outdir / CHARTS[1], dpi=110)
    plt.close(fig)

    # route mix
    routes = sorted({r for _, s in rows for r in s["route_share"]})
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(rows)), 4.5))
    bottom = [0.0] * len(rows)
    for r in routes:
        vals = [s["route_share"].get(r, 0.0) * 100 for _, s in rows]
        ax.bar(range(len(rows)), vals, 0.6, bottom=bottom, label=r)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.set_ylabel("% of pages")
    ax.set_title("Route mix")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(outdir / CHARTS[2], dpi=110)
    plt.close(fig)
    return []


def markdown(result: dict, chart_problems: list[str]) -> str:
    run = result["run"]
    md = ["# pagerouter bench", ""]
    md += [f"Command: `{run['command']}`  ", f"Machine: {run['machine']}  ", f"Date: {run['date']}  ",
           f"Prices: ${run['prices']['cpu_core_hour_usd']} per CPU core hour, ${run['prices']['gpu_hour_usd']} "
           "per GPU hour (config section `bench`)", ""]
    heads = [h for c in result["corpora"] if (h := headline(result, c["name"]))]
    if heads:
        md += ["## Headline", ""] + [f"- {headline_line(h)}" for h in heads] + [""]
    skipped = {n: s["skipped"] for n, s in result["systems"].items() if "skipped" in s}
    if skipped:
        md += ["Skipped systems:", ""] + [f"- {n}: {why}" for n, why in skipped.items()] + [""]
    for c in result["corpora"]:
        md += _corpus_section(result, c)
    md += _profile_section(result)
    md += ["## Charts", ""]
    md += [f"- {p}" for p in chart_problems] or [f"![{name}](charts/{name})" for name in CHARTS]
    md += ["", "## Method", "", (METRICS_DOC or "").strip(), "",
           "Pages/s = pages / wall seconds of the system's run over the corpus, after a warm-up page (model "
           "loading and worker start-up are not counted). CPU seconds = user + system time of this process, its "
           "reaped children and its live descendants (the router's MuPDF isolation workers, Tesseract), read "
           "before and after the run; GPU seconds = seconds of VLM tier attempts (0 when no tier ran on a GPU). "
           "Cost per million pages = (CPU s x core-hour price + GPU s x GPU-hour price) / 3600 / pages x 1e6. "
           "Per-page seconds: the router's are the sum of its pipeline stages for the page (triage, text layer, "
           "render, layout, read, escalate; pages overlap, `ocr.pages_in_flight`), the others' are wall "
           "time per page (one page at a time). Systems run one after another, never together.", ""]
    return "\n".join(md)


def _corpus_section(result: dict, c: dict) -> list[str]:
    name = c["name"]
    kinds = ", ".join(f"{k} {v}" for k, v in (c.get("kinds") or {}).items())
    md = [f"## Corpus `{name}`: {c['pages']} pages in {c['files']} files" + (f" ({kinds})" if kinds else ""), ""]
    ran = _ran(result, name)
    if not ran:
        return md + ["No system ran.", ""]
    md += ["| system | pages/s | CPU s/page | CER | p50 s | p90 s | p99 s | $/M pages | failed | routes |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for n, s in ran:
        routes = ", ".join(f"{r} {v:.0%}" for r, v in s["route_share"].items())
        lat = s["latency_s"]
        md.append(f"| {n} | {_f(s['pages_per_s'])} | {_f(s['cpu_s_per_page'], '.3f')} | "
                  f"{_pct(s['cer'])} | "
                  f"{_f(lat['p50'], '.3f')} | {_f(lat['p90'], '.3f')} | {_f(lat['p99'], '.3f')} | "
                  f"{_f(s['cost_per_million_usd'], '.2f')} | {s['failed']} | {routes} |")
    md.append("")
    if c["has_truth"]:
        kinds = sorted({k for _, s in ran for k in s["cer_by_kind"]})
        md += ["CER by page kind:", "", "| system | " + " | ".join(kinds) + " |", "|---|" + "---:|" * len(kinds)]
        for n, s in ran:
            md.append(f"| {n} | " + " | ".join(_pct(s["cer_by_kind"].get(k)) for k in kinds) + " |")
        md.append("")
    r = result["systems"].get("router", {}).get(name)
    if r:
        md += ["Router, seconds per page by route:", "", "| route | share | s/page |", "|---|---:|---:|"]
        for route, sec in r["seconds_per_page_by_route"].items():
            md.append(f"| {route} | {r['route_share'][route]:.0%} | {sec:.3f} |")
        md.append("")
        if r["route_agreement"] is not None:
            md += [f"Router pages on the route their kind calls for: {r['route_agreement']:.0%} "
                   f"(born_digital -> text_layer, the others -> ocr); flagged {r['flagged']}, failed {r['failed']}.", ""]
    return md


def _profile_section(result: dict) -> list[str]:
    md = ["## Profile of the OCR path", ""]
    rows = []
    for c in result["corpora"]:
        for n in ("router", "rapidocr", "tesseract"):
            s = result["systems"].get(n, {}).get(c["name"])
            if s and s["stage_means_s"]:
                rows.append((n, c["name"], s["stage_means_s"]))
    if not rows:
        return md + ["No OCR page was read.", ""]
    md += ["Mean seconds per OCR page and stage (router: pages routed " + "/".join(OCR_ROUTES) +
           "; bare engines: every page).", "", "| system | corpus | pages | stage seconds | total s |", "|---|---|---:|---|---:|"]
    for n, corpus, st in rows:
        stages = ", ".join(f"{k} {v:.3f}" for k, v in st["mean_s"].items())
        md.append(f"| {n} | {corpus} | {st['pages']} | {stages} | {st['mean_total_s']:.3f} |")
    md += ["", "Router stages come from each page's `timings` in the Document JSON: `triage` and `render` run in "
           "the MuPDF isolation worker; `read` is the small reader's whole call (line detection, direction and "
           "recognition together: the pipeline does not split it; bare RapidOCR's own split is in its row); the "
           "reading checks run between `read` and `escalate` and are not timed on their own; `escalate` is the "
           "wait for the escalation tier, its witnesses included (one key per stage, so a page's stages add up to at "
           "most its time). The copies of the "
           "page image between processes are not timed.", ""]
    return md
