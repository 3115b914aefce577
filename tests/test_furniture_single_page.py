"""Furniture on a page that has no neighbours to repeat it (issue 22): a one-page document, the
first page of a short one. Running heads (author names, a short title), folios run into a head
("12 | Short Title"), reference numbers and preprint stamps leave the Markdown but stay in the
JSON with their role and the reason; every body line stays, including what looks like furniture
and is not: a title, a letter's sender block, greeting and signature, a dated last line, footnotes
with an email or a link, a short last line deep in the bottom band."""

from __future__ import annotations

import random
import sys
import zlib
from pathlib import Path

import pymupdf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from quality_cases_furniture import furniture1_case  # noqa: E402
from quality_checks import run_check  # noqa: E402

from pagerouter.config import PagerouterConfig  # noqa: E402
from pagerouter.convert.converter import Converter  # noqa: E402
from pagerouter.render.output import to_markdown  # noqa: E402

FURN = ("header", "footer", "page_number")
BODY = [
    "Salt was carried inland along the old drove roads every autumn.",
    "The carters rested at the ford, where the river widened over gravel.",
    "Tolls collected at the bridge paid for the new stone arches in spring.",
    "Merchants from the coast sold dried fish and bought wool and hides.",
    "By the end of the century the railway had taken most of the trade.",
    "Only the inn at the ford still keeps the ledgers of those journeys.",
]


@pytest.fixture(scope="module")
def conv():
    return Converter(PagerouterConfig())


def _read(conv, doc: pymupdf.Document):
    out = conv.convert(doc.tobytes(), name="page.pdf")
    return out, to_markdown(out)


def _body(page, y: float, lines: list[str], size: float = 10, font: str = "tiro", x: float = 60) -> float:
    for t in lines:
        page.insert_text((x, y), t, fontsize=size, fontname=font)
        y += size * 1.3
    return y


def _furniture_block(out, text: str):
    hits = [b for p in out.pages for b in p.blocks if b.text == text]
    assert len(hits) == 1, (text, [(b.text, b.role) for p in out.pages for b in p.blocks])
    return hits[0]


def _assert_body_kept(md: str, lines: list[str]) -> None:
    missing = [t for t in lines if t not in md]
    assert not missing, (missing, md)
    pos = [md.index(t) for t in lines]
    assert pos == sorted(pos), md


@pytest.mark.parametrize("head,font", [("Okafor et al.", "tiit"), ("A. Mendes and R. Lindqvist", "helv"),
                                       ("THE SALT ROADS OF THE NORTH", "tiro")])
def test_running_head_alone_on_a_single_page_is_furniture(conv, head, font):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    w = pymupdf.get_text_length(head, fontname=font, fontsize=8)
    page.insert_text(((595 - w) / 2, 38), head, fontsize=8, fontname=font)
    _body(page, 76, BODY * 4)
    page.insert_text((290, 806), "- 47 -", fontsize=9, fontname="tiro")
    out, md = _read(conv, doc)
    block = _furniture_block(out, head)
    assert block.role == "header" and "running head" in " ".join(block.furniture.reasons)
    assert _furniture_block(out, "- 47 -").role == "page_number"
    assert head not in md and "47" not in md
    _assert_body_kept(md, BODY)


def test_folio_run_into_a_short_title_and_reference_number(conv):
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((60, 36), "112 | Northern Trade Studies", fontsize=8, fontname="helv")
    page.insert_text((420, 36), "Ref. D309/89", fontsize=8, fontname="helv")
    _body(page, 74, BODY * 3, font="helv")
    page.insert_text((60, 770), "Northern Trade Studies | 113", fontsize=8, fontname="helv")
    out, md = _read(conv, doc)
    reasons = {}
    for text in ("112 | Northern Trade Studies", "Ref. D309/89", "Northern Trade Studies | 113"):
        block = _furniture_block(out, text)
        assert block.role in ("header", "footer") and block.furniture.reasons, (text, block.role)
        reasons[text] = " ".join(block.furniture.reasons)
        assert text not in md
    assert "folio_run" in reasons["112 | Northern Trade Studies"]
    assert "document_number" in reasons["Ref. D309/89"]
    _assert_body_kept(md, BODY)


def test_preprint_stamp_up_the_margin(conv):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    stamp = "arXiv:2103.04567v2 [physics.geo-ph] 12 Mar 2021"
    page.insert_text((24, 600), stamp, fontsize=10, rotate=90, fontname="helv")
    page.insert_text((60, 90), "The Salt Roads of the North", fontsize=18, fontname="tibo")
    _body(page, 130, BODY * 3)
    out, md = _read(conv, doc)
    block = _furniture_block(out, stamp)
    assert block.role in ("header", "footer") and "published" in " ".join(block.furniture.reasons)
    assert "arXiv" not in md and "The Salt Roads of the North" in md
    _assert_body_kept(md, BODY)


def _right(page, text: str, x1: float, y: float, size: float = 9, font: str = "helv") -> None:
    page.insert_text((x1 - pymupdf.get_text_length(text, fontname=font, fontsize=size), y), text, fontsize=size,
                     fontname=font)


@pytest.mark.parametrize("folio", [True, False])
def test_head_flush_with_a_right_folio_and_a_dated_footer_row(conv, folio):
    """A report's page alone: a company name at the top right ending on the folio's right edge at the
    foot, and a footer row (the guide's title left, its date right) above the folio. With the folio
    both are furniture by their page; without it nothing says so and both stay, as a letter's
    right-set name and a dated last line do."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    _right(page, "Harbour Survey Trust", 540, 40, size=10)
    page.insert_text((72, 110), "Annual figures of the ferry crossings", fontsize=13, fontname="hebo")
    _body(page, 140, BODY * 3, font="helv")
    page.insert_text((72, 742), "Guide to the Crossings", fontsize=8, fontname="heit")
    _right(page, "June 2011", 508, 742, size=8, font="heit")
    if folio:
        _right(page, "7", 540, 770, size=10)
    out, md = _read(conv, doc)
    furn = {t: _furniture_block(out, t) for t in ("Harbour Survey Trust", "Guide to the Crossings", "June 2011")}
    if folio:
        assert {t: b.role for t, b in furn.items()} == {"Harbour Survey Trust": "header",
                                                        "Guide to the Crossings": "footer", "June 2011": "footer"}
        assert furn["Harbour Survey Trust"].furniture.scores.get("cue_flush_with_page_number") == 0.8
        assert "a dated line in the band that holds the page number" in furn["June 2011"].furniture.reasons
        assert not any(t in md for t in furn)
    else:
        assert all(t in md for t in furn), md
    assert "Annual figures of the ferry crossings" in md
    _assert_body_kept(md, BODY)


def test_right_set_date_and_left_heading_on_the_folio_edge_stay(conv):
    """What shares the folio's edge and is no head: a letter's date set right on the folio's right
    edge, and a section heading starting at the left margin over a folio at the left."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    _right(page, "4 May 2024", 540, 40, size=10)
    page.insert_text((72, 66), "Crossings by month", fontsize=10, fontname="helv")
    _body(page, 110, BODY * 3, x=72, font="helv")
    page.insert_text((72, 770), "7", fontsize=10, fontname="helv")
    _right(page, "12", 540, 770, size=10)
    out, md = _read(conv, doc)
    assert "4 May 2024" in md and "Crossings by month" in md
    _assert_body_kept(md, BODY)


def test_ocr_blocks_dated_footer_beside_the_folio():
    """The OCR route judges blocks with the same rule: a dated block in the folio's band is the footer;
    in a band without a folio, or written as a sentence, it stays text."""
    from pagerouter.config.textlayer import TextLayerConfig
    from pagerouter.textlayer.furniture import classify_blocks
    from pagerouter.textlayer.furniture_cues import Box

    body = [Box(72, 120 + 14 * k, 540, 130 + 14 * k, text=t, size=10) for k, t in enumerate(BODY * 3)]
    for text, folio, want in [("June 2011", True, "footer"), ("June 2011", False, "text"),
                              ("Approved at Bergen on 16 March 2020.", True, "text")]:  # a dated sentence
        date = Box(468 if len(text) < 12 else 72, 732, 508, 742, text=text, size=8)
        items = [*body, date] + ([Box(302, 768, 310, 778, text="26", size=8)] if folio else [])
        kinds = ["text"] * len(items)
        got = classify_blocks(items, kinds, 792, 10, 0.11, 160, TextLayerConfig())
        role = got.get(len(body), ("text", None))[0]
        assert role == want, (text, folio, got)


@pytest.mark.parametrize("small", [7.5, 8.5])
def test_letter_keeps_sender_greeting_and_signature_and_drops_its_footer(conv, small):
    """A letter's bottom band holds its closing and signature (text) and, well apart in small type,
    the company's registration line (furniture); its top holds the sender's block in small type."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    sender = ["R. Lindqvist", "Ferry House", "Harbour Road, Bergen"]
    page.insert_text((60, 52), "Bergen Survey Ltd", fontsize=16, fontname="hebo")
    for k, t in enumerate(sender):
        page.insert_text((420, 34 + k * small * 1.25), t, fontsize=small, fontname="helv")
    page.insert_text((460, 110), "4 May 2024", fontsize=10.5, fontname="helv")
    greeting = "Dear Dr Okafor,"
    page.insert_text((60, 140), greeting, fontsize=10.5, fontname="helv")
    _body(page, 166, BODY * 2, size=10.5, font="helv")
    closing = ["Yours sincerely,", "A. Brandt", "Chief Surveyor"]
    for k, t in enumerate(closing):
        page.insert_text((60, 768 + k * 13), t, fontsize=10.5, fontname="helv")  # all in the bottom band
    footer = "Registered in England and Wales No. 04512345 · VAT 123 4567 89"
    page.insert_text((60, 818), footer, fontsize=small, fontname="helv")
    out, md = _read(conv, doc)
    for t in ["Bergen Survey Ltd", *sender, "4 May 2024", greeting, *closing]:
        assert t in md, (t, md)
    block = _furniture_block(out, footer)
    assert block.role == "footer" and "content cues" in " ".join(block.furniture.reasons)
    assert "Registered in England" not in md
    _assert_body_kept(md, BODY)


def test_footnotes_with_a_link_stay_even_where_they_repeat_their_place(conv):
    """Footnotes in small type at the same place on every page of a short article, one with an
    email and a mark the text layer set apart ("1 Corresponding ..."): text, not a running slot."""
    doc = pymupdf.open()
    notes = ["1 Corresponding author: okafor@saltroads.example.edu",
             "2 The ledgers are kept at the inn at the ford and were read in 2019.",
             "3 See https://archive.saltroads.example.org/ledgers for the scans."]
    for i, note in enumerate(notes):
        page = doc.new_page(width=595, height=842)
        page.insert_text((60, 36), "Okafor et al." if i else "Journal of Northern Trade, Vol. 3, No. 2",
                         fontsize=8, fontname="tiit")
        _body(page, 76, [f"{s} ({i + 1})" for s in BODY] * 3)
        page.draw_line((60, 750), (160, 750), width=0.4)
        mark, text = note.split(" ", 1)
        page.insert_text((60, 762), mark, fontsize=5.5, fontname="tiro")
        page.insert_text((64, 765), text, fontsize=8, fontname="tiro")
        page.insert_text((290, 812), str(31 + i), fontsize=9, fontname="tiro")
    out, md = _read(conv, doc)
    for note in notes:
        text = note.split(" ", 1)[1]
        assert text in md, (text, md)
        roles = [b.role for p in out.pages for b in p.blocks if text in b.text]
        assert roles and not set(roles) & set(FURN), (text, roles)
    assert "Okafor et al." not in md and "Journal of Northern Trade" not in md


def test_running_head_form():
    from pagerouter.textlayer.furniture_cues import running_head_form

    assert running_head_form("Okafor et al.", 10) == "author"
    assert running_head_form("A. Okafor and B. Mendes", 10) == "author"
    assert running_head_form("Chapter 8. The Salt Roads", 10) == "title"
    assert running_head_form("PREFACE", 10) == "title"
    for t in ("Dear Dr Okafor,", "Yours sincerely,", "12 Harbour Road", "Notes", "The results were clear.",
              "4 May 2024", "Figure 3"):
        assert running_head_form(t, 10) is None, t


@pytest.mark.parametrize("seed", [7, 23])
def test_generated_single_and_first_pages(conv, seed):
    """The bench's furniture1 kind, twelve variants (every layout, the first four twice) as
    `bench_quality.py` runs it: every furniture line is out of the Markdown (measured: 32 of 32 at
    seed 7, 31 of 31 at seed 23; the commit that added the kind claims 100%), each one in the JSON
    with a role and a reason; no body line lost."""
    absent, missed = 0, []
    for v in range(12):
        case = furniture1_case(random.Random(zlib.crc32(f"{seed}:furniture1:{v}".encode())), v)
        out = conv.convert(case.pdf, name=f"{case.name}.pdf")
        md = to_markdown(out)
        blocks = [b for p in out.pages for b in p.blocks]
        for chk in case.checks:
            ok, why = run_check(chk, md)
            if chk.type == "present":
                assert ok, (case.name, why)
                continue
            absent += 1
            if not ok:
                missed.append((case.name, chk.text, why))
                continue
            # out of the Markdown because it is furniture, not because it was lost
            hits = [b for b in blocks if chk.text in b.text] or [b for b in blocks if b.text and b.text in chk.text]
            assert hits and all(b.role in FURN and b.furniture and b.furniture.reasons for b in hits), \
                (case.name, chk.text, [(b.text, b.role) for b in hits])
    assert absent >= 30 and missed == [], (absent, missed)
