"""Nothing silently lost: per failure class, does the router read what the page shows, and when
it cannot, does the page say so?

    python benchmarks/bench_lost.py [--classes hidden,digits,furniture,ink,script] [--variants 10]
        [--seed 21] [--json out.json] [--verbose] [--real DIR [--max-pages N]] [--cost REPEATS]

The classes `picture_text,scan_rows,layer_lie,few_words,clip_text` (lost_cases.NET_CLASSES) are
issue 34's fresh families: develop on one --seed, report another as the held-out figure.
`--cost N` prints what the safety net costs per page (born-digital with and without pictures, a
scan with a hidden layer proven line by line vs by sample vs OCR'd).

Generates the seeded cases of `lost_cases.py` (known truth per page; clean controls among
them), converts each with the in-process Converter and prints, per class: pages, routes,
statuses, mean CER vs truth, words lost and invented, pages whose content is wrong, and the
figure that matters: **wrong content with status `ok`** (must be 0), plus clean controls that
were flagged (false flags).

`--real DIR` instead prints the route and status mix of every PDF in DIR (no truth there): run
it before and after a change to see that clean real pages stay clean.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

from lost_cases import BUILDERS, generate  # noqa: E402
from lost_judge import judge  # noqa: E402


def convert_cases(cases, cfg=None):
    """(case, page, markdown, verdict) for every page of every case."""
    from pagerouter.config import PagerouterConfig
    from pagerouter.config.output import OutputConfig
    from pagerouter.convert.converter import Converter
    from pagerouter.render.output import page_markdown

    out = []
    with Converter(cfg or PagerouterConfig()) as conv:
        for case in cases:
            t = time.perf_counter()
            doc = conv.convert(case.pdf, name=f"{case.name}.pdf")
            dt = (time.perf_counter() - t) / max(1, len(doc.pages))
            for page, truth in zip(doc.pages, case.pages):
                md = page_markdown(page, OutputConfig(page_markers=False))
                out.append((case, page, md, judge(truth, md), dt))
    return out


def summarise(rows) -> dict:
    per: dict[str, dict] = defaultdict(lambda: {
        "pages": 0, "routes": Counter(), "status": Counter(), "cer": 0.0, "lost": 0, "invented": 0,
        "wrong": 0, "wrong_ok": 0, "clean": 0, "false_flags": 0, "said": 0, "seconds": 0.0,
    })
    for case, page, _md, v, dt in rows:
        r = per[case.cls]
        r["pages"] += 1
        r["routes"][page.route or "-"] += 1
        r["status"][page.status] += 1
        r["cer"] += v.cer
        r["lost"] += len(v.lost)
        r["invented"] += len(v.invented) + len(v.forbidden_out)
        r["seconds"] += dt
        if v.wrong:
            r["wrong"] += 1
            r["said"] += page.status != "ok"
            r["wrong_ok"] += page.status == "ok"
        if case.clean:
            r["clean"] += 1
            r["false_flags"] += page.status != "ok"
    return per


def print_table(per: dict) -> None:
    print("| class | pages | routes | status | mean CER | words lost | words invented | wrong | wrong and said so | "
          "**wrong and ok** | clean controls flagged | s/page |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = Counter()
    for cls, r in per.items():
        routes = ", ".join(f"{k} {v}" for k, v in r["routes"].most_common())
        status = ", ".join(f"{k} {v}" for k, v in r["status"].most_common())
        print(f"| {cls} | {r['pages']} | {routes} | {status} | {r['cer'] / max(1, r['pages']):.1%} | {r['lost']} | "
              f"{r['invented']} | {r['wrong']} | {r['said']} | **{r['wrong_ok']}** | {r['false_flags']} of {r['clean']} | "
              f"{r['seconds'] / max(1, r['pages']):.2f} |")
        for k in ("pages", "wrong", "said", "wrong_ok", "false_flags", "clean"):
            tot[k] += r[k]
    print(f"| all | {tot['pages']} | | | | | | {tot['wrong']} | {tot['said']} | **{tot['wrong_ok']}** | "
          f"{tot['false_flags']} of {tot['clean']} | |")


def real_mix(folder: Path, max_pages: int) -> None:
    """Route and status mix over a folder of real PDFs (no truth): the before/after of a change."""
    from pagerouter.convert.converter import Converter

    mix, flags = Counter(), Counter()
    pages = 0
    t = time.perf_counter()
    with Converter() as conv:
        for pdf in sorted(folder.glob("*.pdf")):
            try:
                doc = conv.convert(pdf, pages=f"1-{max_pages}")
            except Exception as exc:  # noqa: BLE001 - a bad file is a line, not the end of the run
                print(f"{pdf.name}: {exc}")
                continue
            for p in doc.pages:
                pages += 1
                mix[(p.route, p.status)] += 1
                flags.update(p.flags)
                print(f"{pdf.name} p{p.number}: {p.route} {p.status} {','.join(p.flags)}")
    print(f"\n{pages} pages in {time.perf_counter() - t:.0f} s")
    print("| route | status | pages |\n|---|---|---:|")
    for (route, status), n in sorted(mix.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        print(f"| {route} | {status} | {n} |")
    print("flags: " + (", ".join(f"{k} {v}" for k, v in flags.most_common()) or "none"))


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm: models loaded, caches filled
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1000.0 * sorted(times)[len(times) // 2]


def cost(repeats: int) -> None:
    """What the net costs: ms per page converted in-process (triage, text layer, ink accounting,
    the detector, OCR where the route needs it) for a born-digital page without pictures, with a
    photo and with a text banner; and, for a scan with a true hidden layer, the proof of every
    line against the proof by sample and against OCR of the whole page; for a scan whose layer
    lies on one line, the proof with that line re-read against OCR of the whole page."""
    import random

    from lost_cases import BUILDERS as B

    from pagerouter.config import PagerouterConfig
    from pagerouter.convert.converter import Converter

    def page_of(cls: str, v: int) -> bytes:
        return B[cls](random.Random(f"21-{cls}-{v}"), v).pdf

    plain = B["clip_text"](random.Random("21-clip_text-0"), 0).pdf  # fill+clip headline, no picture
    cases = [("born-digital, no picture", plain), ("born-digital, photo", page_of("picture_text", 4)),
             ("born-digital, text banner", page_of("picture_text", 2))]
    print("| page | route | ms/page (median of %d) |\n|---|---|---:|" % repeats)
    with Converter(PagerouterConfig()) as conv:
        for name, pdf in cases:
            route = conv.convert(pdf, name="cost.pdf").pages[0].route
            print(f"| {name} | {route} | {_median_ms(lambda pdf=pdf: conv.convert(pdf, name='cost.pdf'), repeats):.1f} |")
    # a scan with a true hidden layer: triage with every line proven vs the spread sample alone vs
    # the small reader's detection and recognition of the page (what OCR would cost at least),
    # interleaved so that a busy machine slows each arm alike
    import statistics

    import pymupdf

    from pagerouter.common.pagetext import extract_textdict
    from pagerouter.ocr.raster import render_page
    from pagerouter.ocr.reader_rapidocr import RapidOcrReader
    from pagerouter.triage import triage_page

    cfg = PagerouterConfig()
    arms = {"every line proven (triage)": cfg.triage,
            "spread sample proven (triage)": cfg.triage.model_copy(update={"hidden_layer_every_line": False})}
    reader = RapidOcrReader(cfg.ocr)
    times: dict[str, list[float]] = {k: [] for k in [*arms, "OCR detect+recognise (small reader)"]}
    for v in (3, 7, 11, 15):  # layer_lie's true layers
        pdf = page_of("layer_lie", v)
        for _ in range(repeats):
            for arm, tcfg in arms.items():
                page = pymupdf.open("pdf", pdf)[0]
                td = extract_textdict(page)
                t = time.perf_counter()
                triage_page(page, td, tcfg, cfg.ocr)
                times[arm].append(time.perf_counter() - t)
            page = pymupdf.open("pdf", pdf)[0]
            img, _ = render_page(page, cfg.ocr.render_target(cfg.ocr.small_reader.render_engine))
            t = time.perf_counter()
            reader.read_image_lines(img)
            times["OCR detect+recognise (small reader)"].append(time.perf_counter() - t)
    print("\n| scan with a true hidden layer (4 pages, 14-20 lines) | median ms/page |\n|---|---:|")
    for arm, ts in times.items():
        print(f"| {arm} | {1000 * statistics.median(ts):.0f} |")
    # a scan whose hidden layer lies on one line: every line proven and the disagreeing line read
    # from the picture (the route stays text_layer) vs OCR of the whole page, which is what the
    # page cost before a line could be replaced (the lie sent it to OCR after its proof)
    lies: dict[str, list[float]] = {"every line proven, the lying line re-read (triage)": [],
                                    "OCR detect+recognise (small reader)": []}
    routes: set[str] = set()
    for v in (0, 1, 2, 4):  # layer_lie's lying layers
        pdf = page_of("layer_lie", v)
        for _ in range(repeats):
            page = pymupdf.open("pdf", pdf)[0]
            td = extract_textdict(page)
            t = time.perf_counter()
            decision = triage_page(page, td, cfg.triage, cfg.ocr)
            lies["every line proven, the lying line re-read (triage)"].append(time.perf_counter() - t)
            routes.add(decision.route)
            page = pymupdf.open("pdf", pdf)[0]
            img, _ = render_page(page, cfg.ocr.render_target(cfg.ocr.small_reader.render_engine))
            t = time.perf_counter()
            reader.read_image_lines(img)
            lies["OCR detect+recognise (small reader)"].append(time.perf_counter() - t)
    print(f"\n| scan whose hidden layer lies on one line (4 pages; triage routes: {', '.join(sorted(routes))}) "
          "| median ms/page |\n|---|---:|")
    for arm, ts in lies.items():
        print(f"| {arm} | {1000 * statistics.median(ts):.0f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--classes", default=",".join(BUILDERS))
    ap.add_argument("--variants", type=int, default=10)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--verbose", action="store_true", help="one line per page: route, status, flags, what was wrong")
    ap.add_argument("--real", type=Path, help="print the route/status mix of the PDFs in this folder instead")
    ap.add_argument("--max-pages", type=int, default=3, help="with --real: pages per file")
    ap.add_argument("--cost", type=int, metavar="REPEATS", help="print what the net costs per page instead")
    a = ap.parse_args(argv)
    if a.cost:
        cost(a.cost)
        return 0
    if a.real:
        real_mix(a.real, a.max_pages)
        return 0
    cases = generate(a.classes.split(","), a.variants, a.seed)
    rows = convert_cases(cases)
    if a.verbose:
        for case, page, _md, v, _dt in rows:
            mark = "WRONG+OK" if v.wrong and page.status == "ok" else ("wrong" if v.wrong else "")
            print(f"{case.name} p{page.number}: {page.route} {page.status} [{','.join(page.flags)}] CER {v.cer:.1%} "
                  f"lost {v.lost[:6]} invented {v.invented[:6]} hidden-out {v.forbidden_out[:2]} {mark}")
    per = summarise(rows)
    print_table(per)
    if a.json:
        a.json.write_text(json.dumps({k: {**v, "routes": dict(v["routes"]), "status": dict(v["status"])}
                                      for k, v in per.items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
