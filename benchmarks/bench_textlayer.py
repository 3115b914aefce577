"""Born-digital throughput, peak memory and real-corpus routes.

    python benchmarks/bench_textlayer.py [--pages 200] [--mem-pages 100,500] [--corpus ../shared/corpus/real]
        [--checks-only] [--stages] [--differenced]

Prints:
1. pages/s of `page.get_text()` alone (the floor) vs. the in-process convert (triage +
   text-layer reading with layout + Markdown/JSON rendering) on the same born-digital pages,
   pinned to one core, with MuPDF's work in isolation workers (the default) and without;
   then what the nothing-lost checks cost per page: the visibility check of every span
   (`triage.check_visibility`) and the ink accounting after reading (`ocr.checks.unread_ink`),
   each turned off in turn, on the synthetic pages and on the real corpus's born-digital pages;
2. peak RSS converting N-page born-digital PDFs in a fresh process (flat in N = streaming);
3. how many pages of the real corpus each triage route took (OCR not run: routing only).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

import pymupdf  # noqa: E402

from pagerouter.config import PagerouterConfig  # noqa: E402
from pagerouter.bench.synth import LOREM, add_text_page  # noqa: E402


def make_born_digital(path: Path, pages: int) -> None:
    """A varied born-digital document: titles, 1-3 columns, running header/footer."""
    doc = pymupdf.open()
    for i in range(pages):
        cols = 1 + i % 3
        paras = [LOREM, LOREM[: 120 + 7 * (i % 20)], LOREM] * (2 if cols > 1 else 1)
        add_text_page(doc, paras, title=f"Section {i + 1}", header="Annual report 2026", footer=str(i + 1), columns=cols)
    doc.save(path, garbage=3, deflate=True)


def pin_one_core() -> None:
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    except (AttributeError, OSError):
        pass


def bench_throughput(path: Path) -> None:
    from pagerouter.convert.converter import Converter
    from pagerouter.render.output import to_json, to_markdown

    doc = pymupdf.open(path)
    n = doc.page_count
    t = time.perf_counter()
    for page in doc:
        page.get_text()
    floor = n / (time.perf_counter() - t)
    doc.close()

    converter = Converter(PagerouterConfig())
    t = time.perf_counter()
    result = converter.convert(path)
    to_markdown(result)
    to_json(result)
    cold = n / (time.perf_counter() - t)
    routes = Counter(p.route for p in result.pages)
    # The same again in this process: modules imported, MuPDF's caches warm (what the "graph,
    # local" row measured before the Converter replaced Serve's local testing mode).
    t = time.perf_counter()
    again = converter.convert(path)
    to_markdown(again)
    to_json(again)
    warm = n / (time.perf_counter() - t)
    # The same with MuPDF in this process (isolation.enabled: false): the isolation workers' cost.
    inproc = Converter(PagerouterConfig.model_validate({"isolation": {"enabled": False}}))
    inproc.convert(path)
    t = time.perf_counter()
    again = inproc.convert(path)
    to_markdown(again)
    to_json(again)
    unisolated = n / (time.perf_counter() - t)

    # The CLI as a user runs it: a fresh process, start to exit (imports included), one core.
    cmd = [sys.executable, "-c", "import os, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
           "from pagerouter.cli.main import main; sys.exit(main())", "convert", str(path), "-q"]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    cli = n / (time.perf_counter() - t)
    print(f"born-digital throughput on one core, {n} synthetic pages ({dict(routes)}):")
    print(f"  page.get_text() alone              : {floor:8.1f} pages/s")
    print(f"  Converter in-process, first run    : {cold:8.1f} pages/s  ({cold / floor:.0%} of the floor; target >= 50%)")
    print(f"  Converter in-process, second run   : {warm:8.1f} pages/s  ({warm / floor:.0%} of the floor)")
    print(f"  the same, isolation off            : {unisolated:8.1f} pages/s  (MuPDF in this process; "
          f"isolation on is {warm / unisolated:.0%} of it, target > 200 pages/s on)")
    print(f"  pagerouter convert, whole process  : {cli:8.1f} pages/s  ({cli / floor:.0%} of the floor, start to exit)")


_CHECK_VARIANTS = {
    "all checks on (default)": {},
    "visibility off": {"triage": {"check_visibility": False}},
    "ink accounting off": {"ocr": {"checks": {"unread_ink": False}}},
    "both off": {"triage": {"check_visibility": False}, "ocr": {"checks": {"unread_ink": False}}},
}


def bench_check_costs(path: Path, corpus: Path) -> None:
    """ms/page of the born-digital path with the visibility and ink-accounting checks on and off,
    isolation off (MuPDF in this process, so the difference is the checks' own work)."""
    from pagerouter.convert.converter import Converter
    from pagerouter.intake.inputs import open_source
    from pagerouter.flow.pipeline import DocumentTriage

    born: dict[str, list[int]] = {}
    for f in sorted(corpus.glob("*.pdf")) if corpus.is_dir() else []:
        src = open_source(f)
        outs = DocumentTriage(PagerouterConfig()).iter_pages(src, list(range(1, src.page_count + 1)))
        born[str(f)] = [o.page.number for o in outs if o.task is None and o.page.route == "text_layer"]
        src.close()
    print("what the nothing-lost checks cost on born-digital pages (isolation off, warm):")
    base = None
    for name, over in _CHECK_VARIANTS.items():
        cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False}, **over})
        conv = Converter(cfg)
        conv.convert(path)
        t = time.perf_counter()
        n = len(conv.convert(path).pages)
        synth_ms = 1000 * (time.perf_counter() - t) / n
        real_n, t = 0, time.perf_counter()
        for f, pages in born.items():
            if pages:
                src = open_source(Path(f))
                real_n += len(list(DocumentTriage(cfg).iter_pages(src, pages)))
                src.close()
        real_ms = 1000 * (time.perf_counter() - t) / max(1, real_n)
        base = base or (synth_ms, real_ms)
        print(f"  {name:26s}: synthetic {synth_ms:6.2f} ms/page ({synth_ms - base[0]:+.2f}), real corpus "
              f"born-digital ({real_n} pages) {real_ms:6.2f} ms/page ({real_ms - base[1]:+.2f})")


def peak_rss_child(path: str) -> None:
    """Run in a fresh process: convert, then print peak RSS in MB."""
    from pagerouter.convert.converter import Converter
    from pagerouter.render.output import to_markdown

    doc = Converter().convert(path)
    to_markdown(doc)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{peak_kb / 1024:.0f}")


def bench_memory(sizes: list[int], tmp: Path) -> None:
    print("peak RSS converting born-digital PDFs (fresh process each):")
    for n in sizes:
        p = tmp / f"bd-{n}.pdf"
        make_born_digital(p, n)
        out = subprocess.run(
            [sys.executable, __file__, "--child-rss", str(p)], capture_output=True, text=True, check=True
        ).stdout.strip().splitlines()[-1]
        print(f"  {n:5d} pages: {out:>6} MB  (target < 500 MB, flat in page count)")


def bench_corpus_born_digital(corpus: Path) -> None:
    """Throughput on the real corpus's born-digital pages (those triage routes to text_layer)."""
    from pagerouter.intake.inputs import open_source
    from pagerouter.flow.pipeline import DocumentTriage

    cfg = PagerouterConfig()
    t_floor = t_ours = 0.0
    n = 0
    for f in sorted(corpus.glob("*.pdf")):
        src = open_source(f)
        outcomes = list(DocumentTriage(cfg).iter_pages(src, list(range(1, src.page_count + 1))))
        born = [o.page.number for o in outcomes if o.page.route == "text_layer"]
        if born:
            t = time.perf_counter()
            for k in born:
                src.doc.load_page(k - 1).get_text()
            t_floor += time.perf_counter() - t
            src.close()
            src = open_source(f)  # fresh document: no cached pages or fonts
            t = time.perf_counter()
            list(DocumentTriage(cfg).iter_pages(src, born))
            t_ours += time.perf_counter() - t
            n += len(born)
        src.close()
    print(f"real corpus born-digital pages ({n}): get_text {n / t_floor:.1f} pages/s, "
          f"triage + text layer {n / t_ours:.1f} pages/s ({t_floor / t_ours:.0%} of the floor)")


def bench_corpus(corpus: Path) -> None:
    from pagerouter.intake.inputs import InputError, open_source
    from pagerouter.common.pagetext import extract_textdict
    from pagerouter.triage import triage_page

    cfg = PagerouterConfig()
    routes: Counter[str] = Counter()
    per_file: list[str] = []
    t = time.perf_counter()
    pages = 0
    for f in sorted(corpus.glob("*.pdf")):
        try:
            src = open_source(f)
        except InputError as exc:
            routes["unopenable file"] += 1
            per_file.append(f"  {f.name}: {exc.message}")
            continue
        file_routes = Counter()
        for page in src.doc:
            pages += 1
            try:
                d = triage_page(page, extract_textdict(page), cfg.triage)
                file_routes[d.route] += 1
            except Exception as exc:  # noqa: BLE001
                file_routes["failed"] += 1
                per_file.append(f"  {f.name} p{page.number + 1}: {exc}")
        routes.update(file_routes)
        per_file.append(f"  {f.name}: {dict(file_routes)}")
    dt = time.perf_counter() - t
    print(f"real corpus {corpus}: {pages} pages triaged in {dt:.1f} s ({pages / dt:.1f} pages/s)")
    print(f"  routes: {dict(routes)}")
    print("\n".join(per_file))


def _process_seconds(args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def bench_differenced(tmp: Path, small: int = 40, large: int = 240, repeats: int = 7) -> None:
    """Issue 23's bar: `pagerouter convert` on a `small`- and a `large`-page born-digital PDF,
    each a whole process as a user runs it; the difference of the two times is what the extra
    pages cost, start-up, imports and worker spawn cancelled out. The floor is bare
    `get_text()` on the same two files, differenced the same way. Best of `repeats` each (a
    loaded machine only ever slows a run down); not pinned: convert uses what the CLI uses."""
    paths = {}
    for n in (small, large):
        paths[n] = tmp / f"diff{n}.pdf"
        make_born_digital(paths[n], n)
    floor_code = "import sys, pymupdf\nfor p in pymupdf.open(sys.argv[1]): p.get_text()"
    best: dict[tuple[str, int], float] = {}
    for _ in range(repeats):
        for n in (small, large):
            for name, cmd in (("get_text", [sys.executable, "-c", floor_code, str(paths[n])]),
                              ("convert", [sys.executable, "-m", "pagerouter.cli.main", "convert", str(paths[n]), "-q"])):
                dt = _process_seconds(cmd)
                best[name, n] = min(best.get((name, n), dt), dt)
    extra = large - small
    floor = extra / (best["get_text", large] - best["get_text", small])
    conv = extra / (best["convert", large] - best["convert", small])
    print(f"differenced {small} vs {large} pages (whole processes, best of {repeats}):")
    print(f"  page.get_text()     : {floor:8.1f} pages/s")
    print(f"  pagerouter convert  : {conv:8.1f} pages/s  = {conv / floor:.2f}x get_text (issue 23: >= 0.30x)")
    print(f"  process times (s)   : " + ", ".join(f"{k[0]} {k[1]}p {v:.2f}" for k, v in sorted(best.items())))


# Where a born-digital page's CPU goes: (module, attribute, label). Each is wrapped where it is
# called from (the name the caller looks up), so nested steps are booked to the innermost one.
_STAGES = [
    ("pagerouter.flow.pipeline", "extract_textdict", "text dict (MuPDF)"),
    ("pagerouter.flow.pipeline", "unreadable_before_text", "limits before reading"),
    ("pagerouter.flow.pipeline", "content_size_problem", "limits before reading"),
    ("pagerouter.flow.pipeline", "page_text_problem", "limits before reading"),
    ("pagerouter.flow.pipeline", "damage_found", "damage check"),
    ("pagerouter.flow.pipeline", "clean_model", "clean model"),
    ("pagerouter.triage.decide", "measure", "triage: text measures"),
    ("pagerouter.triage.decide", "hidden_text", "triage: visibility"),
    ("pagerouter.triage.decide", "triage_page", "triage: other"),
    ("pagerouter.triage", "triage_page", "triage: other"),
    ("pagerouter.textlayer.furniture.FurnitureModel", "from_document", "furniture pre-scan"),
    ("pagerouter.textlayer", "reading_frame", "text: frame"),
    ("pagerouter.textlayer", "extract_lines", "text: lines"),
    ("pagerouter.textlayer", "merge_fragments", "text: lines"),
    ("pagerouter.textlayer", "page_glyphs", "text: lines"),
    ("pagerouter.textlayer", "read_graphics", "text: graphics"),
    ("pagerouter.textlayer", "rule_candidates", "text: tables"),
    ("pagerouter.textlayer", "column_candidates", "text: tables"),
    ("pagerouter.textlayer", "side_by_side_candidates", "text: tables"),
    ("pagerouter.textlayer", "text_candidates", "text: tables"),
    ("pagerouter.textlayer", "build_table", "text: tables"),
    ("pagerouter.textlayer.furniture.FurnitureModel", "classify", "text: furniture"),
    ("pagerouter.textlayer", "order_with_keys", "text: reading order"),
    ("pagerouter.textlayer", "group_paragraphs", "text: paragraphs and roles"),
    ("pagerouter.textlayer", "assign_roles", "text: paragraphs and roles"),
    ("pagerouter.textlayer", "page_vocabulary", "text: paragraphs and roles"),
    ("pagerouter.textlayer", "read_text_layer", "text: other"),
    ("pagerouter.flow.pipeline.DocumentTriage", "_account_for_ink", "ink accounting"),
    ("pagerouter.flow.pipeline.DocumentTriage", "_triage_one", "page other"),
]


def bench_stages(path: Path, corpus: Path) -> None:
    """Exclusive CPU ms per born-digital page of each step (thread CPU time, so a loaded
    machine disturbs it less than wall time), isolation off, one thread: the synthetic pages,
    then the real corpus's text-layer pages. Steps missing from the code are skipped, so the
    same script profiles an older checkout (`PYTHONPATH=old python this --stages`)."""
    import importlib

    from pagerouter.intake.inputs import open_source
    from pagerouter.flow.pipeline import DocumentTriage

    totals: Counter[str] = Counter()
    stack: list[list] = []

    def wrap(fn, label):
        def timed(*a, **kw):
            frame = [time.thread_time(), 0.0]
            stack.append(frame)
            try:
                return fn(*a, **kw)
            finally:
                stack.pop()
                spent = time.thread_time() - frame[0]
                totals[label] += spent - frame[1]
                if stack:
                    stack[-1][1] += spent
        return timed

    for where, attr, label in _STAGES:
        mod_name, _, cls = where.partition(".FurnitureModel") if ".FurnitureModel" in where else (where, "", "")
        if where.endswith(".DocumentTriage"):
            owner = DocumentTriage
        elif ".FurnitureModel" in where:
            owner = importlib.import_module(mod_name).FurnitureModel
        else:
            owner = importlib.import_module(where)
        fn = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr, None)
        if fn is None:
            continue
        if isinstance(fn, classmethod):
            setattr(owner, attr, classmethod(wrap(fn.__func__, label)))
        else:
            setattr(owner, attr, wrap(fn, label))

    cfg = PagerouterConfig.model_validate({"isolation": {"enabled": False}})
    sets = [("synthetic", [(path, None)])]
    real = []
    for f in sorted(corpus.glob("*.pdf")) if corpus.is_dir() else []:
        src = open_source(f)
        outs = DocumentTriage(cfg).iter_pages(src, list(range(1, src.page_count + 1)))
        pages = [o.page.number for o in outs if o.task is None and o.page.route == "text_layer"]
        src.close()
        if pages:
            real.append((f, pages))
    if real:
        sets.append(("real corpus text-layer", real))
    for name, files in sets:
        for rep in range(2):  # the first pass warms caches and lazy imports
            totals.clear()
            n = 0
            t0 = time.thread_time()
            for f, pages in files:
                src = open_source(f)
                for _ in DocumentTriage(cfg).iter_pages(src, pages or list(range(1, src.page_count + 1))):
                    n += 1
                src.close()
            whole = time.thread_time() - t0
        booked = sum(totals.values())
        print(f"CPU ms per page by step, {name} ({n} pages; {1000 * whole / n:.2f} ms/page in all):")
        for label, sec in totals.most_common():
            print(f"  {label:28s} {1000 * sec / n:6.3f}  ({sec / whole:4.0%})")
        print(f"  {'not in a step (the walk)':28s} {1000 * (whole - booked) / n:6.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--mem-pages", default="100,500")
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus" / "real")
    ap.add_argument("--child-rss")
    ap.add_argument("--checks-only", action="store_true", help="only the floor, the throughput and the checks' cost")
    ap.add_argument("--repeats", type=int, default=7,
                    help="--differenced: best of this many runs of each process (the get_text floor differs by a "
                    "tenth of a second between its two files: with 3, single runs gave 0.22-0.48x on one quiet machine)")
    ap.add_argument("--stages", action="store_true", help="only the CPU ms per page of each step (profile)")
    ap.add_argument("--differenced", action="store_true",
                    help="only issue 23's bar: whole `pagerouter convert` processes on 40 and 240 pages, differenced")
    args = ap.parse_args()
    if args.stages:
        with tempfile.TemporaryDirectory() as d:
            make_born_digital(Path(d) / "bd.pdf", args.pages)
            bench_stages(Path(d) / "bd.pdf", args.corpus)
        return
    if args.differenced:
        with tempfile.TemporaryDirectory() as d:
            bench_differenced(Path(d), repeats=args.repeats)
        return
    if args.child_rss:
        pin_one_core()
        peak_rss_child(args.child_rss)
        return
    pin_one_core()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        p = tmp / "bd.pdf"
        make_born_digital(p, args.pages)
        bench_throughput(p)
        bench_check_costs(p, args.corpus)
        if args.checks_only:
            return
        bench_memory([int(x) for x in args.mem_pages.split(",")], tmp)
    if args.corpus.exists():
        bench_corpus_born_digital(args.corpus)
        bench_corpus(args.corpus)


if __name__ == "__main__":
    main()
