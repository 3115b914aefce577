"""Scanned pages (image-only PDFs) with known truth for `bench_quality.py`: the OCR route's structure.

Each page is drawn born-digital with the helpers of `quality_cases.py` (Words, Pen, flow), then
rendered to a grey full-page picture (150-200 dpi, light noise) that replaces the text layer, so
pagerouter reads it on the OCR route:

- `scan_columns`: two columns with a narrow gutter (10-18 pt) on aligned baselines, where the
  text detector likes to merge a left line with its right neighbour; checks: order per column,
  no line mixing words of both columns;
- `scan_table`: the `table` kind's tables (financial and simple borderless, plus ruled grids),
  as scans; checks: cell neighbours and headings;
- `scan_marks`: superscripts/subscripts after a word (as in the `marks` kind), as scans.

`python benchmarks/quality_cases_scans.py --tables N` compares the table cells of both routes on
the same pages (born-digital: text-layer route; rendered: OCR route) against the truth grid.
"""

from __future__ import annotations

import random

import numpy as np
import pymupdf

from quality_cases import _ADJ, _NOUN, PAGE_SIZES, Case, Words, bold, flow, mixing_checks, new_doc_page, order_checks
from quality_cases import _marked_paragraph
from quality_cases_tables import financial_table, simple_table
from quality_checks import Check

# Fonts a scan keeps legible at 150 dpi (Courier's thin strokes at 8 pt are another problem).
SCAN_FONTS = ["helv", "tiro", "dvsans", "dvserif"]


def as_scan(doc: pymupdf.Document, rng: random.Random, dpi: float | None = None) -> bytes:
    """Every page rendered to a grey picture (with a little noise) on an image-only page."""
    out = pymupdf.open()
    dpi = dpi or rng.choice([150, 170, 200])
    for page in doc:
        pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width).astype(np.float32)
        img += np.random.default_rng(rng.randrange(1 << 30)).normal(0, 255 * rng.uniform(0.0, 0.03), img.shape)
        pix2 = pymupdf.Pixmap(pymupdf.csGRAY, pix.width, pix.height, np.clip(img, 0, 255).astype(np.uint8).tobytes(), False)
        p = out.new_page(width=page.rect.width, height=page.rect.height)
        p.insert_image(p.rect, stream=pix2.tobytes("png"))
    data = out.tobytes(garbage=3, deflate=True)
    out.close()
    doc.close()
    return data


# ---------------------------------------------------------------------- columns
def draw_justified(pen, lines, cols: list[tuple[float, float]], font: str, size: float) -> None:
    """Draw `flow(..., draw=False)` lines justified to their column width (a paragraph's last
    line, the one followed by a bigger step down or a column change, stays ragged). Justified
    columns put ink right up to the gutter on every line: what makes a detector bridge it."""
    for ln, nxt in zip(lines, lines[1:] + [None]):
        words = ln.text.split()
        last = nxt is None or nxt.col != ln.col or nxt.y - ln.y > size * 1.5
        x, width = cols[ln.col]
        natural = sum(pen.width(w, font, size) for w in words)
        gap = (width - natural) / (len(words) - 1) if len(words) > 1 and not last else pen.width(" ", font, size)
        for w in words:
            pen.text(x, ln.y, w, font, size)
            x += pen.width(w, font, size) + gap


def scan_columns_case(rng: random.Random, v: int) -> Case:
    """Two columns, narrow gutter, aligned baselines, rendered as a scan."""
    W = Words(rng)
    font = rng.choice(SCAN_FONTS)
    size = rng.uniform(9, 11)
    lead = rng.uniform(1.2, 1.35)
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice(PAGE_SIZES))
    mx = rng.uniform(45, 70)
    gutter = rng.uniform(10, 18)
    y = rng.uniform(55, 80)
    title = W.title()
    pen.text(mx, y, title, bold(font), size * 1.7)
    y += size * 3
    body_w = pen.w - 2 * mx
    cw = (body_w - gutter) / 2
    cols = [(mx, cw), (mx + cw + gutter, cw)]
    bottom = pen.h - rng.uniform(60, 90)
    paras = [W.paragraph(rng.randint(2, 4)) for _ in range(30)]
    lines, st, _ = flow(pen, paras, cols, y, bottom, font, size, lead, size * lead - size, draw=False)
    draw_justified(pen, lines, cols, font, size)
    checks = [Check("order", before=title, after=paras[0][0], max_diffs=2)]
    for c in order_checks(paras, st, rng):
        c.max_diffs = 2  # OCR misreads a letter now and then: order, not spelling, is the point
        checks.append(c)
    checks += mixing_checks(lines, rng, n=4)
    return Case(f"scan_columns-{v:02d}", "scan_columns", as_scan(doc, rng), checks,
                note=f"{font} {size:.1f}pt gutter {gutter:.0f}pt")


# ---------------------------------------------------------------------- tables
def grid_table(pen, rng: random.Random, x0: float, y: float, width: float, font: str, size: float, ruled: bool
               ) -> tuple[list[list[str]], float]:
    """A grid table (header row bold), ruled or not: the truth grid and the y below it."""
    names = ["Station", "Site", "Elevation", "Rainfall", "Opened", "Keeper", "Soil", "Depth", "Owner", "Region"]
    n = rng.randint(3, 5)
    heads = rng.sample(names, n)
    cw = width / n
    row_h = size * 2.0
    rows = [heads]
    used: set[str] = set()
    for _ in range(rng.randint(3, 6)):
        row = []
        for _k in range(n):
            while True:
                val = rng.choice([f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN)}", str(rng.randint(10, 4000)),
                                  f"{rng.randint(1, 99)}.{rng.randint(0, 9)}"])
                if val not in used and pen.width(val, font, size) < cw - 10:
                    used.add(val)
                    break
            row.append(val)
        rows.append(row)
    top = y
    for i, row in enumerate(rows):
        for k, cell in enumerate(row):
            pen.text(x0 + k * cw + 5, y + row_h * 0.66, cell, bold(font) if i == 0 else font, size)
        y += row_h
    if ruled:
        for i in range(len(rows) + 1):
            pen.hline(x0, x0 + width, top + i * row_h, 0.7)
        for k in range(n + 1):
            pen.page.draw_line(pymupdf.Point(x0 + k * cw, top) * pen.m, pymupdf.Point(x0 + k * cw, y) * pen.m, width=0.7)
    return rows, y


def grid_checks(rows: list[list[str]], rng: random.Random) -> list[Check]:
    """Cell x header and neighbour checks on a truth grid whose first row is the header."""
    checks = []
    n = len(rows[0])
    for row in rng.sample(rows[1:], min(3, len(rows) - 1)):
        k = rng.randrange(1, n)
        checks.append(Check("table", cell=row[k], left_heading=row[0], top_heading=rows[0][k], max_diffs=1, note="row x header -> value"))
        checks.append(Check("table", cell=row[k], left=row[k - 1], max_diffs=1, note="left neighbour"))
    r = rng.randrange(1, len(rows) - 1)
    k = rng.randrange(n)
    checks.append(Check("table", cell=rows[r][k], down=rows[r + 1][k], max_diffs=1, note="down neighbour"))
    return checks


TABLE_LAYOUTS = ("ruled", "simple", "financial", "grid")


def table_page(rng: random.Random, v: int) -> tuple[pymupdf.Document, list[Check], list[list[str]] | None, str]:
    """A born-digital table page: (doc, checks, truth grid when the layout has one, layout)."""
    layout = TABLE_LAYOUTS[v % len(TABLE_LAYOUTS)]
    W = Words(rng)
    font = rng.choice(SCAN_FONTS)
    size = rng.uniform(9, 11)
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice(PAGE_SIZES))
    mx = rng.uniform(50, 70)
    y = rng.uniform(60, 90)
    pen.text(mx, y, f"Table {rng.randint(1, 9)}. {W.title()}", bold(font), size * 1.4)
    y += size * 2.2
    para = W.paragraph(2)
    _, _, low = flow(pen, [para], [(mx, pen.w - 2 * mx)], y, pen.h, font, size, 1.25, 0)
    y = low + size * 2.5
    truth = None
    if layout in ("ruled", "grid"):
        truth, y = grid_table(pen, rng, mx, y, pen.w - 2 * mx, font, size, ruled=layout == "ruled")
        checks = grid_checks(truth, rng)
    elif layout == "simple":
        checks, y = simple_table(pen, rng, mx, y, pen.w - 2 * mx, font, size)
    else:
        checks, y = financial_table(pen, rng, mx, y, font, size)
    for c in checks:
        c.max_diffs = max(c.max_diffs, 1)
    after = W.paragraph(2)
    flow(pen, [after], [(mx, pen.w - 2 * mx)], y + size * 2, pen.h, font, size, 1.25, 0)
    checks.append(Check("order", before=para[-1], after=after[0], max_diffs=2, note="text around the table in order"))
    return doc, checks, truth, layout


def scan_table_case(rng: random.Random, v: int) -> Case:
    doc, checks, _truth, layout = table_page(rng, v)
    return Case(f"scan_table-{v:02d}-{layout}", "scan_table", as_scan(doc, rng), checks, note=layout)


# ---------------------------------------------------------------------- marks
def scan_marks_case(rng: random.Random, v: int) -> Case:
    """Paragraphs with raised/lowered marks after words (footnote numbers, units, formulas)."""
    W = Words(rng)
    font = rng.choice(SCAN_FONTS)
    size = rng.uniform(10, 12)  # a mark is 0.62 of this: big enough to survive 150 dpi
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice(PAGE_SIZES))
    mx = rng.uniform(50, 75)
    pen.text(mx, 70, W.title(), bold(font), size * 1.6)
    n1, n2 = rng.sample(range(1, 9), 2)
    marks = [(f"{rng.choice(_NOUN)}s", str(n1), "sup", ""), (f"{rng.choice(_NOUN)}", str(n2), "sup", ""),
             (rng.choice(["10", "m", "cm"]), rng.choice(["3", "2"]), "sup", ""),
             (rng.choice(["CO", "H", "N"]), rng.choice(["2", "3"]), "sub", rng.choice(["", "O"]))]
    y = _marked_paragraph(pen, rng, W, mx, 110, pen.w - 2 * mx, font, size, marks)
    _marked_paragraph(pen, rng, W, mx, y + size, pen.w - 2 * mx, font, size, [])
    checks = [Check(k, base=base, mark=mark, note=f"{k}script kept") for base, mark, k, _ in marks]
    return Case(f"scan_marks-{v:02d}", "scan_marks", as_scan(doc, rng, dpi=rng.choice([170, 200])), checks, note=font)


# ---------------------------------------------------------------------- route comparison
def cells_at_truth(cells: list[list[str]] | None, truth: list[list[str]], max_diffs: int = 1) -> int:
    """How many truth cells a recovered grid holds at their own row and column (the grid may sit
    shifted by whole rows/columns, e.g. a caption row above: the best shift counts)."""
    from quality_checks import find_near, normalize

    if not cells:
        return 0

    def same(a: str, b: str) -> bool:
        a, b = normalize(a), normalize(b)
        return a == b or (abs(len(a) - len(b)) <= max_diffs and bool(find_near(a, b, max_diffs)))

    best = 0
    for dr in range(-1, max(1, len(cells) - len(truth)) + 1):
        for dc in range(-1, max(1, max(len(r) for r in cells) - len(truth[0])) + 1):
            hit = 0
            for r, row in enumerate(truth):
                for c, want in enumerate(row):
                    if not want:
                        continue  # an empty reference cell (a grid read by the text-layer route) says nothing
                    rr, cc = r + dr, c + dc
                    hit += 0 <= rr < len(cells) and 0 <= cc < len(cells[rr]) and same(want, cells[rr][cc])
            best = max(best, hit)
    return best


def compare_routes(n: int, seed: int = 7) -> None:
    """Table cells per route on the same pages: born-digital (text-layer route) and the same page
    rendered as a scan (OCR route), against the truth grid (grid layouts: ruled and unruled);
    for the layouts without one (simple, financial) the OCR route's cells against the text-layer
    route's (non-empty cells found at the same row and column, best whole-row/column shift)."""
    import time
    import zlib

    from pagerouter.config import PagerouterConfig
    from pagerouter.convert.converter import Converter

    conv = Converter(PagerouterConfig())
    totals: dict[str, list[int]] = {}
    for v in range(n):
        rng = random.Random(zlib.crc32(f"{seed}:scan_table:{v}".encode()))
        doc, _checks, truth, layout = table_page(rng, v)
        born = doc.tobytes(garbage=3, deflate=True)
        scan = as_scan(doc, rng)
        for route, pdf in (("text_layer", born), ("ocr", scan)):
            t = time.perf_counter()
            got = conv.convert(pdf, name=f"table-{v}-{route}.pdf")
            tables = [b.cells for p in got.pages for b in p.blocks if b.role == "table" and b.cells]
            if truth is None:
                # no truth grid (simple, financial): the text-layer route's cells are the reference
                # the OCR route is held to (header rows, group labels, `$` joined as it reads them)
                if route == "text_layer":
                    ref = max(tables, key=lambda c: sum(len(r) for r in c), default=None)
                    continue
                if not ref:
                    break
                hit = max((cells_at_truth(c, ref) for c in tables), default=0)
                total = sum(1 for r in ref for c in r if c)
                acc = totals.setdefault(f"ocr=text_layer {layout}", [0, 0])
                acc[0] += hit
                acc[1] += total
                print(f"v{v:02d} {layout:<6} {route:<10} {hit:>3}/{total:<3} text-layer cells at their row/column "
                      f"({len(tables)} table blocks, {time.perf_counter() - t:.1f} s)")
                continue
            hit = max((cells_at_truth(c, truth) for c in tables), default=0)
            total = sum(len(r) for r in truth)
            acc = totals.setdefault(f"{route} {layout}", [0, 0])
            acc[0] += hit
            acc[1] += total
            print(f"v{v:02d} {layout:<6} {route:<10} {hit:>3}/{total:<3} cells at their row/column "
                  f"({len(tables)} table blocks, {time.perf_counter() - t:.1f} s, routes {[p.route for p in got.pages]})")
    print("\ncells matching truth (row and column; ocr=text_layer: OCR cells matching the text layer's):")
    for k, (hit, total) in sorted(totals.items()):
        print(f"  {k:<26} {hit:>4}/{total:<4} {hit / max(1, total):.0%}")


if __name__ == "__main__":
    import argparse
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=int, default=8, help="table pages (variants) to compare; half have a truth grid, "
                    "the others are compared with the text-layer route's cells")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    compare_routes(args.tables, args.seed)
