"""Headings on the text-layer route: letter-spaced runs joined into words, overprinted (fake
bold) copies kept once, levels from the document's size ladder, and no body word lost."""

from __future__ import annotations

from collections import Counter

import pymupdf
import pytest

from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.common.pagetext import extract_textdict
from pagerouter.textlayer import FurnitureModel, read_text_layer
from pagerouter.textlayer.lines import Line

CFG = TextLayerConfig()
BODY = ("The survey crews mapped every narrow channel of the western estuary before the spring tides "
        "returned, and the harbour office kept their field notes in numbered boxes for later study.")
W, H = 595, 842


def _font(page: pymupdf.Page, name: str = "helv") -> pymupdf.Font:
    page.insert_font(fontname=name)
    return pymupdf.Font(name)


def _ops(page: pymupdf.Page, ops: list[str]) -> None:
    """Raw text operators as one more content stream of `page` (y measured from the top)."""
    doc = page.parent
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, ("q " + "\n".join(ops) + " Q").encode("latin-1"))
    old = " ".join(f"{x} 0 R" for x in page.get_contents())
    doc.xref_set_key(page.xref, "Contents", f"[{old} {xref} 0 R]" if old else f"[{xref} 0 R]")


def _tj(x: float, y: float, text: str, size: float, extra: str = "") -> str:
    return f"BT /helv {size:.2f} Tf {extra} 1 0 0 1 {x:.2f} {H - y:.2f} Tm ({text}) Tj ET"


def _body(page: pymupdf.Page, y: float, size: float = 10) -> float:
    """BODY wrapped at 470 pt from `y`; returns the y below it."""
    rect = pymupdf.Rect(60, y, 530, y + 200)
    page.insert_textbox(rect, BODY, fontname="helv", fontsize=size)
    return y + 5 * size * 1.3


def _read(doc: pymupdf.Document):
    fm = FurnitureModel.from_document(doc, list(range(1, doc.page_count + 1)), CFG)
    return [read_text_layer(p, extract_textdict(p), p.number + 1, CFG, fm) for p in doc]


def _words(blocks) -> Counter:
    return Counter(w.strip(".,") for b in blocks if b.role not in ("heading",) for w in b.text.split())


def _headings(blocks) -> list[tuple[str, int | None]]:
    return [(b.text, b.level) for b in blocks if b.role == "heading"]


def _assert_body_whole(blocks) -> None:
    got = _words(blocks)
    for w, n in Counter(w.strip(".,") for w in BODY.split()).items():
        assert got[w] >= n, f"body word {w!r} lost"


# ---------------------------------------------------------------------- letter spacing
def _letter_spaced_page(doc: pymupdf.Document, how: str, text: str, size: float = 18) -> None:
    page = doc.new_page(width=W, height=H)
    f = _font(page)
    track = 0.35 * size
    x, y = 60.0, 90.0
    if how == "glyphs":  # one text object per letter, a wider gap between words
        ops = []
        for i, word in enumerate(text.split()):
            if i:
                x += 2.5 * f.text_length(" ", fontsize=size)
            for ch in word:
                ops.append(_tj(x, y, ch, size))
                x += f.text_length(ch, fontsize=size) + track
        _ops(page, ops)
    elif how == "tc":  # one string, PDF character spacing
        _ops(page, [_tj(x, y, text, size, f"{track:.2f} Tc")])
    else:  # the tracking written as spaces
        page.insert_text((x, y), "   ".join(" ".join(w) for w in text.split()), fontname="helv", fontsize=size)
    _body(page, 130)


@pytest.mark.parametrize("how", ["glyphs", "tc", "spaces"])
def test_letter_spaced_heading_is_joined_into_words(how):
    doc = pymupdf.open()
    _letter_spaced_page(doc, how, "ANNUAL REPORT")
    _letter_spaced_page(doc, how, "HARBOUR OF THE NORTH", size=14)
    pages = _read(doc)
    # one heading per page, its words whole, at the level its size ranks in the document
    assert _headings(pages[0]) == [("ANNUAL REPORT", 1)]
    assert _headings(pages[1]) == [("HARBOUR OF THE NORTH", 2)]
    for blocks in pages:
        _assert_body_whole(blocks)


def test_single_letter_words_in_prose_are_not_letter_spacing():
    from pagerouter.textlayer.glyph_runs import respace, spaced_letters

    assert not spaced_letters("A quiet harbour once kept a b c of the survey")
    assert not spaced_letters("I am a reader of x and y")
    assert spaced_letters("A N N U A L R E P OR T")
    # without glyph positions only a visible word break (two or more spaces) is trusted
    ln = Line(0, 0, 100, 10, "A N N U A L   R E P O R T", 12, False, False, chars=12)
    assert respace(ln, None, CFG) == "ANNUAL REPORT"
    ln = Line(0, 0, 100, 10, "F I N A N C I A L R E V I E W", 12, False, False, chars=15)
    assert respace(ln, None, CFG) is None


def test_spaced_single_letter_cells_are_left_alone():
    """Letters far apart (a row of one-letter cells, a scale) are not a tracked word."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    _font(page)
    _ops(page, [_tj(60 + 40 * i, 90, ch, 10) for i, ch in enumerate("ABCDEFG")])
    _body(page, 130)
    text = " ".join(b.text for b in _read(doc)[0])
    assert "ABCDEFG" not in text and all(ch in text.split() for ch in "ABCDEFG")


# ---------------------------------------------------------------------- overprinting
def _overprint_page(doc: pymupdf.Document, how: str, title: str, copies: int, size: float = 16) -> None:
    page = doc.new_page(width=W, height=H)
    f = _font(page)
    offsets = [(0.0, 0.0), (0.45, 0.0), (0.3, 0.35), (0.7, -0.2)][:copies]
    ops = []
    if how == "line":
        ops = [_tj(60 + dx, 90 + dy, title, size) for dx, dy in offsets]
    else:  # every word printed twice before the next word
        x = 60.0
        for word in title.split():
            ops += [_tj(x + dx, 90 + dy, word, size) for dx, dy in offsets]
            x += f.text_length(word + " ", fontsize=size)
    _ops(page, ops)
    y = _body(page, 130)
    # a genuine repeat: the same word opening two columns of one line, far apart
    page.insert_text((60, y + 20), "Harbour north basin", fontname="helv", fontsize=10)
    page.insert_text((320, y + 20), "Harbour south basin", fontname="helv", fontsize=10)


@pytest.mark.parametrize("how,copies", [("line", 2), ("line", 4), ("words", 2), ("words", 3)])
def test_overprinted_heading_comes_out_once(how, copies):
    doc = pymupdf.open()
    _overprint_page(doc, how, "Results of the Year", copies)
    blocks = _read(doc)[0]
    assert _headings(blocks) == [("Results of the Year", 1)]
    _assert_body_whole(blocks)
    texts = [b.text for b in blocks]
    assert "Harbour north basin" in texts and "Harbour south basin" in texts


def test_overprint_at_body_size_reads_as_a_bold_heading():
    """Fake bold at body size is what a reader sees as a bold run-in heading."""
    doc = pymupdf.open()
    page = doc.new_page(width=W, height=H)
    _font(page)
    _ops(page, [_tj(60 + dx, 90, "Method and scope", 10) for dx in (0.0, 0.4)])
    _body(page, 110)
    blocks = _read(doc)[0]
    assert _headings(blocks) == [("Method and scope", 1)]
    _assert_body_whole(blocks)


def test_copies_are_dropped_only_when_they_coincide():
    from pagerouter.textlayer.glyph_runs import drop_overprints

    a = Line(60, 80, 180, 96, "Results of the Year", 16, False, False, chars=16)
    b = Line(60.5, 80.2, 180.5, 96.2, "Results of the Year", 16, False, False, chars=16)
    far = Line(300, 80, 420, 96, "Results of the Year", 16, False, False, chars=16)
    kept = drop_overprints([a, b, far], None, CFG)
    assert [ln.x0 for ln in kept] == [60, 300] and kept[0].bold and not kept[1].bold
    other = Line(60.3, 80, 170, 96, "Results of the Day", 16, False, False, chars=15)
    assert len(drop_overprints([a, other], None, CFG)) == 2


# ---------------------------------------------------------------------- levels
@pytest.mark.parametrize("n_pages", [2, 3])
def test_levels_follow_the_document_ladder_on_every_page(n_pages):
    """20/15/12 pt headings over 10 pt body and a bold run-in at body size; the second page has
    no 20 pt heading, the third opens with an H3 and sets one H2 at 14.7 pt (the same style,
    measured a little smaller): each style keeps its level on every page."""
    doc = pymupdf.open()
    plan = [[("Coastal Survey", 20), ("Northern Shore", 15), ("Tidal Pools", 12), ("Method", 10)],
            [("Southern Shore", 15), ("Dune Ridges", 12)],
            [("Salt Marshes", 12), ("Eastern Shore", 14.7), ("Sampling", 10)]][:n_pages]
    for heads in plan:
        page = doc.new_page(width=W, height=H)
        y = 80.0
        for text, size in heads:
            page.insert_text((60, y), text, fontname="hebo" if size == 10 else "helv", fontsize=size)
            y = _body(page, y + size)
            y += 16
    pages = _read(doc)
    level = {20: 1, 15: 2, 14.7: 2, 12: 3, 10: 4}
    for heads, blocks in zip(plan, pages):
        assert _headings(blocks) == [(t, level[s]) for t, s in heads]
        _assert_body_whole(blocks)


def test_rungs_fold_sizes_of_one_style():
    from pagerouter.textlayer.heading_levels import heading_level, rungs

    ladder = rungs([20, 15, 14.5, 12], CFG)
    assert ladder == (20, 14.5, 12)
    assert [heading_level(s, ladder, CFG) for s in (20, 15, 14.5, 12, 10)] == [1, 2, 2, 3, 4]
