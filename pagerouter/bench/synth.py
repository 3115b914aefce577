"""Synthetic pages with known content: the bundled sample, test fixtures and benchmarks.

Every builder appends one page to a PyMuPDF document and returns the text a perfect reader
would produce, so tests can assert extracted text and character error rates. Fonts: PyMuPDF's
built-in `helv` (Latin) and `china-s` (Droid Sans Fallback: Latin, Cyrillic, CJK), plus
DejaVu Sans from the system when present (Arabic and Greek).
"""

from __future__ import annotations

import io
import os
import re
import textwrap
from collections.abc import Callable

import numpy as np
import pymupdf

A4 = (595.0, 842.0)
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

LOREM = (
    "The committee reviewed the quarterly figures and agreed that the new routing policy "
    "reduced the cost of reading each page. Most documents in the archive were born digital, "
    "so their embedded text could be used directly. Scanned letters, however, needed optical "
    "character recognition, and a few files carried a hidden text layer that did not match "
    "the printed words at all."
)


def _font_for(text: str) -> tuple[str, str | None]:
    """Pick a font that has glyphs for the text: (fontname, fontfile)."""
    if any("\u0600" <= ch <= "\u06ff" or "\u0370" <= ch <= "\u03ff" for ch in text) and os.path.exists(DEJAVU):
        return "dejavu", DEJAVU
    if any(ord(ch) > 0x24F for ch in text):
        return "china-s", None
    return "helv", None


def add_text_page(
    doc: pymupdf.Document,
    paragraphs: list[str],
    *,
    title: str | None = None,
    header: str | None = None,
    footer: str | None = None,
    columns: int = 1,
    fontsize: float = 11,
    size: tuple[float, float] = A4,
    render_mode: int = 0,
) -> str:
    """A born-digital page: optional title, paragraphs flowed into `columns` columns."""
    page = doc.new_page(width=size[0], height=size[1])
    margin = 56.0
    y = margin + 20
    expected: list[str] = []
    if header:
        _put(page, (margin, 32), header, 8)
    if title:
        _put(page, (margin, y), title, 18)
        expected.append(title)
        y += 36
    col_gap = 24.0
    col_w = (size[0] - 2 * margin - (columns - 1) * col_gap) / columns
    chars_per_line = max(20, int(col_w / (fontsize * 0.5)))
    col, x = 0, margin
    top = y
    for para in paragraphs:
        lines = textwrap.wrap(para, chars_per_line) or [""]
        needed = len(lines) * fontsize * 1.35 + fontsize
        if y + needed > size[1] - margin - 20 and col < columns - 1:
            col += 1
            x = margin + col * (col_w + col_gap)
            y = top
        for line in lines:
            _put(page, (x, y), line, fontsize, render_mode=render_mode)
            y += fontsize * 1.35
        y += fontsize
        expected.append(para)
    if footer:
        _put(page, (margin, size[1] - 30), footer, 8)
    return "\n\n".join(expected)


def _put(page: pymupdf.Page, at: tuple[float, float], text: str, size: float, render_mode: int = 0) -> None:
    fontname, fontfile = _font_for(text)
    page.insert_text(at, text, fontsize=size, fontname=fontname, fontfile=fontfile, render_mode=render_mode)


def text_image(
    lines: list[str],
    *,
    dpi: int = 200,
    size: tuple[float, float] = A4,
    fontsize: float = 12,
    noise: float = 0.0,
    blur: bool = False,
    rotate: int = 0,
    skew_deg: float = 0.0,
    seed: int = 0,
    fmt: str = "PNG",
) -> bytes:
    """Render lines of text as a scan-like image (grey noise, optional blur, rotation and skew)."""
    tmp = pymupdf.open()
    page = tmp.new_page(width=size[0], height=size[1])
    y = 72.0
    for line in lines:
        _put(page, (60, y), line, fontsize)
        y += fontsize * 1.6
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width).astype(np.float32)
    rng = np.random.default_rng(seed)
    if blur:
        img = (img + np.roll(img, 1, 0) + np.roll(img, 1, 1) + np.roll(img, -1, 0) + np.roll(img, -1, 1)) / 5
    if noise:
        img += rng.normal(0, 255 * noise, img.shape)
    img = np.clip(img, 0, 255).astype(np.uint8)
    from PIL import Image

    pil = Image.fromarray(img)
    if skew_deg:
        pil = pil.rotate(skew_deg, expand=False, fillcolor=255)
    if rotate:
        pil = pil.rotate(-rotate, expand=True)  # PIL rotates counter-clockwise
    buf = io.BytesIO()
    pil.save(buf, format=fmt, dpi=(dpi, dpi), **({"quality": 80} if fmt == "JPEG" else {}))
    return buf.getvalue()


def add_scanned_page(
    doc: pymupdf.Document,
    lines: list[str],
    *,
    hidden_text: str | None = None,
    size: tuple[float, float] = A4,
    **image_kw,
) -> str:
    """A page that is one full-page picture of text (a scan), optionally with an invisible
    (render mode 3) OCR layer over it, which may lie. Returns the text the picture shows."""
    rotate = image_kw.get("rotate", 0)
    w, h = (size[1], size[0]) if rotate in (90, 270) else size
    page = doc.new_page(width=w, height=h)
    page.insert_image(page.rect, stream=text_image(lines, size=size, **image_kw))
    if hidden_text is not None:
        y = 72.0
        for line in hidden_text.splitlines():
            page.insert_text((60, y), line, fontsize=12, render_mode=3)
            y += 19
    return "\n".join(lines)


def add_blank_page(doc: pymupdf.Document, size: tuple[float, float] = A4) -> str:
    doc.new_page(width=size[0], height=size[1])
    return ""


def make_mixed_sample(path: str) -> None:
    """The README's sample: born-digital, scanned, lying-text-layer and blank pages."""
    doc = pymupdf.open()
    add_text_page(
        doc,
        [LOREM, "Routing each page to the cheapest reader that reads it well keeps costs low."],
        title="Quarterly routing report",
        header="pagerouter sample",
        footer="1",
    )
    add_scanned_page(
        doc,
        ["Scanned letter", "Dear reader, this page is a picture of text.", "It has no text layer at all."],
        noise=0.03,
        dpi=150,
        fmt="JPEG",
    )
    add_scanned_page(
        doc,
        ["Invoice 2024-117", "Total due: 1,250.00 EUR", "Payment within 30 days."],
        hidden_text="lorem ipsum dolor sit amet consectetur\nthis hidden layer does not match the picture",
        dpi=150,
        fmt="JPEG",
    )
    add_text_page(doc, [LOREM, LOREM], columns=2, title="Two columns", header="pagerouter sample", footer="4")
    add_blank_page(doc)
    doc.set_metadata({"title": "pagerouter mixed sample", "creator": "pagerouter.bench.synth"})
    doc.save(path, garbage=3, deflate=True)


def add_table_page(
    doc: pymupdf.Document,
    rows: list[list[str]],
    *,
    title: str | None = None,
    size: tuple[float, float] = A4,
    fontsize: float = 11,
    ruled: bool = True,
    scanned: bool = False,
    dpi: int = 200,
) -> list[list[str]]:
    """A page holding one grid table (first row = header), optionally ruled, optionally as a
    scan (the page rendered to a full-page picture with no text layer). Returns the cells."""
    src = pymupdf.open()
    page = src.new_page(width=size[0], height=size[1])
    margin, y = 56.0, 80.0
    if title:
        _put(page, (margin, y), title, 16)
        y += 36
    ncols = max(len(r) for r in rows)
    col_w = (size[0] - 2 * margin) / ncols
    row_h = fontsize * 2.2
    top = y
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            _put(page, (margin + j * col_w + 6, y + row_h * 0.65), cell, fontsize)
        y += row_h
    if ruled:
        for i in range(len(rows) + 1):
            page.draw_line((margin, top + i * row_h), (size[0] - margin, top + i * row_h), width=0.8)
        for j in range(ncols + 1):
            page.draw_line((margin + j * col_w, top), (margin + j * col_w, y), width=0.8)
    if scanned:
        pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        out = doc.new_page(width=size[0], height=size[1])
        out.insert_image(out.rect, stream=pix.tobytes("png"))
    else:
        doc.insert_pdf(src)
    return [list(r) + [""] * (ncols - len(r)) for r in rows]


# --- fonts whose Unicode map lies (the page shows one letter, the text layer says another) -------
def _parse_tounicode(cmap: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for block in re.findall(r"beginbfchar(.*?)endbfchar", cmap, re.S):
        for src, dst in re.findall(r"<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>", block):
            v = int(dst, 16)  # PyMuPDF writes code points (`<1f431>`), others UTF-16BE
            out[int(src, 16)] = chr(v) if v <= 0x10FFFF else bytes.fromhex(dst).decode("utf-16-be", errors="replace")
    for block in re.findall(r"beginbfrange(.*?)endbfrange", cmap, re.S):
        for a, b, dst in re.findall(r"<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>", block):
            start = int(dst, 16)
            for i, g in enumerate(range(int(a, 16), int(b, 16) + 1)):
                out[g] = chr(start + i)
    return out


def _write_tounicode(mapping: dict[int, str]) -> bytes:
    lines = [
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def",
        "1 begincodespacerange <0000> <FFFF> endcodespacerange",
    ]
    items = sorted(mapping.items())
    for i in range(0, len(items), 100):
        chunk = items[i : i + 100]
        lines.append(f"{len(chunk)} beginbfchar")
        for g, u in chunk:
            lines.append(f"<{g:04x}> <{u.encode('utf-16-be').hex()}>")
        lines.append("endbfchar")
    lines += ["endcmap", "CMapName currentdict /CMap defineresource pop", "end", "end"]
    return "\n".join(lines).encode()


def remap_tounicode(doc: pymupdf.Document, change: Callable[[str], str]) -> None:
    """Rewrite every ToUnicode map in `doc`: each glyph's character `u` becomes `change(u)`, the
    way a broken producer leaves a font (the glyphs drawn stay right)."""
    for xref in range(1, doc.xref_length()):
        kind, val = doc.xref_get_key(xref, "ToUnicode")
        if kind != "xref":
            continue
        tu = int(val.split()[0])
        mapping = _parse_tounicode(doc.xref_stream(tu).decode("latin-1"))
        doc.update_stream(tu, _write_tounicode({g: change(u) for g, u in mapping.items()}))
