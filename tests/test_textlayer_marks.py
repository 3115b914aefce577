"""Words and marks of the text-layer reader: spaces, <sup>/<sub>, footnotes, captions, RTL.

Every page is generated with PyMuPDF; the assertions are on the text the reader produces.
"""

from __future__ import annotations

import unicodedata

import pymupdf
import pytest

from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.model import Document, Page
from pagerouter.render.output import to_markdown
from pagerouter.common.pagetext import extract_textdict
from pagerouter.textlayer import read_text_layer
from pagerouter.textlayer.roles import Para, attach_captions

CFG = TextLayerConfig()
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def read(page: pymupdf.Page, cfg: TextLayerConfig = CFG):
    return read_text_layer(page, extract_textdict(page), page.number + 1, cfg)


def markdown(blocks) -> str:
    page = Page(number=1, width=612, height=792, status="ok", route="text_layer", blocks=blocks)
    return to_markdown(Document(source="t.pdf", page_count=1, pages=[page]))


def _words_reversed(page, x, y, words, size, font, trailing=True, gap_em=0.0):
    """Each word its own text object, drawn right to left: MuPDF reports one line per word."""
    f = pymupdf.Font(font)
    xs = []
    for w in words:
        xs.append(x)
        x += f.text_length(w + (" " if trailing else ""), size) + gap_em * size
    for w, wx in reversed(list(zip(words, xs))):
        page.insert_text((wx, y), w + (" " if trailing else ""), fontsize=size, fontname=font)


@pytest.mark.parametrize("font,size", [("helv", 11), ("tiro", 9), ("cour", 14)])
def test_spaces_between_separately_drawn_words(font, size):
    doc = pymupdf.open()
    page = doc.new_page()
    sent1 = "He was King of the English and ruled the land."
    sent2 = "Small gaps separate these words without space characters."
    _words_reversed(page, 72, 100, sent1.split(), size, font, trailing=True)
    _words_reversed(page, 72, 100 + 3 * size, sent2.split(), size, font, trailing=False, gap_em=0.3)
    # letter-spaced (tracked) text: one word, as MuPDF reads it
    f, x = pymupdf.Font(font), 72.0
    for ch in "Tracking":
        page.insert_text((x, 100 + 6 * size), ch, fontsize=size, fontname=font)
        x += f.text_length(ch, size) + 0.04 * size
    texts = [b.text for b in read(page)]
    assert sent1 in texts
    assert sent2 in texts
    assert "Tracking" in texts


def _runs(page, x, y, parts, font="helv"):
    f = pymupdf.Font(font)
    for text, size, rise in parts:
        page.insert_text((x, y - rise), text, fontsize=size, fontname=font)
        x += f.text_length(text, size)


@pytest.mark.parametrize("size,font", [(11, "helv"), (10, "tiro"), (13, "helv")])
def test_superscripts_and_subscripts_in_markdown(size, font):
    doc = pymupdf.open()
    page = doc.new_page()
    s = 0.65 * size
    _runs(page, 72, 100, [("Energy is mc", size, 0), ("2", s, 0.38 * size), (" as the figures", size, 0),
                          ("1", s, 0.38 * size), (" show.", size, 0)], font)  # fmt: skip
    _runs(page, 72, 140, [("Water is H", size, 0), ("2", s, -0.18 * size), ("O and not CO", size, 0),
                          ("2", s, -0.18 * size), (".", size, 0)], font)  # fmt: skip
    # a size change on one baseline (small caps style) is not a script
    _runs(page, 72, 180, [("In ", size, 0), ("SMALL CAPS", s, 0), (" we trust.", size, 0)], font)
    md = markdown(read(page))
    assert "Energy is mc<sup>2</sup> as the figures<sup>1</sup> show." in md
    assert "Water is H<sub>2</sub>O and not CO<sub>2</sub>." in md
    assert "In SMALL CAPS we trust." in md


def test_whole_line_and_bigger_text_never_marked():
    doc = pymupdf.open()
    page = doc.new_page()
    _runs(page, 72, 100, [("Raised small line alone", 7, 4)])
    _runs(page, 72, 130, [("B", 20, 0), ("ig first letter then text", 11, 0)])
    texts = " ".join(b.text for b in read(page))
    assert "<sup>" not in texts and "<sub>" not in texts


def _footnote_page(marker: str, width: float) -> tuple[pymupdf.Page, list[str]]:
    doc = pymupdf.open()
    page = doc.new_page()
    body = "The body of the page discusses results in detail and refers to its notes. " * 12
    page.insert_textbox(pymupdf.Rect(72, 72, 540, 400), body, fontsize=11, fontname="tiro")
    notes = [
        "The first note explains where the measured data came from and how it was collected in the field.",
        "The second note gives the reference for the method used to compute all values of the table.",
    ]
    # (the base-14 fonts have no dagger: the notes use an embedded font that does)
    page.insert_font(fontname="djs", fontfile=DEJAVU.replace("Sans", "Serif"))
    f, y, expected = pymupdf.Font(fontfile=DEJAVU.replace("Sans", "Serif")), 680.0, []
    for i, note in enumerate(notes, 1):
        x = 72.0
        if marker == "sup":
            page.insert_text((x, y - 3), str(i), fontsize=5.5, fontname="djs")
            x += f.text_length(str(i), 5.5) + 0.5
            expected.append(f"<sup>{i}</sup>{note}")
            text = note
        else:
            mark = {"num": str(i), "sym": "*†"[i - 1]}[marker]
            text = f"{mark} {note}"
            expected.append(text)
        lines, cur = [], ""
        for w in text.split():
            if cur and f.text_length(cur + " " + w, 8) > width:
                lines.append(cur)
                cur = w
            else:
                cur = f"{cur} {w}".strip()
        lines.append(cur)
        for k, ln in enumerate(lines):
            page.insert_text((x if k == 0 else 72, y), ln, fontsize=8, fontname="djs")
            y += 9.6
    return page, expected


@pytest.mark.parametrize("marker,width", [("num", 200), ("sup", 230), ("sym", 180), ("num", 420)])
def test_footnotes_one_block_each(marker, width):
    page, expected = _footnote_page(marker, width)
    notes = [b.text for b in read(page) if b.role == "footnote"]
    assert notes == expected


def _two_column_figure_page(caption: str) -> pymupdf.Page:
    doc = pymupdf.open()
    page = doc.new_page()
    s = "Sentence {i} of the {c} column talks about results and their careful interpretation. "
    page.insert_textbox(pymupdf.Rect(54, 72, 297, 430), "".join(s.format(i=i, c="left") for i in range(12)),
                        fontsize=10, fontname="tiro")  # fmt: skip
    page.draw_rect(pymupdf.Rect(54, 440, 297, 640), color=(0, 0, 0), fill=(0.8, 0.8, 0.9))
    for k in range(15):
        page.draw_line((64 + k * 15, 630), (64 + k * 15, 600 - k * 10), color=(1, 0, 0), width=3)
    page.insert_textbox(pymupdf.Rect(54, 648, 297, 700), caption, fontsize=9, fontname="tiro")
    page.insert_textbox(pymupdf.Rect(315, 72, 558, 720), "".join(s.format(i=i, c="right") for i in range(22)),
                        fontsize=10, fontname="tiro")  # fmt: skip
    return page


def test_caption_follows_its_figure_in_two_columns():
    caption = "Figure 3: Results of the careful measurement across all the trials we ran."
    blocks = read(_two_column_figure_page(caption))
    roles = [b.role for b in blocks]
    i = roles.index("figure")
    assert blocks[i + 1].role == "caption" and blocks[i + 1].text == caption


class _Atom:
    def __init__(self, bbox, kind):
        self.x0, self.y0, self.x1, self.y1 = bbox
        self.kind = kind


def _para(bbox, role, text):
    from pagerouter.textlayer.lines import Line

    p = Para([Line(*bbox, text=text, size=9, bold=False, mono=False)], key=())
    p.role, p.text = role, text
    return p


def test_caption_moves_next_to_its_figure_and_table():
    left = _para((54, 72, 297, 400), "paragraph", "left text")
    fig = _Atom((54, 410, 297, 600), "figure")
    right = _para((315, 72, 558, 700), "paragraph", "right text")
    cap = _para((54, 606, 290, 630), "caption", "Figure 1: below its figure")
    tab_cap = _para((315, 710, 540, 722), "caption", "Table 2. above its table")
    tab = _Atom((315, 726, 558, 780), "table")
    out = attach_captions([left, fig, right, cap, tab, tab_cap], 10.0, CFG)
    assert out == [left, fig, cap, right, tab_cap, tab]
    # a caption already next to its figure stays; an unrelated caption far away does not move
    far = _para((315, 300, 540, 312), "caption", "Figure 9: elsewhere")
    items = [left, fig, cap, far, right]
    assert attach_captions(items, 10.0, CFG) == items


RTL_TEXTS = {
    "he": "זוהי פסקה בעברית שמכילה כמה שורות של טקסט כדי לבדוק את הקריאה הנכונה של פסקאות במסמכים והיא מסתיימת בשורה קצרה.",
    "ar": "هذه فقرة عربية طويلة تحتوي على عدة أسطر من النص لاختبار القراءة الصحيحة للفقرات في المستندات وهي تنتهي بسطر قصير جدا.",
}


@pytest.mark.parametrize("lang,width", [("he", 228), ("he", 180), ("ar", 228)])
def test_rtl_paragraph_with_short_last_line_is_one_paragraph(lang, width):
    doc = pymupdf.open()
    page = doc.new_page()
    text = RTL_TEXTS[lang]
    html = f'<p dir="rtl">{text}</p><p dir="rtl">{text}</p>'
    page.insert_htmlbox(pymupdf.Rect(72, 72, 72 + width, 400), html, css="* {font-family: sans-serif; font-size: 11pt;}")
    blocks = [b for b in read(page) if b.role == "paragraph"]
    lines = [ln for ln in page.get_text().splitlines() if ln.strip()]
    assert len(lines) >= 6  # really several lines per paragraph
    assert len(blocks) == 2
    if lang == "he":  # (the bundled Arabic font maps a few glyphs to odd code points)
        assert [b.text for b in blocks] == [text, text]


def test_arabic_presentation_forms_normalised():
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="dj", fontfile=DEJAVU)
    # glyph-shaped code points as some producers map them: "سلام" and "الله", and a
    # superscript two that must stay as written
    page.insert_text((72, 100), "\ufee1\ufefc\ufeb3 \ufedf\ufee0\ufe8e", fontsize=14, fontname="dj")
    page.insert_text((72, 130), "area 5 m\u00b2 and \ufb01le", fontsize=12, fontname="dj")
    texts = [b.text for b in read(page)]
    assert texts[0] == unicodedata.normalize("NFKC", "\ufe8e\ufee0\ufedf \ufeb3\ufefc\ufee1") == "الل سلام"
    assert not any("\ufb50" <= ch <= "\ufefe" for ch in texts[0])
    assert texts[1] == "area 5 m\u00b2 and file"


@pytest.mark.parametrize("pitch,extra", [(9.5, 7.0), (12.0, 8.0)])
def test_paragraph_spacing_counts_where_line_boxes_overlap(pitch, extra):
    """Lines set tighter than the font's box height (boxes overlap): the paragraph break is
    more distance than the paragraph's own line pitch, even though the plain gap looks small;
    a sentence wrapped over such a gap would still join (only a sentence end splits)."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    paras = [
        # last lines as long as the others: the short-last-line rule cannot see the break
        ["The first paragraph opens here and runs on", "over three lines of ordinary prose text", "until it ends at the right margin now."],
        ["A second paragraph follows after a space", "and it also ends with a full stop here."],
    ]
    y = 100.0
    for k, lines in enumerate(paras):
        for ln in lines:
            page.insert_text((72, y), ln, fontsize=10, fontname="helv")
            y += pitch
        y += extra
    got = [b.text for b in read(page) if b.role == "paragraph"]
    assert got == [" ".join(p) for p in paras]
