"""Markdown escaping of page text: a PDF's text stays text when our Markdown is rendered.

Rendered with a real CommonMark renderer (markdown-it-py) in its dangerous mode, raw HTML on, as
an app that turns our Markdown into a web page would: no HTML element of the PDF's own comes
alive, no heading but the reader's, and the visible text is the PDF's text.
"""

from __future__ import annotations

import json
import random
from html.parser import HTMLParser

import pymupdf
import pytest
from markdown_it import MarkdownIt

from pagerouter.model import Block, Document, Page
from pagerouter.render.escape import escape_text, fence, unescape
from pagerouter.render.output import to_json, to_markdown

HOSTILE = [
    "# fake heading",
    "<script>alert(1)</script>",
    "<b>tag</b> & * star *",
    "2024. The year the audit began",  # CommonMark: an ordered list starting at 2024
    "use ``` to close a fence",
    "[click](javascript:alert(1)) and snake_case_name",
    "<!-- hidden --> &amp; entity",
]
TABLE = [["Name", "Value", "Note"], ["a|b", "<i>x</i>", "1 * 2"], ["c", "# d", "e_f_"]]
CODE = ["x = 1  # ```", "print(x)"]

BLOCK_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "table", "thead", "tbody", "tr", "th", "td",
              "pre", "code", "hr", "br"}


def render(md: str) -> str:
    """CommonMark with raw HTML allowed (the dangerous mode) and GFM tables."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


class Elements(HTMLParser):
    """Every element of rendered HTML, the text of each heading, and the visible text (text
    nodes joined with a space at each element boundary)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.headings: list[str] = []
        self.chunks: list[str] = []
        self.comments: list[str] = []
        self._in_heading: list[str] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.chunks.append(" ")
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._in_heading = []

    def handle_endtag(self, tag):
        self.chunks.append(" ")
        if tag.startswith("h") and tag[1:].isdigit() and self._in_heading is not None:
            self.headings.append(" ".join("".join(self._in_heading).split()))
            self._in_heading = None

    def handle_data(self, data):
        self.chunks.append(data)
        if self._in_heading is not None:
            self._in_heading.append(data)

    def handle_comment(self, data):
        self.comments.append(data)

    @property
    def text(self) -> str:
        return " ".join("".join(self.chunks).split())


def _hostile_pdf(path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "Quarterly Report", fontsize=20, fontname="hebo")
    y = 130.0
    for line in HOSTILE:
        page.insert_text((72, y), line, fontsize=11, fontname="helv")
        y += 28
    for line in CODE:  # two monospaced lines: the reader's code block
        page.insert_text((72, y), line, fontsize=10, fontname="cour")
        y += 12
    x0, y0, cw, rh = 72, y + 30, 150, 22  # a ruled 3 x 3 table
    for i in range(len(TABLE) + 1):
        page.draw_line((x0, y0 + i * rh), (x0 + 3 * cw, y0 + i * rh), width=0.8)
    for j in range(4):
        page.draw_line((x0 + j * cw, y0), (x0 + j * cw, y0 + len(TABLE) * rh), width=0.8)
    for i, row in enumerate(TABLE):
        for j, cell in enumerate(row):
            page.insert_text((x0 + j * cw + 5, y0 + i * rh + 15), cell, fontsize=10, fontname="helv")
    doc.save(path)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    from pagerouter.config import PagerouterConfig
    from pagerouter.convert.converter import Converter

    path = tmp_path_factory.mktemp("hostile") / "hostile.pdf"
    _hostile_pdf(path)
    with Converter(PagerouterConfig()) as conv:
        return conv.convert(path)


def test_hostile_pdf_text_renders_as_text(hostile):
    page = hostile.pages[0]
    assert page.route == "text_layer"
    blocks = sorted(page.blocks, key=lambda b: b.order)
    # the reader's structure, which must stay live: one heading, the paragraphs, code, a table
    assert [(b.role, b.text) for b in blocks if b.role in ("heading", "paragraph")] == (
        [("heading", "Quarterly Report")] + [("paragraph", line) for line in HOSTILE])
    assert [b.role for b in blocks if b.role not in ("heading", "paragraph")] == ["code", "table"]
    assert next(b for b in blocks if b.role == "table").cells == TABLE

    html = render(to_markdown(hostile))
    el = Elements(html)
    assert set(el.tags) <= BLOCK_TAGS, sorted(set(el.tags) - BLOCK_TAGS)  # no <script>, <b>, <i>, <a>, <ol>...
    assert el.comments == []  # the PDF's `<!-- hidden -->` is text, not a comment
    assert el.headings == ["Quarterly Report"]
    assert el.tags.count("pre") == 1 and el.tags.count("table") == 1 and "ol" not in el.tags
    truth = ["Quarterly Report", *HOSTILE, *CODE, *(c for row in TABLE for c in row)]
    assert el.text == " ".join(" ".join(truth).split())


def test_hostile_pdf_json_keeps_the_raw_text(hostile):
    data = json.loads(to_json(hostile))
    texts = [b["text"] for b in sorted(data["pages"][0]["blocks"], key=lambda b: b["order"])]
    for line in HOSTILE:
        assert line in texts
    assert "\n".join(CODE) in texts
    table = next(b for b in data["pages"][0]["blocks"] if b["role"] == "table")
    assert table["cells"] == TABLE


def _doc(*blocks: Block) -> Document:
    return Document(source="t.pdf", page_count=1, pages=[
        Page(number=1, status="ok", route="text_layer", blocks=list(blocks))])


def _b(text: str, role: str = "paragraph", order: int = 0, **kw) -> Block:
    kw.setdefault("route", "text_layer")
    kw.setdefault("engine", "pymupdf")
    return Block(text=text, role=role, bbox=(0, 0, 10, 10), page=1, confidence=1.0, order=order, **kw)


def test_our_structure_stays_live_page_text_does_not():
    md = to_markdown(_doc(
        _b("Results #", "heading", 0, level=2),
        _b("1. not a list, an OCR line", "paragraph", 1, route="ocr", engine="rapidocr"),
        _b("3. third <em>point</em>", "list_item", 2),
        _b("- dashes * and <u>under</u>", "list_item", 3),
        _b("a ``` b\n````", "code", 4),
        _b("chart [1] (a)] <img src=x onerror=alert(1)>", "figure", 5, image="figs/my fig (1).png"),
        _b("a <b>b</b>", "formula", 6),
    ))
    el = Elements(render(md))
    assert el.headings == ["Results #"]  # ours, its trailing `#` kept as text
    assert el.tags == ["h2", "p", "ol", "li", "ul", "li", "pre", "code", "p", "img", "p"], el.tags
    assert "1. not a list, an OCR line" in el.text  # a paragraph, not an ordered list
    assert "third <em>point</em>" in el.text and "- dashes * and <u>under</u>" in el.text
    assert "a ``` b\n````" in render(md).replace("&lt;", "<").replace("&gt;", ">")  # the code block whole
    assert '<img src="figs/my%20fig%20(1).png" alt="chart [1] (a)] &lt;img src=x onerror=alert(1)&gt;"' in render(md)


def test_a_vlm_answer_keeps_its_markdown_but_not_its_html():
    vlm = {"route": "escalation", "engine": "vlm"}
    md = to_markdown(_doc(
        _b("**Total** is *up* <script>x()</script>", "paragraph", 0, **vlm),
        _b("- first", "list_item", 1, **vlm),
        _b("<table><tr><td colspan=\"2\">a</td></tr><tr><td onclick=\"x\">b</td></tr></table>", "table", 2, **vlm),
    ))
    el = Elements(render(md))
    assert el.tags[:3] == ["p", "strong", "em"] and "script" not in el.tags
    assert el.tags.count("li") == 1 and el.tags.count("ul") == 1  # the model's own bullet, not nested
    assert el.tags.count("td") == 1  # the plain `<td>` kept, the one with a handler made text
    assert "<script>x()</script>" in el.text


@pytest.mark.parametrize("seed", range(6))
def test_escaped_text_reads_back_exactly(seed):
    """Random text over every character CommonMark gives a meaning to: rendered, it is one
    paragraph of exactly that text (the only element `<p>`)."""
    rng = random.Random(seed)
    alphabet = "ab1 2*_~`<>&#[]()!|\\-+=.:;/?'\"{}^$@\n\t" + "xyz" * 3
    for _ in range(300):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        s = "\n".join(line for line in s.split("\n") if line.strip())  # a block's lines are never blank
        if not s.strip():
            continue
        el = Elements(render(escape_text(s.strip())))
        assert set(el.tags) <= {"p"}, (s, escape_text(s.strip()), el.tags)
        assert el.text == " ".join(s.split()), (s, escape_text(s.strip()))


def test_escapes_only_where_live():
    plain = "Revenue grew 4.5% in Q3 - a record; see p. 12 (and 3 * 4 = 12), e-mail: a_b@c.de, AT&T, x < y."
    assert escape_text(plain) == plain  # ordinary punctuation is left alone
    assert escape_text("# a\n1. b\n- c\n> d\n---") == "\\# a\n1\\. b\n\\- c\n\\> d\n\\---"
    assert unescape(escape_text("*a* _b_ `c` <d> [e](f) |g|")) == "*a* _b_ `c` <d> [e](f) |g|"


def test_fence_is_longer_than_any_backtick_run():
    assert fence("a").startswith("```\n")
    assert fence("x ```` y").startswith("`````\n") and fence("x ```` y").endswith("\n`````")
