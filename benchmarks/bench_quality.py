"""Born-digital reading quality, olmOCR-bench style, on generated pages with known truth.

    python benchmarks/bench_quality.py [--kinds order,furniture,table,rotated,spacing,marks]
        [--variants 12] [--seed 7] [--out DIR] [--json results.json] [--verbose]

Generates seeded, varied pages per failure kind (`quality_cases*.py`),
converts each with every system side by side and runs the page's checks (`quality_checks.py`:
present / absent / order / table / separate / together / near / sup / sub / heading) on the
system's Markdown. Prints the pass rate per kind (share of checks passed) and overall (mean of
the kinds, as olmOCR-bench averages its categories), plus pages/s per system.

Systems: pagerouter (in-process Converter + to_markdown, from this checkout), bare
`page.get_text()` (pages joined), pymupdf4llm (if importable) and, on the table kind only, a
reference row: `get_text()` plus PyMuPDF `find_tables()` cells (strategy "lines", else "text")
as Markdown tables. The reference is never on pagerouter's path.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

import pymupdf  # noqa: E402

from quality_cases import Case, furniture_case, marks_case, order_case, rotated_case, spacing_case  # noqa: E402
from quality_cases_scans import scan_columns_case, scan_marks_case, scan_table_case  # noqa: E402
from quality_checks import run_check  # noqa: E402
from quality_cases_headings import headings_case  # noqa: E402
from quality_cases_furniture import furniture1_case  # noqa: E402
from quality_cases_tables import table_case, tablestruct_case  # noqa: E402
from quality_cases_forms import forms_case  # noqa: E402

BUILDERS = {"order": order_case, "furniture": furniture_case, "furniture1": furniture1_case, "table": table_case,
            "rotated": rotated_case, "spacing": spacing_case, "marks": marks_case,
            "scan_columns": scan_columns_case, "scan_table": scan_table_case, "scan_marks": scan_marks_case,
            "tablestruct": tablestruct_case, "headings": headings_case,
            "forms": forms_case}


def generate(kinds: list[str], variants: int, seed: int) -> list[Case]:
    cases = []
    for kind in kinds:
        for v in range(variants):
            # One RNG per (seed, kind, variant): a case does not change when other kinds or
            # variant counts are asked for.
            rng = random.Random(zlib.crc32(f"{seed}:{kind}:{v}".encode()))
            cases.append(BUILDERS[kind](rng, v))
    return cases


# ---------------------------------------------------------------------- systems
def sys_pagerouter():
    from pagerouter.config import PagerouterConfig
    from pagerouter.convert.converter import Converter
    from pagerouter.render.output import to_markdown

    conv = Converter(PagerouterConfig())

    def run(path):
        doc = conv.convert(path)
        for p in doc.pages:
            ROUTES[p.route] = ROUTES.get(p.route, 0) + 1
        return to_markdown(doc)
    return run


ROUTES: dict[str, int] = {}  # pagerouter's route per page: an OCR-routed page costs seconds


def sys_get_text():
    def run(path):
        with pymupdf.open(path) as doc:
            return "\n\n".join(p.get_text() for p in doc)
    return run


def sys_pymupdf4llm():
    from pagerouter.common.pymupdf_setup import import_pymupdf4llm  # its layout mode, as a user gets it

    try:
        pymupdf4llm = import_pymupdf4llm()
    except ImportError:
        return None
    return lambda path: pymupdf4llm.to_markdown(str(path), show_progress=False)


def sys_find_tables():
    from pagerouter.render.table_markdown import cells_to_markdown

    def run(path):
        parts = []
        with pymupdf.open(path) as doc:
            for page in doc:
                parts.append(page.get_text())
                tabs = page.find_tables(strategy="lines").tables or page.find_tables(strategy="text").tables
                parts += [cells_to_markdown(t.extract()) for t in tabs]
        return "\n\n".join(parts)
    return run


SYSTEMS = {"pagerouter": sys_pagerouter, "get_text": sys_get_text, "pymupdf4llm": sys_pymupdf4llm}


def run_system(name: str, fn, cases: list[Case], paths: dict[str, Path], keep: Path | None = None) -> dict:
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    fails: list[str] = []
    records = []
    pages, t_total = 0, 0.0
    secs: dict[str, float] = {}
    for case in cases:
        sink = io.StringIO()
        t = time.perf_counter()
        try:
            # pymupdf4llm and MuPDF warnings print to stdout/stderr: keep the table readable.
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                md = fn(paths[case.name])
        except Exception as exc:  # noqa: BLE001 - a crash fails the page's checks, the run goes on
            md = ""
            fails.append(f"{case.name}: crashed: {exc!r}")
        dt = time.perf_counter() - t
        t_total += dt
        secs[case.name] = dt
        if keep:
            (keep / f"{case.name}.{name.split()[0]}.md").write_text(md)
        with pymupdf.open(paths[case.name]) as d:
            pages += d.page_count
        for chk in case.checks:
            ok, why = run_check(chk, md)
            per_kind[case.kind][0] += ok
            per_kind[case.kind][1] += 1
            records.append({"system": name, "case": case.name, "kind": case.kind, "check": chk.to_dict(), "passed": ok, "why": why})
            if not ok:
                fails.append(f"{case.name} [{chk.type}{' ' + chk.note if chk.note else ''}]: {why}")
    return {"per_kind": dict(per_kind), "pages_per_s": pages / t_total if t_total else 0.0, "fails": fails, "records": records, "secs": secs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", default=",".join(BUILDERS), help="comma-separated: " + ",".join(BUILDERS))
    ap.add_argument("--variants", type=int, default=12, help="pages (documents) per kind")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--systems", default="pagerouter,get_text,pymupdf4llm")
    ap.add_argument("--out", type=Path, help="keep the generated PDFs (and each system's Markdown) here")
    ap.add_argument("--json", type=Path, help="write every check's result here")
    ap.add_argument("--verbose", "-v", action="store_true", help="list pagerouter's failed checks")
    args = ap.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in BUILDERS:
            ap.error(f"unknown kind {k!r}")
    t = time.perf_counter()
    cases = generate(kinds, args.variants, args.seed)
    print(f"generated {len(cases)} cases, {sum(len(c.checks) for c in cases)} checks in {time.perf_counter() - t:.1f} s")
    tmp = None
    out = args.out
    if out is None:
        tmp = tempfile.TemporaryDirectory()
        out = Path(tmp.name)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for c in cases:
        paths[c.name] = out / f"{c.name}.pdf"
        paths[c.name].write_bytes(c.pdf)
    results = {}
    for name in [s for s in args.systems.split(",") if s]:
        fn = SYSTEMS[name]()
        if fn is None:
            print(f"{name}: not importable, skipped")
            continue
        results[name] = run_system(name, fn, cases, paths, args.out)
    if {"table", "tablestruct"} & set(kinds):
        results["find_tables (ref)"] = run_system("find_tables (ref)", sys_find_tables(),
                                                  [c for c in cases if c.kind in ("table", "tablestruct")], paths, args.out)
    print_table(results, kinds)
    if ROUTES:
        print(f"pagerouter routes: {ROUTES}")
    if args.verbose and "pagerouter" in results:
        print("\npagerouter failed checks:")
        print("\n".join("  " + f for f in results["pagerouter"]["fails"]))
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "variants": args.variants, "kinds": kinds,
                                         "summary": {n: {"per_kind": r["per_kind"], "pages_per_s": r["pages_per_s"]} for n, r in results.items()},
                                         "checks": [x for r in results.values() for x in r["records"]]}, indent=1))
    if tmp:
        tmp.cleanup()


def print_table(results: dict, kinds: list[str]) -> None:
    w = max(len(n) for n in results) + 2
    print(f"\n{'system':<{w}}" + "".join(f"{k:>{max(11, len(k) + 2)}}" for k in kinds) + f"{'overall':>10}{'pages/s':>10}")
    for name, r in results.items():
        row, rates = f"{name:<{w}}", []
        for k in kinds:
            if k in r["per_kind"]:
                ok, n = r["per_kind"][k]
                rates.append(ok / n)
                row += f"{ok / n:>{max(10, len(k) + 1)}.0%} "
            else:
                row += f"{'-':>{max(10, len(k) + 1)}} "
        row += f"{sum(rates) / len(rates):>9.0%}" if rates else f"{'-':>9}"
        print(row + f"{r['pages_per_s']:>10.1f}")
    n = {k: v[1] for k, v in next(iter(results.values()))["per_kind"].items()}
    print("checks per kind: " + ", ".join(f"{k} {n.get(k, 0)}" for k in kinds))


if __name__ == "__main__":
    main()
