"""A page typed in a monospaced face (a typewritten letter, a court filing, an old report) is
prose, not a code listing: its paragraphs come out as paragraphs. Before, every paragraph of two
or more monospaced lines was a code block, so a letter typed in Courier came out as fenced
blocks of raw lines. A code listing keeps its block, in a typed page or a typeset one."""

from __future__ import annotations

import pymupdf

from pagerouter.common.pagetext import extract_textdict
from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.textlayer import read_text_layer

LETTER = [
    ["Dear Mr Abernethy,"],
    ["Further to our telephone conversation of last week, I enclose the",
     "survey of the boundary wall and the estimate for its repair. The",
     "contractor can begin work in the second week of April."],
    ["Please let me know whether the owners of the adjoining land have",
     "agreed to share the cost before we instruct him."],
    ["Yours sincerely,"],
]
LISTING = ["int main(void) {", "    printf(\"%d\\n\", total[0]);", "    return total[1] == 0;", "}"]


def _blocks(paras: list[list[str]], font: str = "cour", listing: list[str] | None = None, listing_font: str = "cour"):
    doc = pymupdf.open()
    page = doc.new_page()
    y = 90.0
    for para in paras:
        for line in para:
            page.insert_text((72, y), line, fontsize=10, fontname=font)
            y += 13
        y += 13
    for line in listing or []:  # indented by position, as typeset listings are
        indent = len(line) - len(line.lstrip())
        page.insert_text((90 + indent * 5.4, y), line.lstrip(), fontsize=9, fontname=listing_font)
        y += 11
    return read_text_layer(page, extract_textdict(page), 1, TextLayerConfig())


def test_a_typewritten_letter_is_paragraphs():
    blocks = _blocks(LETTER)
    assert [b.role for b in blocks] == ["paragraph"] * 4, [(b.role, b.text[:30]) for b in blocks]
    assert [b.text for b in blocks] == [" ".join(p) for p in LETTER]


def test_a_listing_on_a_typed_page_stays_code():
    blocks = _blocks(LETTER, listing=LISTING)
    assert [b.role for b in blocks] == ["paragraph"] * 4 + ["code"]
    assert blocks[-1].text.splitlines() == LISTING


def test_monospaced_lines_on_a_typeset_page_are_code_as_before():
    blocks = _blocks(LETTER, font="tiro", listing=["make install", "make test"])
    assert [b.role for b in blocks] == ["paragraph"] * 4 + ["code"]
