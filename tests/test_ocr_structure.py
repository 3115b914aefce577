"""Structure on the OCR route: column gutters, table cells and script marks on scans.

Geometry tests run on made-up OCR lines (no engine); the end-to-end ones render generated
born-digital pages (`benchmarks/quality_cases_scans.py`) to image-only PDFs and read them with
the real CPU OCR path (RapidOCR, rapid-layout, rapid-table), so they are marked slow.
"""

from __future__ import annotations

import random
import sys
import zlib
from pathlib import Path

import pymupdf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from pagerouter.ocr.lines import OcrLine  # noqa: E402


def split_at_gutters(*a, **kw):
    from pagerouter.ocr.lines import split_at_gutters as split  # imported per test: the scan tests run without it

    return split(*a, **kw)


def _worded_line(words: list[str], x: float, y: float, gaps: list[float], h: float = 28.0, cw: float = 9.0) -> OcrLine:
    """A detector line holding `words` from x, word k followed by gaps[k] pixels of white
    (word positions as the reader gives them: `extra["word_x"]`)."""
    spans, cur = [], x
    for w, g in zip(words, gaps + [0.0]):
        spans.append((cur, cur + cw * len(w)))
        cur += cw * len(w) + g
    return OcrLine((x, y, spans[-1][1], y + h), " ".join(words), 0.9, extra={"word_x": spans})


def _rng_words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 8))) for _ in range(n)]


def _justified(words: list[str], x0: float, x1: float, cw: float = 9.0) -> list[tuple[float, float]]:
    """Word spans of a justified line from x0 to x1 (the spaces stretched to fill it)."""
    gap = (x1 - x0 - cw * sum(len(w) for w in words)) / (len(words) - 1)
    spans, cur = [], x0
    for w in words:
        spans.append((cur, cur + cw * len(w)))
        cur += cw * len(w) + gap
    return spans


def test_lines_bridging_a_gutter_are_cut_at_it():
    """Two justified columns (gutter 18 px, about a line height's 0.6) whose every row the
    detector read as one line: each row comes back as its left and right column pieces, words
    in order, cut at the gutter."""
    rng = random.Random(3)
    left, mid, right, gutter = 100.0, 520.0, 960.0, 18.0
    lines, truth = [], []
    for r in range(14):
        a, b = _rng_words(rng, rng.randint(5, 8)), _rng_words(rng, rng.randint(5, 8))
        spans = _justified(a, left, mid) + _justified(b, mid + gutter, right)
        lines.append(OcrLine((left, 100 + r * 36, right, 128 + r * 36), " ".join(a + b), 0.9, extra={"word_x": spans}))
        truth.append((" ".join(a), " ".join(b)))
    got = split_at_gutters(lines, min_rows=5, min_width=0.3)
    assert [(got[2 * i].text, got[2 * i + 1].text) for i in range(len(lines))] == truth
    assert all(got[2 * i].bbox[2] <= mid + 1 and got[2 * i + 1].bbox[0] >= mid + gutter - 1 for i in range(len(lines)))


def test_one_column_of_justified_text_is_never_cut():
    """Wide word spaces at random places (justified text, one column) are not a gutter."""
    rng = random.Random(5)
    lines = []
    for r in range(40):
        words = _rng_words(rng, rng.randint(6, 11))
        lines.append(_worded_line(words, 100, 100 + r * 36, [rng.uniform(8, 16) for _ in words[:-1]]))
    got = split_at_gutters(lines, min_rows=5, min_width=0.3)
    assert [ln.text for ln in got] == [ln.text for ln in lines]


def test_lines_without_word_positions_are_kept_whole():
    lines = [OcrLine((100, 100 + 36 * r, 900, 128 + 36 * r), f"row {r} left words  right words", 0.9) for r in range(10)]
    assert split_at_gutters(lines, min_rows=5, min_width=0.3) == lines


# ---------------------------------------------------------------------- end to end on scans
VARIANTS = range(12)  # every variant `bench_quality.py` runs of a kind (its --variants default, seed 7)


def _case(builder, kind: str, v: int, seed: int = 7):
    return builder(random.Random(zlib.crc32(f"{seed}:{kind}:{v}".encode())), v)


@pytest.fixture(scope="module")
def converter():
    from pagerouter.config import PagerouterConfig
    from pagerouter.convert.converter import Converter

    cfg = PagerouterConfig()
    cfg.ocr.escalation.enabled = False  # the small reader's own structure is under test
    return Converter(cfg)


def _markdown(converter, pdf: bytes, tmp_path: Path, name: str) -> tuple[str, object]:
    from pagerouter.render.output import to_markdown

    path = tmp_path / f"{name}.pdf"
    path.write_bytes(pdf)
    doc = converter.convert(path)
    assert all(p.route == "ocr" for p in doc.pages), [p.route for p in doc.pages]
    return to_markdown(doc), doc


@pytest.mark.slow
# every variant but 0: the generator drew no column-mixing check for variant 0 (its five checks are
# all order checks), so it has nothing to assert here; `assert mixing` below catches a variant that
# stops drawing them
@pytest.mark.parametrize("v", [v for v in VARIANTS if v != 0])
def test_two_column_scan_keeps_its_columns_apart(converter, tmp_path, v):
    """Justified columns with a 10-18 pt gutter, scanned: no output line joins the end of a
    column-1 line to the start of the column-2 line beside it (the detector's lines across the
    gutter are cut there); all 11 variants that draw such checks pass. Block order across layout
    regions is a separate, open problem: the page's order checks (the bench's scan_columns kind
    fails 15 of its 99 checks, all of them order checks, in 9 of the 12 variants) are not asserted
    here."""
    from quality_cases_scans import scan_columns_case
    from quality_checks import run_check

    case = _case(scan_columns_case, "scan_columns", v)
    md, _doc = _markdown(converter, case.pdf, tmp_path, case.name)
    mixing = [c for c in case.checks if c.type == "absent"]
    assert mixing, case.name
    assert [c.text for c in mixing if not run_check(c, md)[0]] == []


# Variants of the bench's scan_marks kind that fail today (measured with escalation off: 7 of the 12
# pages pass; 32 of their 36 `sup` checks pass).
MARKS_FAILING = {
    2: "10^3 is not marked, and '10' itself comes out as 1<sup>0</sup> (a stray mark)",
    3: "lighthouses^6 is not marked (no <sup> on the page at all)",
    6: "lighthouses^7 is not marked (no <sup> on the page at all)",
    8: "viaducts^1 is not marked",
    9: "RapidOCR reads the marks as Unicode superscripts (cm³, spring⁸, reefs²): the bench's sup checks "
       "accept that, but no <sup> markup comes out",
}


@pytest.mark.slow
@pytest.mark.parametrize("v", [
    pytest.param(v, marks=pytest.mark.xfail(strict=True, reason=MARKS_FAILING[v])) if v in MARKS_FAILING else v
    for v in VARIANTS])
def test_raised_marks_on_a_scan_stay_superscripts(converter, tmp_path, v):
    """A small raised digit after a word (a footnote number, an exponent) comes out as
    `<sup>` as on the text-layer route; no other digit of the page is marked."""
    import re

    from quality_cases_scans import scan_marks_case
    from quality_checks import run_check

    case = _case(scan_marks_case, "scan_marks", v)
    md, _doc = _markdown(converter, case.pdf, tmp_path, case.name)
    sups = [c for c in case.checks if c.type == "sup"]
    failed = [(c.base, c.mark, why) for c in sups for ok, why in [run_check(c, md)] if not ok]
    assert not failed, failed
    marked = re.findall(r"(\S+?)<(sup|sub)>(.*?)</\2>", md)
    truth = {(c.base, c.mark) for c in case.checks}
    assert marked and all((base.split(">")[-1], mark) in truth for base, _k, mark in marked), marked


@pytest.mark.slow
def test_percentages_on_a_scanned_real_page_are_not_cut_into_superscripts(converter, tmp_path):
    """A real IRS notice (camelot's us-007.pdf, benchmarks/real_pages), rendered at 200 dpi as
    a scan. The page has no superscript, and its rates read as printed: the reader's character
    positions are approximate, and a digit before "%" took the upper ring of the "%" as its
    glyph (small, raised), so "1.45%" came out as "1.4<sup>5</sup>%" and "4.2%" as
    "4.<sup>2</sup>%". Fraction digits of a decimal number and a digit before "%" are no marks."""
    import re

    src = pymupdf.open(Path(__file__).resolve().parent.parent / "benchmarks/real_pages/pdfs/us-007.pdf")[0]
    img = pymupdf.open()
    img.new_page(width=src.rect.width, height=src.rect.height).insert_image(src.rect, pixmap=src.get_pixmap(dpi=200))
    md, _doc = _markdown(converter, img.tobytes(), tmp_path, "us-007-scan")
    assert re.findall(r"<su[pb]>", md) == [], re.findall(r".{12}<su[pb]>.{8}", md)
    printed = re.findall(r"\d+\.\d+%", src.get_text())  # the rates as the text layer holds them
    read = re.findall(r"\d+\.\d+%", md)
    assert sorted(printed) == sorted(read) and "1.45%" in read, (printed, read)


@pytest.mark.slow
def test_paragraphs_on_a_clip_of_a_scanned_page_are_not_headings(converter, tmp_path):
    """Three paragraphs of body text clipped from the same real notice and scanned: the layout
    model boxes two of them as titles (nothing larger on the clip sets them apart), and they
    were written as 40-word `#` headings. A "title" of three rows or more and twenty words or
    more, set no larger than the page's text, is a paragraph; the text is read all the same."""
    import difflib
    import re

    src = pymupdf.open(Path(__file__).resolve().parent.parent / "benchmarks/real_pages/pdfs/us-007.pdf")[0]
    clip = pymupdf.Rect(40, 315, 300, 445)
    img = pymupdf.open()
    img.new_page(width=clip.width, height=clip.height).insert_image(
        pymupdf.Rect(0, 0, clip.width, clip.height), pixmap=src.get_pixmap(dpi=200, clip=clip))
    md, doc = _markdown(converter, img.tobytes(), tmp_path, "us-007-clip")
    assert [b.role for b in doc.pages[0].blocks if b.role == "heading"] == []
    truth = " ".join(src.get_text(clip=clip).split())
    read = " ".join(re.sub(r"[#*]", "", md).split())
    assert difflib.SequenceMatcher(None, truth, read).ratio() > 0.97, (truth, read)


@pytest.mark.slow
def test_two_column_label_value_tables_on_a_scanned_real_page_keep_their_rows(converter, tmp_path):
    """A real survey appendix (camelot's us-033.pdf p2: two Courier tables of an age group
    beside its proportion), scanned at 200 dpi. The OCR route looks for two-column label/amount
    tables as the text layer does (`tables_label_value`), through the same cell builder: both
    tables come out with every body row's cells as the truth file has them (they were loose
    lines: a column of age groups, then one line of all the proportions). The header rows
    ("Age Group", "Proportion"), set a blank line above, are not taken in on this route yet."""
    import json

    here = Path(__file__).resolve().parent.parent / "benchmarks/real_pages"
    truth = json.loads((here / "truth/us-033_p2.json").read_text())
    src = pymupdf.open(here / "pdfs/us-033.pdf")[1]
    img = pymupdf.open()
    img.new_page(width=src.rect.width, height=src.rect.height).insert_image(src.rect, pixmap=src.get_pixmap(dpi=200))
    _md, doc = _markdown(converter, img.tobytes(), tmp_path, "us-033-scan")
    got = [[[c.strip() for c in row] for row in b.cells] for b in doc.pages[0].blocks if b.role == "table" and b.cells]
    want = [t["rows"][1:] for t in truth["tables"]]
    assert [[row for row in t if row not in (["Age Group", "Proportion"],)] for t in got] == want, got
