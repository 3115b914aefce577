"""Reading order of born-digital pages end to end: columns, gutters, rotated pages and text.

Pages are generated with PyMuPDF. Every sentence starts with a tag (column letter + number),
so order can be checked on the output whatever the paragraphs and lines look like: each
column's sentences in order, columns left to right, no block holding two columns' words.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pymupdf
import pytest

from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.common.pagetext import extract_textdict
from pagerouter.textlayer import read_text_layer
from pagerouter.textlayer.frame import dominant_angle
from pagerouter.textlayer.lines import Line, merge_fragments
from pagerouter.textlayer.native import prefer_native, reentries

CFG = TextLayerConfig()
REAL = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "real"
WORDS = (
    "the committee reviewed results of various studies and found that measured values agree with earlier "
    "estimates within small margins while several outliers remain unexplained by current models"
).split()
TAG = re.compile(r"\b([A-Z][a-z])(\d\d)\b")


def sentences(tag: str, n: int, rng: random.Random) -> list[str]:
    return [f"{tag}{k:02d} " + " ".join(rng.sample(WORDS, rng.randint(8, 16))) + "." for k in range(n)]


def read(page: pymupdf.Page):
    return read_text_layer(page, extract_textdict(page), page.number + 1, CFG)


def columns_page(
    widths=(1, 1), gutter=18.0, size=9.5, font="helv", seed=0, counts=None, sizes=None, mid=None,
    stamp=True, refs=True,
) -> pymupdf.Document:  # fmt: skip
    """A journal-like page: a small stamp line across the top (crossing every gutter), a
    centred title, justified columns of tagged sentences ("Ac", "Bc", ...), optionally a
    full-width caption between two halves of the columns (`mid`: its top and bottom), and a
    full-width references block ("Zr")."""
    rng = random.Random(seed)
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    m, full = 54.0, 612 - 108.0
    if stamp:
        page.insert_text((m, 40), "Downloaded from https://example.org/j by guest on 12 March 2024 | Vol. 8 | Issue 3",
                         fontsize=7, fontname=font)
    page.insert_textbox((m, 60, m + full, 100), "Study Of Something In Columns", fontsize=16, fontname=font, align=1)
    avail = full - gutter * (len(widths) - 1)
    x = m
    for c, w in enumerate(widths):
        cw = avail * w / sum(widths)
        text = sentences(chr(65 + c) + "c", counts[c] if counts else 12, rng)
        sz = sizes[c] if sizes else size
        if mid:
            k = len(text) // 2
            page.insert_textbox((x, 110, x + cw, mid[0] - 4), " ".join(text[:k]), fontsize=sz, fontname=font, align=3)
            page.insert_textbox((x, mid[1] + 4, x + cw, 690), " ".join(text[k:]), fontsize=sz, fontname=font, align=3)
        else:
            assert page.insert_textbox((x, 110, x + cw, 690), " ".join(text), fontsize=sz, fontname=font, align=3) >= 0
        x += cw + gutter
    if mid:
        page.insert_textbox((m, mid[0], m + full, mid[1]), "Table 1. " + sentences("Mi", 1, rng)[0], fontsize=9, fontname=font)
    if refs:
        page.insert_textbox((m, 700, m + full, 780), "References " + " ".join(sentences("Zr", 2, rng)), fontsize=8,
                            fontname=font)  # fmt: skip
    return doc


def tags(blocks) -> list[str]:
    return [a + b for blk in blocks for a, b in TAG.findall(blk.text)]


def assert_columns_in_order(blocks, ncols: int, mid: bool = False) -> None:
    seq = tags(blocks)
    cols = [t for t in seq if t[1] == "c"]
    assert len(cols) == len(set(cols)), f"a sentence read twice: {seq}"
    if mid:  # each column's first half, the caption, then each column's second half
        assert seq.index("Mi00") == sum(1 for t in seq[: seq.index("Mi00")] if t[1] == "c")
        halves = [cols[: seq.index("Mi00")], cols[seq.index("Mi00") :]]
    else:
        halves = [cols]
    for half in halves:
        assert half == sorted(half), f"columns read out of order: {seq}"
    assert seq[-2:] == ["Zr00", "Zr01"], "the references block comes last"
    for blk in blocks:  # never a line or paragraph holding words of two columns
        assert len({a for a, _n in TAG.findall(blk.text) if a.endswith("c")}) <= 1, blk.text
    letters = {t[0] for t in cols}
    assert len(letters) == ncols


# ---- columns -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw,ncols",
    [
        (dict(), 2),
        (dict(gutter=5.0), 2),  # a gutter narrower than the column gap: lines share baselines 5 pt apart
        (dict(gutter=6.0, size=10.0, font="tiro"), 2),
        (dict(widths=(1, 1, 1), gutter=12.0), 3),  # justified narrow columns: MuPDF splits lines at wide spaces
        (dict(widths=(1, 1, 1), gutter=5.0, font="cour", size=8.0), 3),
        (dict(widths=(2, 1), gutter=14.0), 2),  # unequal columns
        (dict(counts=(12, 4)), 2),  # the right column ends early
        (dict(widths=(3, 1), sizes=(10.0, 7.5), counts=(14, 10)), 2),  # a sidebar in smaller type
        (dict(widths=(1, 3), sizes=(7.5, 10.0), counts=(10, 14)), 2),
    ],
)
def test_columns_read_in_order_and_never_merged(kw, ncols):
    blocks = read(columns_page(**kw)[0])
    assert "Downloaded from" in blocks[0].text, "the stamp crossing the gutter comes first"
    assert_columns_in_order(blocks, ncols)


def test_full_width_caption_between_column_halves():
    blocks = read(columns_page(mid=(380.0, 420.0))[0])
    assert_columns_in_order(blocks, 2, mid=True)


def _frag(x0: float, y: float, x1: float, text: str) -> Line:
    return Line(x0, y, x1, y + 10, text, 10.0, False, False, chars=len(text))


def test_fragments_across_a_narrow_gutter_stay_apart_and_justified_gaps_join():
    rows = []
    for k in range(6):  # two columns 5 pt (0.5 em) apart, every baseline shared
        rows += [_frag(50, 100 + 12 * k, 200, f"left{k}"), _frag(205, 100 + 12 * k, 350, f"right{k}")]
    out = merge_fragments(rows, CFG)
    assert sorted(ln.text for ln in out) == sorted(ln.text for ln in rows)
    # a justified line split at 2 em spaces, inside a paragraph whose other lines run through
    para = [_frag(50, 300 + 12 * k, 350, f"line{k} of prose") for k in range(5)]
    para[2:3] = [_frag(50, 324, 110, "wide"), _frag(130, 324, 200, "spaced"), _frag(220, 324, 350, "words")]
    out = merge_fragments(para, CFG)
    assert "wide spaced words" in [ln.text for ln in out]
    # the same gap with a table's gapped rows around it stays a gap
    table = [ln for k in range(4) for ln in (_frag(50, 400 + 12 * k, 110, f"c{k}"), _frag(130, 400 + 12 * k, 200, f"v{k}"))]
    assert len(merge_fragments(table, CFG)) == 8


def test_an_indented_column_line_never_joins_across_a_gutter():
    """Right column indented by about the gutter's width (a paragraph's first line): the gap on
    that row is gutter + indent, and the other rows' right-column lines start at its middle.
    Those rows only touch the gap; they do not run through it, so it is not a justified word gap."""
    rows = []
    for k in range(6):  # 12 pt gutter between 50..200 and 212..362, every baseline shared
        right_x0 = 224 if k == 3 else 211  # row 3: first line of a paragraph, indented 13 pt
        rows += [_frag(50, 100 + 12 * k, 200, f"left{k}"), _frag(right_x0, 100 + 12 * k, 362, f"right{k}")]
    out = merge_fragments(rows, CFG)
    assert sorted(ln.text for ln in out) == sorted(ln.text for ln in rows)


# ---- rotated pages and text --------------------------------------------------------------


def prose_page(rotate_page: int = 0, rotate_text: int = 0) -> pymupdf.Document:
    """A heading and two paragraphs, drawn with `rotate_text` in a page shown at `rotate_page`."""
    rng = random.Random(3)
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    # the body box keeps clear of the heading in the text's own frame
    body = {0: (72, 130, 540, 720), 90: (110, 72, 540, 720), 180: (72, 72, 540, 680), 270: (72, 72, 500, 720)}
    head = (72, 72, 540, 720)
    page.insert_textbox(head, "A Heading For The Page", fontsize=18, fontname="helv", rotate=rotate_text)
    text = " ".join(sentences("Pa", 6, rng)) + "\n\n" + " ".join(sentences("Pb", 5, rng))
    page.insert_textbox(body[rotate_text], text, fontsize=10, fontname="helv", rotate=rotate_text)
    if rotate_page:
        page.set_rotation(rotate_page)
    return doc


def _content(blocks):
    return [(b.role, b.text) for b in blocks]


@pytest.mark.parametrize("rotate_page,rotate_text", [(90, 0), (180, 0), (270, 0), (0, 90), (0, 180), (0, 270), (90, 270)])
def test_rotated_pages_read_like_the_upright_page(rotate_page, rotate_text):
    upright = read(prose_page()[0])
    assert [b.role for b in upright] == ["heading", "paragraph", "paragraph"]
    doc = prose_page(rotate_page, rotate_text)
    blocks = read(doc[0])
    assert _content(blocks) == _content(upright)
    # boxes are on the page as displayed: the heading lies inside it and along the text's direction
    r = doc[0].rect
    x0, y0, x1, y1 = blocks[0].bbox
    assert r.x0 - 1 <= x0 < x1 <= r.x1 + 1 and r.y0 - 1 <= y0 < y1 <= r.y1 + 1
    displayed_dir = (rotate_text - rotate_page) % 180  # 0: the heading runs across as displayed
    assert (x1 - x0 > y1 - y0) == (displayed_dir == 0)


def test_dominant_angle_follows_most_characters():
    def td(*dirs_chars):
        return {"blocks": [{"type": 0, "lines": [{"dir": d, "spans": [{"text": "x" * n}]} for d, n in dirs_chars]}]}

    assert dominant_angle(td(((1.0, 0.0), 50), ((0.0, -1.0), 40))) == 0
    assert dominant_angle(td(((1.0, 0.0), 5), ((0.0, -1.0), 40))) == 90
    assert dominant_angle(td(((0.0, 1.0), 40))) == 270
    assert dominant_angle(td(((-1.0, 0.0), 40), ((0.7, 0.7), 400))) == 180  # a diagonal watermark never decides
    assert dominant_angle(td()) == 0


def test_edgar_rotated90_reads_like_the_upright_page():
    if not (REAL / "edgar-rotated90.pdf").exists():
        pytest.fail(f"real corpus not found at {REAL} (CI lays shared/ beside the checkout)")
    doc = pymupdf.open(REAL / "edgar-rotated90.pdf")
    blocks = read(doc[0])
    body = [b for b in blocks if b.role not in ("header", "footer", "page_number")]
    assert body[0].role == "heading" and body[0].text.startswith("Edgar, King of England")
    long = [b for b in body if b.role == "paragraph" and len(b.text) > 300]
    assert len(long) >= 3, "the article's paragraphs are multi-line paragraphs"
    assert long[0].text.startswith("Edgar (or Eadgar")
    upright = pymupdf.open(REAL / "edgar.pdf")
    assert [b.text for b in body] == [b.text for b in read(upright[0]) if b.role not in ("header", "footer", "page_number")]


# ---- falling back to MuPDF's own order ---------------------------------------------------


def _seq_line(x0: float, y: float, block: int, rank: int, words: int) -> Line:
    text = " ".join(["word"] * words)
    return Line(x0, y, x0 + 200, y + 10, text, 10.0, False, False, chars=len(text), seq=(block, rank))


def test_an_interleaving_order_falls_back_to_mupdfs_and_a_form_does_not():
    left = [_seq_line(50, 100 + 12 * k, 0, k, 8) for k in range(6)]
    right = [_seq_line(300, 100 + 12 * k, 1, 6 + k, 8) for k in range(6)]
    interleaved = [(ln, ()) for pair in zip(left, right) for ln in pair]
    assert reentries([ln for ln, _k in interleaved], CFG.form_max_words) == 10
    out, n = prefer_native(interleaved, CFG)
    assert n == 10 and [ln for ln, _k in out] == left + right
    # paragraphs break on geometry (the jump back up to the right column), not on MuPDF's blocks
    from pagerouter.textlayer.roles import group_paragraphs

    paras = group_paragraphs(out, 10.0, CFG)
    assert [p.lines for p in paras] == [left, right]
    # the cut's column order re-enters nothing and stays
    columns = [(ln, (0,)) for ln in left] + [(ln, (1,)) for ln in right]
    assert prefer_native(columns, CFG) == (columns, 0)
    # labels and values of a form, read row by row on purpose, never count
    labels = [_seq_line(50, 100 + 12 * k, 0, k, 1) for k in range(6)]
    values = [_seq_line(300, 100 + 12 * k, 1, 6 + k, 2) for k in range(6)]
    form = [(ln, ()) for pair in zip(labels, values) for ln in pair]
    assert prefer_native(form, CFG) == (form, 0)


def test_two_sections_with_different_columns_are_each_read_column_by_column():
    """The top section's gutter is crossed by the lower section's columns, so no gutter runs
    down the page; cutting every row apart would read the top two columns row by row."""
    rng = random.Random(5)
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    a, b = sentences("Ac", 6, rng), sentences("Bc", 6, rng)
    page.insert_textbox((54, 60, 296, 330), " ".join(a), fontsize=9.5, fontname="helv", align=3)
    page.insert_textbox((316, 60, 558, 330), " ".join(b), fontsize=9.5, fontname="helv", align=3)
    x, texts = 54.0, []
    for c in "CDE":
        texts.append(sentences(c + "c", 5, rng))
        page.insert_textbox((x, 360, x + 150, 740), " ".join(texts[-1]), fontsize=9.5, fontname="helv", align=3)
        x += 177
    blocks = read(page)
    seq = [t for t in tags(blocks) if t[1] == "c"]
    assert seq == sorted(seq) and len(seq) == 12 + 15, seq
    for blk in blocks:
        assert len({a for a, _n in TAG.findall(blk.text)}) <= 1, blk.text
