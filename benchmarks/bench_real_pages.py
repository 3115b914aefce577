"""Real pages with hand-written truth: tables, running heads/feet and reading order, pagerouter
beside the extractors a user would otherwise pick, in the same run.

    python benchmarks/bench_real_pages.py [--systems pagerouter,pymupdf4llm,find_tables,pdfplumber,camelot]
        [--part dev|held|all] [--json out.json] [--verbose] [--as-scan DPI]

Truth: benchmarks/real_pages/truth/*.json, written by reading each page's render (see
real_pages/scoring.py for the format and the measures). A third of the pages is held out by a
fixed rule (crc32 of "<file stem>:p<page>" % 3 == 0): tune on dev, report held.

Printed per part (dev, held) and per document class: table cell-adjacency F1 (pooled pairs),
header/footer precision/recall/F1, lines to keep that a system dropped (titles, signatures),
reading order (share of block pairs in order), copy-text checks (quotes, markers).
`--as-scan DPI` renders each page at DPI into an image-only PDF first and scores that: the
OCR route against the same truth (systems without OCR have nothing to read there).
Systems that give no text (find_tables, camelot) are scored on tables only; pdfplumber's text is
`extract_text()` (it drops nothing: its furniture recall is the floor).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE / "real_pages"))

import pymupdf
from quality_checks import parse_html_tables, parse_markdown_tables
from scoring import Cell, Tally, cells_from_grid, load_truth, pdf_path, score_page

sys.path.insert(0, str(HERE))


def md_tables(md: str) -> list[list[Cell]]:
    out = []
    for t in [*parse_markdown_tables(md), *parse_html_tables(md)]:
        out.append(cells_from_grid(t.rows))
    return out


# ---------------------------------------------------------------- systems
def sys_pagerouter():
    from pagerouter.config import PagerouterConfig
    from pagerouter.convert.converter import Converter
    from pagerouter.render.output import to_markdown

    conv = Converter(PagerouterConfig())

    escalated = {"pages": 0, "timeouts": 0}

    def run(path: Path, page: int):
        doc = conv.convert(str(path), pages=str(page))
        tables = [cells_from_grid(b.cells, b.spans or ()) for p in doc.pages for b in p.blocks
                  if b.role == "table" and b.cells]
        # pages sent to escalation: the CPU vote's engines run under timeouts, so on a loaded
        # machine their reading (and what it keeps of a page's furniture) can differ run to run
        for p in doc.pages:
            esc = [c for c in p.checks if c.name == "escalation"]
            escalated["pages"] += bool(esc)
            escalated["timeouts"] += any("timeout" in (c.reason or "").lower() for c in esc)
        return to_markdown(doc), tables
    run.close = conv.close  # type: ignore[attr-defined]
    run.notes = lambda: (f"{escalated['pages']} page(s) escalated, {escalated['timeouts']} with an engine "  # type: ignore[attr-defined]
                         "timeout (their figures depend on machine load)") if escalated["pages"] else ""
    return run


def sys_pymupdf4llm():
    import pymupdf4llm

    def run(path: Path, page: int):
        with contextlib.redirect_stdout(io.StringIO()):
            md = pymupdf4llm.to_markdown(str(path), pages=[page - 1], show_progress=False)
        return md, md_tables(md)
    return run


def sys_find_tables():
    def run(path: Path, page: int):
        p = pymupdf.open(path)[page - 1]
        tabs = [cells_from_grid(t.extract()) for t in p.find_tables().tables]
        return None, tabs
    return run


def sys_pdfplumber():
    import pdfplumber

    def run(path: Path, page: int):
        with pdfplumber.open(path) as pdf:
            p = pdf.pages[page - 1]
            return p.extract_text() or "", [cells_from_grid(t) for t in p.extract_tables()]
    return run


def sys_camelot():
    import camelot

    def run(path: Path, page: int):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tabs = camelot.read_pdf(str(path), pages=str(page), flavor="lattice")
            if tabs.n == 0:
                tabs = camelot.read_pdf(str(path), pages=str(page), flavor="stream")
        return None, [cells_from_grid(t.df.values.tolist()) for t in tabs]
    return run


TABLES_ONLY = frozenset({"find_tables", "camelot"})
"""Systems that give tables and no text: a failure costs them table pairs only."""

SYSTEMS = {"pagerouter": sys_pagerouter, "pymupdf4llm": sys_pymupdf4llm, "find_tables": sys_find_tables,
           "pdfplumber": sys_pdfplumber, "camelot": sys_camelot}


def fmt(v: float | None) -> str:
    return "  -  " if v is None else f"{v:5.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--part", default="all", choices=["dev", "held", "all"])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--pages", help="only these pages, comma-separated truth names (e.g. edge_tol_p1)")
    ap.add_argument("--as-scan", type=int, metavar="DPI", help="read each page as a scan rendered at DPI")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    truths = [t for t in load_truth() if args.part == "all" or t["held"] == (args.part == "held")]
    if args.pages:
        truths = [t for t in truths if t["name"] in set(args.pages.split(","))]
    results: dict = {}
    per_page: dict = defaultdict(dict)
    notes: list[str] = []
    scans = Path(tempfile.mkdtemp(prefix="realscan")) if args.as_scan else None

    def source(tr: dict) -> tuple[Path, int]:
        """The page to read: the PDF's own, or (`--as-scan`) a one-page image-only copy."""
        if scans is None:
            return pdf_path(tr), tr["page"]
        out = scans / f"{tr['name']}.pdf"
        if not out.exists():
            page = pymupdf.open(pdf_path(tr))[tr["page"] - 1]
            img = pymupdf.open()
            img.new_page(width=page.rect.width, height=page.rect.height).insert_image(
                page.rect, pixmap=page.get_pixmap(dpi=args.as_scan))
            img.save(out)
        return out, 1

    for name in args.systems.split(","):
        try:
            run = SYSTEMS[name]()
        except Exception as e:  # a peer that does not install is named, not silently dropped
            print(f"{name}: not available ({type(e).__name__}: {e})")
            continue
        t0 = time.perf_counter()
        for tr in truths:
            try:
                md, tables = run(*source(tr))
            except Exception as e:
                print(f"{name} failed on {tr['name']}: {type(e).__name__}: {e}")
                md, tables = (None if name in TABLES_ONLY else ""), []
            tally = score_page(tr, md, tables)
            per_page[tr["name"]][name] = tally
            part = "held" if tr["held"] else "dev"
            for key in [(part, "all"), (part, tr["cls"])]:
                results.setdefault(key, {}).setdefault(name, Tally()).add(tally)
        results.setdefault(("time", name), time.perf_counter() - t0)
        note = getattr(run, "notes", lambda: "")()
        if note:
            notes.append(f"{name}: {note}")
        getattr(run, "close", lambda: None)()
    for part in ("dev", "held"):
        keys = sorted({k[1] for k in results if k[0] == part}, key=lambda c: (c != "all", c))
        if not keys:
            continue
        n = sum(1 for t in truths if t["held"] == (part == "held"))
        print(f"\n== {part} part ({n} pages)")
        print(f"{'class':<11} {'system':<12} {'tableF1':>7} {'furnP':>6} {'furnR':>6} {'furnF1':>6} {'kept-lost':>9} "
              f"{'order':>6} {'text':>5}")
        for cls in keys:
            for name, t in results[(part, cls)].items():
                text = f"{t.text_ok}/{t.text_n}" if t.text_n else "-"
                lost = str(t.k_out) if t.f_total or t.k_out or t.pairs else "-"
                print(f"{cls:<11} {name:<12} {fmt(t.table_f1):>7} {fmt(t.furn_p):>6} {fmt(t.furn_r):>6} "
                      f"{fmt(t.furn_f1):>6} {lost:>9} {fmt(t.order):>6} {text:>5}")
    for k, v in results.items():
        if k[0] == "time":
            print(f"time {k[1]}: {v:.1f} s")
    for note in notes:
        print(note)
    if args.verbose:
        for page, by in per_page.items():
            for name, t in by.items():
                print(f"{page:<40} {name:<12} tab {fmt(t.table_f1)} tp={t.tp} fp={t.fp} fn={t.fn} "
                      f"furn {t.f_out}/{t.f_total} keep-out {t.k_out} order {fmt(t.order)} miss {t.missing} "
                      f"text {t.text_ok}/{t.text_n} {t.lost}")
    if args.json:
        out = {f"{k[0]}/{k[1]}": {n: {"table_f1": t.table_f1, "furn_p": t.furn_p, "furn_r": t.furn_r,
                                      "order": t.order, "keep_lost": t.k_out} for n, t in v.items()}
               for k, v in results.items() if k[0] != "time"}
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
