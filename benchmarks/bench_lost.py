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


def calibrate(repeats: int) -> dict[str, float]:
    """Measure `triage/proof_cost.py`'s constants on this machine and print them: the
    recogniser on calls of 1-24 crops of 320-1600 px (least squares over call, run and input
    pixels), `_crop` per layer line, the page render per megapixel and the line detector per
    megapixel of its input window, each the least over `repeats` interleaved rounds (on a shared
    machine the least is the closest to the work itself; a crop, a few ms, by median)."""
    import random
    import statistics

    import numpy as np
    import pymupdf

    from lost_cases import BUILDERS as B

    from pagerouter.common.pagetext import extract_textdict
    from pagerouter.config import PagerouterConfig
    from pagerouter.ocr.raster import render_page
    from pagerouter.ocr.reader_rapidocr import RapidOcrReader
    from pagerouter.triage import layer_proof as lp
    from pagerouter.triage import proof_cost as pc

    cfg = PagerouterConfig()
    rec = lp.recogniser(cfg.ocr)
    reader = RapidOcrReader(cfg.ocr)
    pdfs = [B["layer_lie"](random.Random(f"21-layer_lie-{v}"), v).pdf for v in (3, 7)]
    pdfs += [B["layer_cost"](random.Random(f"21-layer_cost-{v}"), v).pdf for v in (0, 1)]
    pages = [pymupdf.open("pdf", pdf)[0] for pdf in pdfs]
    lines = [(pg, ln) for pg in pages for ln in lp.hidden_lines(extract_textdict(pg))]
    crops = [c for c in (lp._crop(pg, ln, rec.height) for pg, ln in lines[:40]) if c is not None]

    def widen(c: np.ndarray, w: int) -> np.ndarray:  # a real line's crop, tiled to `w` px wide
        reps = -(-w // c.shape[1])
        return np.ascontiguousarray(np.tile(c, (1, reps, 1))[:, :w])

    designs = [(n, w) for n in (1, 6, 12, 24) for w in (320, 640, 960, 1600)]
    t_rec: dict[tuple[int, int], list[float]] = {d: [] for d in designs}
    t_crop: list[float] = []
    t_render: list[tuple[float, float]] = []
    t_det: list[tuple[float, float]] = []
    rec.read(crops[:6], ())  # warm
    for _ in range(repeats):
        for n, w in designs:
            batch = [widen(crops[i % len(crops)], w) for i in range(n)]
            t = time.perf_counter()
            rec.read(batch, ())
            t_rec[(n, w)].append(1000 * (time.perf_counter() - t))
        for pg, ln in lines[::3]:
            t = time.perf_counter()
            lp._crop(pg, ln, rec.height)
            t_crop.append(1000 * (time.perf_counter() - t))
        for pg in pages:
            target = cfg.ocr.render_target(cfg.ocr.small_reader.render_engine)
            t = time.perf_counter()
            img, _ = render_page(pg, target)
            t_render.append((1000 * (time.perf_counter() - t), img.shape[0] * img.shape[1] / 1e6))
            sr = cfg.ocr.small_reader
            mpx = pc.det_mpx(pg.rect.width, pg.rect.height, [ln.bbox for q, ln in lines if q is pg],
                             target.zoom_for(pg.rect.width, pg.rect.height), sr.det_limit_side_len, sr.det_scale)
            t = time.perf_counter()
            reader._detect(img)
            t_det.append((1000 * (time.perf_counter() - t), mpx))
    # least squares: ms = call + runs x run + kpx x per_kpx (the model of proof_cost.rec_ms)
    rows, ys = [], []
    for (n, w), ts in t_rec.items():
        runs = -(-n // pc.REC_BATCH)
        kpx = n * pc.REC_HEIGHT * max(w, 320) / 1000.0
        rows.append([1.0, runs, kpx])
        ys.append(min(ts))
    coef, *_ = np.linalg.lstsq(np.array(rows), np.array(ys), rcond=None)
    got = {
        "REC_CALL_MS": float(max(0.0, coef[0])), "REC_RUN_MS": float(max(0.0, coef[1])),
        "REC_MS_PER_KPX": float(max(0.0, coef[2])), "CROP_MS": statistics.median(t_crop),
        "RENDER_MS_PER_MPX": min(ms / mpx for ms, mpx in t_render),
        "DET_MS_PER_MPX": min(ms / mpx for ms, mpx in t_det),
    }
    print("| constant (triage/proof_cost.py) | in the code | measured now |\n|---|---:|---:|")
    for k, v in got.items():
        print(f"| {k} | {getattr(pc, k):g} | {v:.3g} |")
    return got


def estimate_vs_actual(repeats: int) -> None:
    """Per page, the cost rule's estimates (proof line by line, OCR) against the measured:
    the proof timed with the rule off (every line proven, `hidden_layer_cheaper_route: false`),
    OCR as the page render plus the small reader's detection and recognition."""
    import random
    import statistics

    import pymupdf

    from lost_cases import BUILDERS as B

    from pagerouter.common.pagetext import extract_textdict
    from pagerouter.config import PagerouterConfig
    from pagerouter.ocr.raster import render_page
    from pagerouter.ocr.reader_rapidocr import RapidOcrReader
    from pagerouter.triage import layer_proof as lp

    cfg = PagerouterConfig()
    forced = cfg.triage.model_copy(update={"hidden_layer_cheaper_route": False})
    reader = RapidOcrReader(cfg.ocr)
    pages = [(f"layer_lie v{v}", B["layer_lie"](random.Random(f"21-layer_lie-{v}"), v).pdf) for v in (0, 1, 3, 7)]
    pages += [(f"layer_cost v{v} ({('short_lines', 'word_lines')[v % 2]})",
               B["layer_cost"](random.Random(f"21-layer_cost-{v}"), v).pdf) for v in (0, 1, 2, 3)]
    print(f"\n| page | hidden lines | route chosen | proof est / actual ms (+ OCR when the proof fails) | OCR est / actual ms | "
          f"cheaper by estimate / by measure (actual: least of {repeats}) |\n|---|---:|---|---:|---:|---|")
    for name, pdf in pages:
        page = pymupdf.open("pdf", pdf)[0]
        td = extract_textdict(page)
        est = lp.prove_hidden_layer(page, td, "Latin", cfg.triage, cfg.ocr)
        chosen = "proof" if est.attempted else "OCR"
        if est.abandoned_after:
            chosen = f"OCR after {est.abandoned_after} lines"
        tp, to = [], []
        for _ in range(repeats):
            page = pymupdf.open("pdf", pdf)[0]
            td = extract_textdict(page)
            t = time.perf_counter()
            proven = lp.prove_hidden_layer(page, td, "Latin", forced, cfg.ocr).agreed
            tp.append(1000 * (time.perf_counter() - t))
            t = time.perf_counter()
            img, _ = render_page(page, cfg.ocr.render_target(cfg.ocr.small_reader.render_engine))
            reader.read_image_lines(img)
            to.append(1000 * (time.perf_counter() - t))
            if not proven:  # a proof that fails is paid and then the page is OCR'd all the same
                tp[-1] += to[-1]
        c = est.cost
        p_ms, o_ms = min(tp), min(to)
        by_est = ("proof" if c.proof_cheaper else "OCR") if c else "-"
        print(f"| {name} | {len(lp.hidden_lines(td))} | {chosen} | {c.proof_ms if c else 0:.0f} / {p_ms:.0f} | "
              f"{c.ocr_ms if c else 0:.0f} / {o_ms:.0f} | {by_est} / {'proof' if p_ms < o_ms else 'OCR'} |")


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
    ap.add_argument("--calibrate", type=int, metavar="REPEATS",
                    help="only measure the hidden-layer cost rule's constants and its estimate against the actual per page")
    a = ap.parse_args(argv)
    if a.cost:
        cost(a.cost)
        print("\nThe cost rule (triage/proof_cost.py), measured again:\n")
        calibrate(a.cost)
        estimate_vs_actual(a.cost)
        return 0
    if a.calibrate:
        calibrate(a.calibrate)
        estimate_vs_actual(a.calibrate)
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
