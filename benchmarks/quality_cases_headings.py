"""The `headings` family of `quality_cases.py` (same conventions): multi-page documents whose
headings are drawn the ways producers draw them, with their levels as truth.

Every document sets its headings in a size ladder (H1 > H2 > H3 above the body size, and in
some documents a bold run-in at body size as the lowest level), spread over 2-4 pages so that
a page without an H1 still has to give its H2 level 2. On top of that, one drawing trick per
document (`HEADING_MODES`):

- `letter_glyphs`: a letter-spaced heading drawn one glyph at a time with wide tracking, a
  wider gap between words (MuPDF reads `A N N U A L` / `R E P O R T`);
- `letter_tc`: the same with PDF character spacing (Tc) on one string;
- `letter_spaces`: the same written with a space after every letter and three between words;
- `overprint_line`: a heading printed 2-4 times with offsets under 1 pt (fake bold);
- `overprint_words`: every word of a heading printed twice with a small offset;
- `levels`: plain headings only, one page holding no H1 at all.

Checks: each heading is a heading of its level (`heading` with `level`), an overprinted heading
comes out once (`present` with `max_count=1`), every body paragraph is there whole ("no body
word lost": a `present` per paragraph, on its first and last words), and on overprint pages a
body line with the same word twice far apart keeps both.
"""

from __future__ import annotations

import random

import pymupdf

from quality_cases import _ADJ, _NOUN, PAGE_SIZES, Case, Pen, Words, _pdf, bold, flow, new_doc_page
from quality_checks import Check

HEADING_MODES = ("letter_glyphs", "letter_tc", "letter_spaces", "overprint_line", "overprint_words", "levels")
_BASE14 = ("helv", "tiro", "cour")


def _append_ops(page: pymupdf.Page, ops: list[str]) -> None:
    """Raw content operators after what the page already draws (one more content stream)."""
    doc = page.parent
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, ("q " + "\n".join(ops) + " Q").encode("latin-1"))
    old = " ".join(f"{x} 0 R" for x in page.get_contents())
    doc.xref_set_key(page.xref, "Contents", f"[{old} {xref} 0 R]")


def _font_resource(page: pymupdf.Page, font: str) -> str:
    """The page's resource name of a base-14 font (registered, nothing drawn)."""
    page.insert_font(fontname=font)
    return next(f[4] for f in page.get_fonts() if f[4].lower() == font.lower())


def _caps_title(rng: random.Random) -> str:
    """Two or three words, mostly in capitals (as letter-spaced titles are), else title case."""
    words = [rng.choice(_ADJ), rng.choice(_NOUN)] + ([rng.choice(_NOUN)] if rng.random() < 0.4 else [])
    return " ".join(words).upper() if rng.random() < 0.7 else " ".join(w.capitalize() for w in words)


def _letter_spaced(pen: Pen, rng: random.Random, mode: str, x: float, y: float, text: str, font: str, size: float) -> None:
    """`text` drawn letter-spaced: tracking 0.15-0.5 em, words a wider gap apart; the tracking
    shrinks where the run would not fit the text width."""
    track = rng.uniform(0.15, 0.5) * size
    word_gap = track + pen.width(" ", font, size) * rng.uniform(1.5, 3.0)
    room = pen.w - x - 50  # to a right margin of 50 pt
    letters = len(text.replace(" ", ""))
    while track > 0.05 * size and pen.width(text.replace(" ", ""), font, size) + letters * track + 3 * word_gap > room:
        track *= 0.8
        word_gap = track + pen.width(" ", font, size) * 1.5
    if mode == "letter_glyphs":
        for i, word in enumerate(text.split()):
            if i:
                x += word_gap - track
            for ch in word:
                pen.text(x, y, ch, font, size)
                x += pen.width(ch, font, size) + track
    elif mode == "letter_tc":
        name = _font_resource(pen.page, font)
        tw = pen.width(" ", font, size) * rng.uniform(0.0, 1.5)
        s = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        _append_ops(pen.page, [f"BT /{name} {size:.2f} Tf {track:.3f} Tc {tw:.3f} Tw 1 0 0 1 {x:.2f} {pen.h - y:.2f} Tm ({s}) Tj ET"])
    else:  # letter_spaces: the tracking is written as spaces
        pen.text(x, y, "   ".join(" ".join(w) for w in text.split()), font, size)


def _overprinted(pen: Pen, rng: random.Random, mode: str, x: float, y: float, text: str, font: str, size: float) -> None:
    """`text` printed several times, each copy offset by under 1 pt (fake bold)."""
    copies = [(0.0, 0.0)] + [(rng.uniform(0.15, 0.8), rng.uniform(-0.4, 0.4)) for _ in range(rng.randint(1, 3))]
    if mode == "overprint_line":
        for dx, dy in copies:
            pen.text(x + dx, y + dy, text, font, size)
        return
    sp = pen.width(" ", font, size)
    for word in text.split():
        for dx, dy in copies[:2]:
            pen.text(x + dx, y + dy, word, font, size)
        x += pen.width(word, font, size) + sp


def headings_case(rng: random.Random, v: int) -> Case:
    mode = HEADING_MODES[v % len(HEADING_MODES)]
    W = Words(rng)
    font = rng.choice(_BASE14) if mode == "letter_tc" else rng.choice(["helv", "tiro", "dvserif", "dvsans"])
    body = rng.uniform(9, 11)
    # the ladder: H1 > H2 > H3 > body (H3 at least 1.2x body), maybe a bold run-in at body size
    h3 = body * rng.uniform(1.2, 1.3)
    h2 = h3 * rng.uniform(1.2, 1.35)
    h1 = h2 * rng.uniform(1.25, 1.45)
    sizes = [h1, h2, h3] + ([body] if rng.random() < 0.5 else [])
    n_pages = rng.randint(2, 4)
    size = rng.choice(PAGE_SIZES)
    doc = pymupdf.open()
    checks: list[Check] = []
    mx = rng.uniform(50, 75)
    trick_page = rng.randrange(n_pages)
    no_h1_page = rng.randrange(1, n_pages)  # a later page starts at H2 (or H3): its levels must hold
    for pno in range(n_pages):
        page, pen = new_doc_page(doc, size)
        width = pen.w - 2 * mx
        y = rng.uniform(70, 95)
        levels = [1, 2, 3] if pno == 0 else [2, 3] if pno == no_h1_page else [1, 2, 3]
        if pno == no_h1_page and rng.random() < 0.5:
            levels = [3, 2]  # a page opening mid-section
        if len(sizes) == 4:
            levels = levels + [4]
        tricked = False
        body_checks: list[Check] = []
        for lv in levels:
            hsize = sizes[lv - 1]
            if y > pen.h - 160:
                break  # no room for a heading and its paragraph
            # the trick on every H1/H2 of the document (several per document), on one page also an H3
            trick = mode != "levels" and (lv <= 2 or (pno == trick_page and not tricked and lv == 3))
            text = (_caps_title(rng) if mode.startswith("letter") else W.title()) if trick else W.title()
            while trick and mode.startswith("letter") and pen.width(text, font, hsize) * 1.3 > width:
                text = _caps_title(rng)  # room for the tracking on one line
            if lv == 4:  # bold run-in at body size: its own line, bold
                pen.text(mx, y, text, bold(font), hsize)
            elif trick and mode.startswith("letter"):
                # left-aligned or roughly centred (title pages)
                x = mx if rng.random() < 0.6 else mx + rng.uniform(0.1, 0.25) * width
                _letter_spaced(pen, rng, mode, x, y, text, font, hsize)
            elif trick:
                _overprinted(pen, rng, mode, mx, y, text, font, hsize)
            else:
                pen.text(mx, y, text, font if rng.random() < 0.5 else bold(font), hsize)
            tricked |= trick
            checks.append(Check("heading", text=text, level=lv, note=f"{mode if trick else 'plain'} H{lv}"))
            if trick and mode.startswith("overprint"):
                checks.append(Check("present", text=text, max_count=1, note=f"{mode}: once"))
            y += hsize * 0.8 + body * 1.6
            paras = [W.paragraph(rng.randint(2, 3)) for _ in range(rng.randint(1, 2))]
            _, starts, low = flow(pen, paras, [(mx, width)], y, pen.h - 80, font, body, 1.3, body * 0.7)
            drawn = {pi for pi, _, _ in starts}  # a paragraph that did not fit is not drawn
            for pi, p in enumerate(paras):
                if pi in drawn:
                    words = " ".join(p).split()
                    body_checks.append(Check("present", text=" ".join(words[:6]), max_diffs=1, note="body start kept"))
                    body_checks.append(Check("present", text=" ".join(words[-6:]), max_diffs=1, note="body end kept"))
            y = low + body * rng.uniform(2.2, 3.0)
        checks += rng.sample(body_checks, min(4, len(body_checks)))  # no body word lost: a sample a page
        if pno == trick_page and mode.startswith("overprint"):
            # a genuine repeat: the same word opening two columns of one body line, far apart
            word = rng.choice(_NOUN).capitalize()
            left, right = f"{word} {rng.choice(_ADJ)} {rng.choice(_NOUN)}", f"{word} {rng.choice(_ADJ)} {rng.choice(_NOUN)}"
            pen.text(mx, y, left, font, body)
            pen.text(mx + width / 2 + 10, y, right, font, body)
            checks.append(Check("present", text=left, note="repeated word kept (left)"))
            checks.append(Check("present", text=right, note="repeated word kept (right)"))
    name = f"headings-{v:02d}-{mode}"
    return Case(name, "headings", _pdf(doc), checks, note=f"{mode} {font} body {body:.1f}pt, {n_pages} pages")
