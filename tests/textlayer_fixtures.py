"""Synthetic pages with known layout for tests/test_textlayer.py."""

from __future__ import annotations

import io

import numpy as np
import pymupdf

W, H = 595.0, 842.0


def put(page: pymupdf.Page, x: float, y: float, text: str, size: float = 10, font: str = "helv", **kw) -> None:
    page.insert_text((x, y), text, fontsize=size, fontname=font, **kw)


def column_page(doc: pymupdf.Document, columns: int, lines_per_col: int = 12) -> list[str]:
    """Full-width title, `columns` columns of tagged lines, full-width footer note.

    Baselines line up across columns (the hard case for a naive XY cut). Returns the column
    texts in reading order.
    """
    page = doc.new_page(width=W, height=H)
    put(page, 56, 80, "A Title Spanning All Columns Of This Page For Testing", 18)
    gap, margin = 20.0, 56.0
    cw = (W - 2 * margin - (columns - 1) * gap) / columns
    texts = []
    for c in range(columns):
        x = margin + c * (cw + gap)
        words = []
        for i in range(lines_per_col):
            line = " ".join(f"col{c}w{i} alpha beta gamma delta epsilon zeta eta theta".split()[: max(3, int(cw / 30))])
            put(page, x, 130 + i * 13, line, 9)
            words.append(line)
        # a second paragraph after a gap
        for i in range(4):
            line = " ".join(f"col{c}p{i} one two three four five six seven".split()[: max(3, int(cw / 30))])
            put(page, x, 130 + (lines_per_col + 1) * 13 + i * 13, line, 9)
            words.append(line)
        texts.append(words)
    put(page, 56, 760, "A full width closing note that crosses every column gutter on the page and runs on to the right margin", 9)
    return texts


def heading_list_page(doc: pymupdf.Document) -> None:
    page = doc.new_page(width=W, height=H)
    put(page, 56, 80, "Main Title", 22)
    put(page, 56, 120, "Section One", 16)
    y = 145
    for t in ["This is body text of the first section and it is long enough", "to wrap onto a second line of ordinary text."]:
        put(page, 56, y, t, 10)
        y += 13
    put(page, 56, 190, "Subsection A", 13)
    y = 215
    for t in ["• First bullet item", "• Second bullet item that wraps onto", "another line here", "• Third bullet"]:
        x = 72 if not t.startswith("•") else 56
        put(page, x if t.startswith("•") is False else 56, y, t, 10)
        y += 13
    y += 12
    for t in ["1. First numbered", "2. Second numbered", "3. Third numbered"]:
        put(page, 56, y, t, 10)
        y += 13
    put(page, 56, y + 20, "Section Two", 16)
    put(page, 56, y + 45, "Closing paragraph with plain body text in it for the size statistics.", 10)
    put(page, 56, y + 58, "More plain body text so that body size is clearly ten points here.", 10)


def ruled_table_page(doc: pymupdf.Document, rows: list[list[str]]) -> tuple[float, float, float, float]:
    page = doc.new_page(width=W, height=H)
    put(page, 56, 80, "A page with a ruled table below.", 10)
    x0, y0, cw, rh = 72.0, 120.0, 110.0, 20.0
    ncols = len(rows[0])
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            put(page, x0 + c * cw + 4, y0 + r * rh + 14, cell, 10)
    x1, y1 = x0 + ncols * cw, y0 + len(rows) * rh
    for r in range(len(rows) + 1):
        page.draw_line((x0, y0 + r * rh), (x1, y0 + r * rh), width=0.7)
    for c in range(ncols + 1):
        page.draw_line((x0 + c * cw, y0), (x0 + c * cw, y1), width=0.7)
    put(page, 56, y1 + 40, "Text after the table.", 10)
    return (x0, y0, x1, y1)


def unruled_table_page(doc: pymupdf.Document, rows: list[list[str]]) -> None:
    page = doc.new_page(width=W, height=H)
    put(page, 56, 80, "Results are given in the following table without any lines.", 10)
    xs = [72, 200, 300, 400]
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            put(page, xs[c], 120 + r * 16, cell, 10)
    put(page, 56, 120 + len(rows) * 16 + 30, "And the discussion continues after the table here.", 10)


def furniture_doc(pages: int = 5) -> pymupdf.Document:
    doc = pymupdf.open()
    for i in range(1, pages + 1):
        page = doc.new_page(width=W, height=H)
        put(page, 56, 40, "Journal of Layout Studies, Vol. 7", 8)
        for k in range(20):
            put(page, 56, 120 + k * 14, f"Body line {k} of page {i} with some ordinary words.", 10)
        put(page, 56, 810, f"Page {i} of {pages}", 8)
        put(page, 450, 810, "Confidential draft", 8)
    return doc


def png_bytes(w: int = 120, h: int = 80) -> bytes:
    from PIL import Image

    arr = (np.indices((h, w)).sum(0) % 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()
