"""OCR path benchmark: seconds/page and CER of our CPU OCR path vs bare RapidOCR on the whole
page vs Tesseract at 300 DPI, on synthetic scans with known text; then peak memory over a
50-page scanned PDF (must stay flat in page count).

    python benchmarks/bench_ocr.py                 # all figures
    python benchmarks/bench_ocr.py --skip-memory   # speed/CER only
    python benchmarks/bench_ocr.py --memory-only --pages 50

Methods are interleaved page by page (the machine is shared: interleaving keeps load swings
from favouring one method). CER = Levenshtein / expected length, whitespace collapsed,
order-sensitive (so reading order counts).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

import pymupdf  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from pagerouter.bench import synth  # noqa: E402
from pagerouter.config import PagerouterConfig  # noqa: E402
from pagerouter.config.ocr import OcrConfig  # noqa: E402
from pagerouter.convert.converter import Converter  # noqa: E402
from pagerouter.model import TriageDecision  # noqa: E402
from pagerouter.ocr.raster import render_page  # noqa: E402
from pagerouter.ocr.task import make_ocr_task  # noqa: E402
from pagerouter.ocr.text_stats import char_error_rate as cer  # noqa: E402

PARAS = [
    f"{w} paragraph explains how the archive routes each page to the cheapest reader that still reads it well."
    for w in ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet", "Kilo", "Lima")
]
LETTER = [
    "Scanned letter from the archive, received on 12 March 2024.",
    "Dear reader, this page is a picture of text and has no text layer,",
    "so it must be read by optical character recognition on the CPU.",
    "Invoice 2024-117: total due 1,250.00 EUR within 30 days.",
    "Please quote the reference AB-7731 in every payment you make.",
]
GERMAN = [
    "Sehr geehrte Damen und Herren,",
    "die Größe der Übersendung beträgt fünf Kilogramm und drei Gramm.",
    "Wir bitten um Prüfung und eine schnelle Rückmeldung bis Freitag.",
    "Mit freundlichen Grüßen aus München",
]


def scan_of(doc_src: pymupdf.Document, out: pymupdf.Document, dpi: int = 200) -> None:
    """Append a scan (full-page grey picture, no text layer) of every page of doc_src."""
    for page in doc_src:
        pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        p = out.new_page(width=page.rect.width, height=page.rect.height)
        p.insert_image(p.rect, stream=pix.tobytes("png"))


def fixtures() -> tuple[pymupdf.Document, list[tuple[str, str]]]:
    doc = pymupdf.open()
    cases: list[tuple[str, str]] = []
    cases.append(("letter noisy+blur+skew", synth.add_scanned_page(doc, LETTER, noise=0.06, blur=True, skew_deg=0.8)))
    cases.append(("german", synth.add_scanned_page(doc, GERMAN, noise=0.03)))
    cases.append(("letter rotated 90", synth.add_scanned_page(doc, LETTER, noise=0.03, rotate=90)))
    cases.append(("letter rotated 180", synth.add_scanned_page(doc, LETTER, noise=0.03, rotate=180)))
    src = pymupdf.open()
    two = synth.add_text_page(src, PARAS, title="Two column report", columns=2)
    one = synth.add_text_page(src, PARAS[:6], title="Single column report")
    scan_of(src, doc)
    cases.append(("two columns", two))
    cases.append(("one column", one))
    return doc, cases


def bench_speed_cer(repeats: int) -> dict:
    import pytesseract
    from PIL import Image
    from rapidocr import RapidOCR

    cfg = OcrConfig()
    cfg.escalation.enabled = False  # the small-reader path alone
    ours = Converter(PagerouterConfig(ocr=cfg))
    bare = RapidOCR(params={"Global.log_level": "warning"})
    doc, cases = fixtures()
    rows = []
    for i, (name, expected) in enumerate(cases):
        page = doc[i]
        row = {"page": name}
        for method in ("ours", "bare_rapidocr", "tesseract_300dpi"):
            times, cpus, text = [], [], ""
            for _ in range(repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                if method == "ours":
                    task = make_ocr_task(page, i + 1, "bench.pdf", TriageDecision(route="ocr"), [], cfg)
                    r = ours.read_task(task)
                    text = "\n".join(b.text for b in r.blocks if b.text)
                elif method == "bare_rapidocr":
                    img, _ = render_page(page, cfg.render_target("rapidocr"))
                    res = bare(img)
                    text = "\n".join(res.txts or [])
                else:
                    img, _ = render_page(page, cfg.render_target("tesseract"))
                    text = pytesseract.image_to_string(Image.fromarray(img), lang="eng+deu")
                times.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)  # tesseract runs in a child: its CPU is not counted
            row[method] = {"s": min(times), "cpu": min(cpus), "cer": cer(expected, text)}
        rows.append(row)
        print(f"{name:24s} " + "  ".join(f"{m}: {row[m]['s']:.2f}s (cpu {row[m]['cpu']:.2f}) CER {row[m]['cer']:.3f}"
                                          for m in ("ours", "bare_rapidocr", "tesseract_300dpi")), flush=True)
    summary = {}
    for m in ("ours", "bare_rapidocr", "tesseract_300dpi"):
        summary[m] = {
            "s_per_page": sum(r[m]["s"] for r in rows) / len(rows),
            "cpu_s_per_page": sum(r[m]["cpu"] for r in rows) / len(rows),
            "mean_cer": sum(r[m]["cer"] for r in rows) / len(rows),
        }
    print("\nmethod             wall s/page  cpu s/page  mean CER")
    for m, v in summary.items():
        cpu = f"{v['cpu_s_per_page']:10.2f}" if m != "tesseract_300dpi" else "       n/a"
        print(f"{m:18s} {v['s_per_page']:11.2f} {cpu}  {v['mean_cer']:8.3f}")
    return {"rows": rows, "summary": summary}


def _vm_hwm_mb() -> float:
    """Peak RSS of this process image (VmHWM resets at exec; ru_maxrss would carry over the
    parent's peak into a freshly spawned child)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _vm_rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def memory_child(pages: int, path: str) -> None:
    """Run in a fresh process: OCR every page, print peak RSS after selected pages."""
    cfg = OcrConfig()
    cfg.escalation.enabled = False
    ocr = Converter(PagerouterConfig(ocr=cfg))
    doc = pymupdf.open(path)
    marks, rss = {}, {}
    t0 = time.perf_counter()
    for i in range(min(pages, doc.page_count)):
        task = make_ocr_task(doc[i], i + 1, path, TriageDecision(route="ocr"), [], cfg)
        ocr.read_task(task)
        del task
        if i + 1 in (1, 5, 10, 20, 30, 40, 50, 75, 100) or i + 1 == pages:
            marks[i + 1] = _vm_hwm_mb()
            rss[i + 1] = _vm_rss_mb()
    print(json.dumps({"peak_rss_mb_after_pages": marks, "rss_mb_after_pages": rss, "seconds": time.perf_counter() - t0}))


def bench_memory(pages: int) -> dict:
    path = "/tmp/pagerouter_bench_scans.pdf"
    doc = pymupdf.open()
    for k in range(pages):
        synth.add_scanned_page(doc, [f"Page {k + 1} of the long scanned report."] + LETTER[1:3], noise=0.03, seed=k)
    doc.save(path, garbage=3, deflate=True)
    out = subprocess.run([sys.executable, __file__, "--memory-child", str(pages), path],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    marks = res["peak_rss_mb_after_pages"]
    print(f"\n{pages}-page scanned PDF ({os.path.getsize(path) / 1e6:.1f} MB): {res['seconds']:.0f} s, "
          f"{res['seconds'] / pages:.2f} s/page; peak RSS MB after pages: "
          + ", ".join(f"{k}: {v:.0f}" for k, v in marks.items())
          + "; current RSS MB: " + ", ".join(f"{k}: {v:.0f}" for k, v in res["rss_mb_after_pages"].items()))
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--pages", type=int, default=50)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--memory-only", action="store_true")
    ap.add_argument("--memory-child", nargs=2)
    a = ap.parse_args()
    if a.memory_child:
        memory_child(int(a.memory_child[0]), a.memory_child[1])
        return
    print(f"load average at start: {os.getloadavg()}")
    if not a.memory_only:
        bench_speed_cer(a.repeats)
    if not a.skip_memory:
        bench_memory(a.pages)


if __name__ == "__main__":
    main()
