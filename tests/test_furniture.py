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
    # a report number alone on its line, digits first; a date or a phone number is none
    assert "report_number" in content_cues("10-P-0154")
    assert not {"report_number", "form_code"} & set(content_cues("2011-12-05"))
    assert not {"report_number", "form_code"} & set(content_cues("555-123-4567"))
    assert "report_number" not in content_cues("See report 10-P-0154 for the sources")
    # a footer row written as one line, the folio between its parts; words around a number are none
    assert "spread_folio" in content_cues("NNMB      75      Rural-Third Repeat Survey 2011-12")
    assert "spread_folio" not in content_cues("In 75 of the 90 villages surveyed")
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


def test_line_numbers_are_no_page_numbers_and_keep_their_lines_in_the_body(tmp_path):
    """A transcript numbers its lines 1..25 down the margin: "1" beside the first line in the top
    band is a line number, so that line ("IN THE SUPREME COURT ...") is not joined to a running
    head as the page number's row mate; the folio at the foot is still the page number."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((230, 45), "Official - Subject to Final Review", fontsize=10, fontname="tiro")
    lines = ["IN THE SUPREME COURT OF THE UNITED STATES"] + [
        f"{BODY[k % len(BODY)][:52]}" for k in range(1, 25)]
    for k, text in enumerate(lines):
        y = 76 + k * 24.5
        page.insert_text((76, y), str(k + 1), fontsize=12, fontname="cour")
        page.insert_text((110, y), text, fontsize=12, fontname="cour")
    page.insert_text((302, 735), "1", fontsize=10, fontname="tiro")
    out, md = _convert(doc, tmp_path)
    court = [b for b in out.pages[0].blocks if "IN THE SUPREME COURT OF THE UNITED STATES" in b.text]
    assert court and all(b.role not in FURN for b in court), [(b.text, b.role) for b in out.pages[0].blocks]
    assert "IN THE SUPREME COURT OF THE UNITED STATES" in md
    assert [b.role for b in out.pages[0].blocks if b.text.strip() == "1"] == ["page_number"]


def test_a_tables_unit_line_repeated_under_its_title_stays_with_the_table(tmp_path):
    """A statistical annex repeats "[In thousands]" under each page's table title, where a
    running head stands: it says how to read the numbers and stays; the running foot repeated
    at the same pages' feet leaves the body."""
    doc = pymupdf.open()
    for n in range(1, 5):
        page = doc.new_page(width=612, height=792)
        page.insert_text((43, 46), f"Table {n}. Enrollment in grades {n} to {n + 8}, by control of school", fontsize=9,
                         fontname="hebo")
        page.insert_text((281, 68), "[In thousands]", fontsize=9, fontname="helv")
        for r in range(30):
            y = 110 + r * 11
            page.insert_text((43, y), str(1990 + r), fontsize=9, fontname="helv")
            for c in range(4):
                page.insert_text((140 + c * 90, y), f"{(r * 37 + c * 11 + n) % 90 + 10},{r:03d}", fontsize=9,
                                 fontname="helv")
        page.insert_text((366, 764), f"Projections of Education Statistics   {30 + n}", fontsize=9, fontname="helv")
    out, md = _convert(doc, tmp_path)
    for p in out.pages:
        unit = [b for b in p.blocks if "[In thousands]" in b.text]
        assert unit and all(b.role not in FURN for b in unit), [(b.text, b.role) for b in p.blocks]
        foot = [b for b in p.blocks if b.text.startswith("Projections of Education")]
        assert foot and foot[0].role == "footer"
    assert md.count("[In thousands]") == 4 and "Projections of Education" not in md


def test_a_caption_whose_last_line_is_a_year_in_the_top_band_stays_a_caption(tmp_path):
    """A figure caption at the top of a column wraps its last word "2007" onto a line of its own:
    that number ends the caption, it is no page number, and the caption's other lines are not
    joined to the running head as its row and stack mates."""
    doc = pymupdf.open()
    for n in range(1, 4):
        page = doc.new_page(width=612, height=792)
        page.insert_text((276, 43), "Supplement", fontsize=10, fontname="helv")
        if n == 2:
            page.insert_text((36, 80), "FIGURE 2. Average health and inequality among adults", fontsize=9,
                             fontname="hebo")
            page.insert_text((36, 90), "aged 18-65 years - United States, 1997-", fontsize=9, fontname="hebo")
            page.insert_text((36, 100), "2007", fontsize=9, fontname="hebo")
        _body(page, 300, 10, "tiro", BODY * 3)
        page.insert_text((132, 757), "MMWR / January 14, 2011 / Vol. 60", fontsize=8, fontname="helv")
    out, md = _convert(doc, tmp_path)
    blocks = out.pages[1].blocks
    cap = [b for b in blocks if b.text.startswith("FIGURE 2.")]
    assert cap and cap[0].role == "caption" and cap[0].text.rstrip().endswith("2007"), [(b.text, b.role) for b in blocks]
    assert not any(b.role == "page_number" for b in blocks if "2007" in b.text)
    assert "aged 18-65 years" in md


def test_a_source_notes_url_in_the_bottom_band_ends_the_note_and_a_stamp_block_stays_out(tmp_path):
    """The last line of a table's source note, a URL, reaches the bottom band set tight under the
    note and the table: it ends that paragraph and stays. A repository's stamp at the foot, its
    name over its URL, set apart from the text, still leaves the body."""
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=660)
    y = 450.0
    for r in range(24):
        page.insert_text((36, y), f"Offense number {r} . . . . . . . . .", fontsize=6, fontname="helv")
        page.insert_text((195, y), f"{(r * 7919) % 90000 + 1000:,}", fontsize=6, fontname="helv")
        y += 6.5
    page.insert_text((48, y + 2), "Source: U.S. Department of Justice, Federal Bureau of Investigation, see", fontsize=6,
                     fontname="helv")
    page.insert_text((36, y + 8.5), "<http://www.fbi.gov/ucr/cius2009/arrests/index.html>.", fontsize=6, fontname="helv")
    page.insert_text((36, y + 17), "206  Law Enforcement, Courts, and Prisons", fontsize=8, fontname="hebo")
    page.insert_text((192, y + 24), "U.S. Census Bureau, Statistical Abstract of the United States: 2012", fontsize=6,
                     fontname="helv")
    out, md = _convert(doc, tmp_path)
    assert "www.fbi.gov/ucr/cius2009" in md, [(b.text, b.role) for b in out.pages[0].blocks]

    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    _body(page, 100, 10, "tiro", BODY * 6)
    page.insert_text((36, 756), "PLOS ONE | https://doi.org/10.1371/journal.pone.0194893   March 29, 2018", fontsize=8,
                     fontname="helv")
    page.insert_text((265, 772), "Konstanzer Online-Publikations-System (KOPS)", fontsize=9, fontname="helv")
    page.insert_text((233, 782), "URL: http://nbn-resolving.de/urn:nbn:de:bsz:352-2-tc78tzvr67fo3", fontsize=9,
                     fontname="helv")
    out, md = _convert(doc, tmp_path)
    assert "nbn-resolving" not in md, [(b.text, b.role) for b in out.pages[0].blocks]


def test_a_report_keeps_its_centred_title_block_on_its_first_page_only(tmp_path):
    """A contribution report heads every page with its title block, three centred small lines
    ("Vote Yes for Strong Schools / Major Contribution Report / For the Period ..."), beside a
    report code and a run date at the page's corners. On page 1 the block is the report's title
    and stays; on the later pages it is a running head, and the corners are furniture on all."""
    doc = pymupdf.open()
    lines = ["Vote Yes for Strong Schools", "Major Contribution Report",
             "For the Period Between August 1, 2012 to October 18, 2012"]
    for n in range(1, 5):
        page = doc.new_page(width=792, height=612)
        for k, text in enumerate(lines):
            w = pymupdf.get_text_length(text, fontname="helv", fontsize=7)
            page.insert_text((396 - w / 2, 29 + k * 8.5), text, fontsize=7, fontname="helv")
        page.insert_text((40, 29), "ABLPDM27", fontsize=7, fontname="helv")
        page.insert_text((700, 29), "10/19/2012", fontsize=7, fontname="helv")
        for r in range(40):
            y = 70 + r * 12
            page.insert_text((40, y), f"Donor {n}-{r}", fontsize=8.5, fontname="helv")
            page.insert_text((200, y), f"{100 + r} Main Street", fontsize=8.5, fontname="helv")
            page.insert_text((400, y), "Saint Paul", fontsize=8.5, fontname="helv")
            page.insert_text((700, y), f"{(r * 37) % 500 + 50}.00", fontsize=8.5, fontname="helv")
    out, md = _convert(doc, tmp_path)
    first = [b for b in out.pages[0].blocks if "Major Contribution Report" in b.text]
    assert first and all(b.role not in FURN for b in first), [(b.text, b.role) for b in out.pages[0].blocks[:6]]
    for p in out.pages[1:]:
        later = [b for b in p.blocks if "Major Contribution Report" in b.text]
        assert later and all(b.role == "header" for b in later)
    for p in out.pages:
        assert [b.role for b in p.blocks if b.text.strip() == "ABLPDM27"] == ["header"]
    assert md.count("Major Contribution Report") == 1
