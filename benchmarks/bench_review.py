"""How long a 1,000-page review takes to open in the browser (not a test: it prints numbers).

Builds a run of 1,000 pages: a 50-page generated PDF (born-digital pages, every 20th a scan,
converted with OCR off so those come out flagged `needs_ocr`), written as 20 documents of a
batch-like output folder; then `pagerouter review` renders the page images and writes the
HTML. Debian's headless Chromium (through Playwright) opens it from a file:// URL; the time is
from navigation start to the page's `pagerouter-review-ready` mark (summary, filters and the
first list page of cards in the DOM), the median of --runs cold opens, each in a new context.

    python benchmarks/bench_review.py [--pages 1000] [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

import pymupdf  # noqa: E402

from pagerouter.bench.synth import add_scanned_page, add_text_page  # noqa: E402
from pagerouter.cli.main import main as cli  # noqa: E402
from pagerouter.config import load_config  # noqa: E402
from pagerouter.convert.converter import Converter  # noqa: E402
from pagerouter.render.output import to_json  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGES_PER_DOC = 50


def build_run(folder: Path, pages: int) -> Path:
    """`pages` pages in documents of PAGES_PER_DOC (one conversion, copied: the review reads
    JSON, and every copy is a document of its own there), their sources beside them."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = pymupdf.open()
    for i in range(PAGES_PER_DOC):
        if i % 20 == 7:
            add_scanned_page(doc, [f"Scanned page {i + 1}", "a picture of text"])
        else:
            add_text_page(doc, [f"Page {i + 1} of the benchmark run. " * 10, "A second paragraph, shorter."],
                          title=f"Section {i + 1}", header="benchmark run", footer=str(i + 1))
    pdf = folder / "source.pdf"
    doc.save(pdf)
    conv = Converter(load_config(overrides={"ocr": {"enabled": False}, "isolation": {"enabled": False}}))
    try:
        converted = conv.convert(pdf)
    finally:
        conv.close()
    for k in range(max(pages // PAGES_PER_DOC, 1)):
        name = f"doc-{k + 1:03d}"
        shutil.copy(pdf, folder / f"{name}.pdf")
        converted.source = f"{name}.pdf"
        (folder / f"{name}.json").write_text(to_json(converted), encoding="utf-8")
    pdf.unlink()
    return folder


def open_times(html: Path, runs: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for _ in range(runs):
            context = browser.new_context(viewport={"width": 1300, "height": 1000})
            page = context.new_page()
            page.goto(html.as_uri())
            page.wait_for_selector("body[data-ready='1']", timeout=60_000)
            times.append(page.evaluate(
                "() => performance.getEntriesByName('pagerouter-review-ready')[0].startTime") / 1000)
            cards = page.locator("article.card").count()
            context.close()
        browser.close()
    print(f"cards in the DOM after opening: {cards}")
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="build the run here and keep it (default: a temp folder)")
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="pagerouter-review-bench-"))
    t0 = time.perf_counter()
    build_run(folder, args.pages)
    t1 = time.perf_counter()
    assert cli(["review", str(folder), "-q"]) == 0
    t2 = time.perf_counter()
    html = folder / "review.html"
    images = list((folder / "review-images").rglob("*.jpg"))
    print(f"run: {args.pages} pages in {args.pages // PAGES_PER_DOC} documents, built in {t1 - t0:.1f} s")
    print(f"pagerouter review: {t2 - t1:.1f} s (page images rendered: {len(images)}, "
          f"{sum(p.stat().st_size for p in images) / 1e6:.1f} MB); review.html {html.stat().st_size / 1e6:.2f} MB")
    # the sync Playwright API keeps an asyncio loop on its thread: keep it off the converter's
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        times = pool.submit(open_times, html, args.runs).result()
    print("open (navigation start -> first cards rendered), s: " + ", ".join(f"{t:.3f}" for t in times))
    print(f"median {statistics.median(times):.3f} s over {len(times)} cold opens in Chromium")
    if args.keep is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
