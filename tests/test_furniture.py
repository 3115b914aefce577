"""Page furniture found on one page alone: journal stamps, banners, DOIs, copyright lines,
page numbers; running heads that change every page; a page converted alone. Furniture stays
in the JSON with its role and a Decision naming its cues, and out of the Markdown; titles and
first paragraphs near the page edge stay in the body."""

from __future__ import annotations

import pymupdf
import pytest

from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.render.output import to_markdown
from pagerouter.textlayer.furniture import is_page_number
from pagerouter.textlayer.furniture_cues import content_cues

FURN = ("header", "footer", "page_number")

BODY = [
    "Widget coatings were first studied in the early laboratory trials of the group.",
    "The second sentence reports how the samples were cut and weighed before testing.",
    "A third sentence describes the furnace and the cooling schedule that followed it.",
    "Results show that thicker coatings resisted abrasion for roughly twice as long.",
    "The final sentence of the body closes the argument and points to further work.",
]


def _body(page: pymupdf.Page, y: float, size: float, font: str, lines: list[str], x: float = 56) -> float:
    for t in lines:
        page.insert_text((x, y), t, fontsize=size, fontname=font)
        y += size * 1.35
    return y


def _convert(doc: pymupdf.Document, tmp_path, pages: str | None = None):
    path = tmp_path / "in.pdf"
    doc.save(path)
    out = Converter(PagerouterConfig()).convert(str(path), pages=pages)
    return out, to_markdown(out)


def _journal_page(doc, font: str, body_size: float, w: float, h: float, title: str, number: str) -> dict[str, str]:
    """One journal page; returns furniture text -> expected role."""
    page = doc.new_page(width=w, height=h)
    small = body_size * 0.75
    furn = {
        "Downloaded from https://widgets.example.org/ on 12 March 2024 by guest": "header",
        "Journal of Applied Widgets | www.jaw.example.org | Volume 8 | Issue 3 | e2748": "header",
        "doi:10.5555/jaw.2024.00042": "header",
        "© 2024 The Authors. Published by Widget Press. All rights reserved.": "footer",
        number: "page_number",
    }
    keys = list(furn)
    page.insert_text((40, 18), keys[0], fontsize=small * 0.9, fontname=font)
    page.insert_text((56, 44), keys[1], fontsize=small, fontname=font)
    page.insert_text((56, 44 + small * 1.3), keys[2], fontsize=small, fontname=font)
    page.insert_text((56, 112), title, fontsize=body_size * 1.8, fontname=font)
    y = _body(page, 150, body_size, font, BODY)
    _body(page, y + body_size, body_size, font, [s.replace("sentence", "line") for s in BODY])
    page.insert_text((56, h - 40), keys[3], fontsize=small, fontname=font)
    page.insert_text((w / 2 - 5, h - 22), number, fontsize=body_size, fontname=font)
    return furn


@pytest.mark.parametrize("font,size,w,h", [("helv", 10, 595, 842), ("tiro", 11, 612, 792)])
def test_single_page_journal_furniture(tmp_path, font, size, w, h):
    d = pymupdf.open()
    title = "Abrasion Resistance of Layered Widget Coatings"
    furn = _journal_page(d, font, size, w, h, title, "7")
    out, md = _convert(d, tmp_path)
    blocks = out.pages[0].blocks
    for text, role in furn.items():
        hits = [b for b in blocks if b.text == text]
        assert [b.role for b in hits] == [role], (text, [(b.text, b.role) for b in blocks])
        assert hits[0].furniture is not None and hits[0].furniture.scores["furniture"] > 0
        assert text not in md
    why = {b.text: " ".join(b.furniture.reasons) for b in blocks if b.role in FURN}
    assert "download_stamp" in why[next(t for t in furn if t.startswith("Downloaded"))]
    assert "doi" in why["doi:10.5555/jaw.2024.00042"]
    assert "copyright" in why[next(t for t in furn if t.startswith("©"))]
    assert "page-number" in why["7"]
    # the title and every body sentence are in the Markdown, in order
    pos = [md.find(title)] + [md.find(s) for s in BODY]
    assert all(p >= 0 for p in pos) and pos == sorted(pos), md


def test_header_changing_every_page(tmp_path):
    d = pymupdf.open()
    heads = ["Smith and Jones: Layered Coatings", "Abrasion under Load", "Notes on Furnace Cooling"]
    for i, head in enumerate(heads):
        page = d.new_page(width=595, height=842)
        x = 56 if i % 2 == 0 else 300  # left on even pages, right on odd ones
        page.insert_text((x, 40), head, fontsize=8, fontname="times-italic")
        _body(page, 90, 10, "tiro", [f"{s} (page {i + 1})" for s in BODY] * 3)
    out, md = _convert(d, tmp_path)
    for i, head in enumerate(heads):
        roles = [b.role for b in out.pages[i].blocks if b.text == head]
        assert roles == ["header"], [(b.text, b.role) for b in out.pages[i].blocks]
        assert head not in md
    assert md.find(f"{BODY[0]} (page 1)") < md.find(f"{BODY[0]} (page 3)")


def test_page_converted_alone_uses_neighbours(tmp_path):
    # a body-size running head with no content cue, a modest gap: only repetition tells
    d = pymupdf.open()
    for i in range(6):
        page = d.new_page(width=595, height=842)
        page.insert_text((56, 66), "Quarterly Operations Review", fontsize=10, fontname="helv")
        _body(page, 86, 10, "helv", [f"{s} [{i}]" for s in BODY] * 3)
    out, md = _convert(d, tmp_path, pages="4")
    assert [p.number for p in out.pages] == [4]
    heads = [b for b in out.pages[0].blocks if b.text == "Quarterly Operations Review"]
    assert [b.role for b in heads] == ["header"]
    assert heads[0].furniture.scores.get("repeated") == 1.0
    assert "Quarterly Operations Review" not in md and f"{BODY[0]} [3]" in md


def test_first_paragraph_and_title_near_the_top_stay_in_body(tmp_path):
    d = pymupdf.open()
    page = d.new_page(width=595, height=842)
    # an ordinary paragraph starting at the very top, with a date and a volume-like phrase in it
    first = [
        "On 3 March 2024 the board met and approved vol. 2 of the plan in full, after a",
        "long discussion of costs, schedules and the staffing that the plan will need.",
    ]
    y = _body(page, 30, 10, "helv", first)
    _body(page, y + 12, 10, "helv", BODY)
    page2 = d.new_page(width=595, height=842)
    page2.insert_text((56, 50), "Coatings Annual 2024", fontsize=22, fontname="hebo")
    _body(page2, 84, 10, "helv", BODY)
    page2.insert_text((56, 810), "1Footnote: samples were supplied by the Widget Society.", fontsize=7,
                      fontname="helv")
    out, md = _convert(d, tmp_path)
    assert not [b.text for p in out.pages for b in p.blocks if b.role in FURN]
    assert md.find(first[0][:40]) < md.find(BODY[0]) and "Coatings Annual 2024" in md
    assert "Footnote: samples" in md


@pytest.mark.parametrize("font,small", [("helv", 7.5), ("tiro", 8.0)])
def test_letterhead_stack_is_one_furniture_block(tmp_path, font, small):
    """A letterhead: the address line has no cue of its own, but it is set tight in the same small
    type against the contact line that has one (an email): the whole stack is furniture."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((50, 50), "Northwind Widget Works Ltd", fontsize=15, fontname="hebo")
    page.insert_text((50, 64), "12 Harbour Lane, Eastport EP4 7QT", fontsize=small, fontname=font)
    page.insert_text((50, 64 + small * 1.3), "Tel +44 20 7946 0000 | office@northwind.example", fontsize=small, fontname=font)
    page.insert_text((50, 100), "Quarterly Widget Report", fontsize=16, fontname="hebo")  # close below
    _body(page, 128, 10, font, BODY, x=50)
    out, md = _convert(doc, tmp_path)
    roles = {b.text: b for b in out.pages[0].blocks}
    for t in ("12 Harbour Lane, Eastport EP4 7QT", "Tel +44 20 7946 0000 | office@northwind.example"):
        assert t not in md
        assert roles[t].role == "header" and roles[t].furniture is not None
    assert any("same small type" in r for r in roles["12 Harbour Lane, Eastport EP4 7QT"].furniture.reasons)
    assert "Quarterly Widget Report" in md
    assert md.index(BODY[0][:40]) < md.index(BODY[-1][:40])


def test_cues_and_page_number_patterns():
    assert {"download_stamp", "date", "url"} <= set(content_cues("Downloaded from http://x.example.org/ on July 12, 2017"))
    assert "volume_issue" in content_cues("Proc. R. Soc. Lond. B (2004) 271, 147–152")
    assert "document_number" in content_cues("Doc No. 123-456  Rev. C")
    assert "copyright" in content_cues("This journal is © The Royal Society of Chemistry 2016")
    assert not content_cues("The results in Table 2 show that Rev. Mod. Phys. was right")
    assert all(is_page_number(t) for t in ["7", "- 7 -", "Page 3 of 10", "iv", "Page ii of iv", "12 / 30"])
    assert not any(is_page_number(t) for t in ["L", "C", "M", "Chapter 3", "2024 Report"])


def test_ocr_page_furniture(tmp_path):
    src = pymupdf.open()
    page = src.new_page(width=595, height=842)
    page.insert_text((56, 36), "Downloaded from www.widgets.example.org on 12 March 2024", fontsize=9)
    y = _body(page, 110, 12, "helv", BODY[:3])
    page.insert_text((56, 806), "Copyright 2024 Widget Press. All rights reserved.", fontsize=9)
    pix = page.get_pixmap(dpi=150)
    img = pymupdf.open()
    p2 = img.new_page(width=595, height=842)
    p2.insert_image(p2.rect, pixmap=pix)
    out, md = _convert(img, tmp_path)
    assert out.pages[0].route == "ocr"
    furn = {b.text: b for b in out.pages[0].blocks if b.role in FURN}
    stamp = next(b for t, b in furn.items() if t.startswith("Downloaded"))
    assert stamp.role == "header" and "download_stamp" in " ".join(stamp.furniture.reasons)
    assert any(b.role == "footer" and "rights reserved" in t for t, b in furn.items())
    assert "Downloaded" not in md and "rights reserved" not in md
    assert "Widget coatings were first studied" in md
