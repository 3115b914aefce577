"""One Markdown table writer for both routes: the same cells give the same table text whether
the text layer or OCR recovered them, and a `\\` or `|` inside a cell survives the round trip."""

from __future__ import annotations

import re

import numpy as np

from pagerouter.config.ocr import OcrConfig
from pagerouter.model import TriageDecision
from pagerouter.ocr.lines import OcrLine
from pagerouter.ocr.regions import read_task_with_lines
from pagerouter.common.stages import LayoutResult, OcrTask, Region
from pagerouter.render.table_markdown import cells_to_markdown
from pagerouter.textlayer.tables import Table

CELLS = [
    ["Path", "Flags", " Note "],
    ["C:\\data\\in", "a|b", "line\nbreak"],
    ["\\|", "", "plain"],
]


def _parse_gfm_row(row: str) -> list[str]:
    """What a GFM reader takes from one table row: split on unescaped `|`, then unescape."""
    inner = row.strip()[1:-1]
    parts = re.split(r"(?<!\\)((?:\\\\)*)\|", inner)
    # re.split keeps the captured run of escaped backslashes; glue it back to its cell
    cells, buf = [], ""
    for i, part in enumerate(parts):
        if i % 2 == 0:
            buf += part
        else:
            cells.append(buf + part)
            buf = ""
    cells.append(buf)
    return [re.sub(r"\\(.)", r"\1", c.strip()) for c in cells]


class _OneTableReader:
    """Stands in for RapidOCR: a few lines inside the table region."""

    name = "rapidocr"
    version = "fake"

    def read_image_lines(self, image, script=None):
        return [OcrLine((20.0, 20.0 + 20 * i, 180.0, 35.0 + 20 * i), f"row {i}", 0.9) for i in range(3)]


class _FixedTables:
    """Stands in for the table structure reader: always recovers CELLS."""

    def read(self, crop, lines):
        return [list(r) for r in CELLS], "fake"


def _ocr_table_text(cells_reader) -> str:
    task = OcrTask(
        source="t.pdf", number=1, width=200, height=200, decision=TriageDecision(route="ocr"),
        image=np.full((200, 200, 3), 255, np.uint8), scale=1.0, page_bytes=b"", ink=0.05,
    )
    layout = LayoutResult(rotation=0, regions=[Region("table", (10.0, 10.0, 190.0, 90.0), 0.9)])
    reading = read_task_with_lines(task, layout, _OneTableReader(), OcrConfig(), tables=cells_reader)
    (table,) = [b for b in reading.blocks if b.role == "table"]
    return table.text


def test_both_routes_write_the_same_markdown_for_the_same_cells():
    text_layer = Table(bbox=(0, 0, 1, 1), cells=[list(r) for r in CELLS], confidence=1.0, ruled=True).markdown()
    ocr = _ocr_table_text(_FixedTables())
    assert text_layer == ocr == cells_to_markdown(CELLS)


def test_backslash_and_pipe_round_trip():
    md = cells_to_markdown(CELLS).split("\n")
    assert md[1] == "| --- | --- | --- |"
    assert md[0] == "| Path | Flags | Note |"  # stripped
    assert md[2] == "| C:\\\\data\\\\in | a\\|b | line break |"
    back = [_parse_gfm_row(r) for r in (md[0], md[2], md[3])]
    assert back == [["Path", "Flags", "Note"], ["C:\\data\\in", "a|b", "line break"], ["\\|", "", "plain"]]


def test_short_rows_are_padded_and_no_rows_is_empty():
    assert cells_to_markdown([["a", "b"], ["c"]]) == "| a | b |\n| --- | --- |\n| c |  |"
    assert cells_to_markdown([]) == ""


def test_spans_and_form_fields_cross_the_wire_unchanged():
    # gRPC clients get what the JSON holds: a table's spanning cells and a form line's fields
    from pagerouter.model import Block, FormField
    from pagerouter.wire.proto_model import block_from_proto, block_to_proto

    common = dict(bbox=(1.0, 2.0, 3.0, 4.0), page=1, engine="pymupdf", route="text_layer", confidence=1.0, order=0)
    table = Block(text="t", role="table", cells=[["2024", "2024"], ["Q1", "Q2"]], spans=[(0, 0, 1, 2)], **common)
    form = Block(text="Name: Ada", role="form_field",
                 fields=[FormField(name="applicant.name", type="Text", value="Ada", bbox=(5.0, 6.0, 7.0, 8.0))], **common)
    plain = Block(text="p", role="paragraph", **common)
    for b in (table, form, plain):
        assert block_from_proto(block_to_proto(b)) == b
    assert block_from_proto(block_to_proto(plain)).spans is None


class _GridFromHtml:
    """What an HTML reader takes from a table: the grid of positions, a merged cell's text in
    every position its rowspan/colspan covers (the browser's table model)."""

    def __init__(self, html: str):
        from html.parser import HTMLParser

        self.grid: dict[tuple[int, int], str] = {}
        self.spans: list[tuple[int, int, int, int]] = []
        outer = self

        class P(HTMLParser):
            def __init__(self):
                super().__init__()
                self.row, self.col, self.cell = -1, 0, None

            def handle_starttag(self, tag, attrs):
                a = dict(attrs)
                if tag == "tr":
                    self.row, self.col = self.row + 1, 0
                elif tag in ("td", "th"):
                    while (self.row, self.col) in outer.grid:
                        self.col += 1
                    self.cell = [int(a.get("rowspan", 1)), int(a.get("colspan", 1)), ""]

            def handle_data(self, data):
                if self.cell is not None:
                    self.cell[2] += data

            def handle_endtag(self, tag):
                if tag in ("td", "th") and self.cell is not None:
                    rs, cs, text = self.cell
                    if (rs, cs) != (1, 1):
                        outer.spans.append((self.row, self.col, rs, cs))
                    for i in range(rs):
                        for j in range(cs):
                            outer.grid[(self.row + i, self.col + j)] = text
                    self.col += cs
                    self.cell = None

        P().feed(html)

    def rows(self) -> list[list[str]]:
        nr = 1 + max(r for r, _c in self.grid)
        nc = 1 + max(c for _r, c in self.grid)
        return [[self.grid.get((r, c), "<missing>") for c in range(nc)] for r in range(nr)]


# a ruled grid with a group label over two sub-columns and a label cell drawn over two rows
SPANNED = [
    ["Segment", "2024", "2024", "2023"],
    ["Segment", "Q1", "Q2", "Q4"],
    ["North", "10", "11", "12"],
    ["North", "13", "14", "15"],
    ["South", "16", "17", "18"],
]
SPANNED_SPANS = [(0, 0, 2, 1), (0, 1, 1, 2), (2, 0, 2, 1)]


def test_html_writes_row_spans_and_reads_back_to_the_same_grid():
    from pagerouter.render.table_markdown import cells_to_html

    html = cells_to_html(SPANNED, 2, SPANNED_SPANS)
    got = _GridFromHtml(html)
    assert got.rows() == SPANNED
    assert sorted(got.spans) == sorted(SPANNED_SPANS)
    assert '<td rowspan="2">North</td>' in html.splitlines()[html.splitlines().index("<tbody>") + 1]


def test_html_spans_past_the_grid_or_overlapping_are_clipped_and_every_row_stays_full():
    from pagerouter.render.table_markdown import cells_to_html

    # (4, 0, 5, 1) runs past the last row (one position left: no span); (3, 0, 1, 2) overlaps
    # (2, 0, 2, 1); (1, 3, 2, 1) crosses from the header rows into the body
    spans = [(2, 0, 2, 1), (3, 0, 1, 2), (4, 0, 5, 1), (1, 3, 2, 1)]
    got = _GridFromHtml(cells_to_html(SPANNED, 2, spans))
    assert got.rows() == [
        ["Segment", "2024", "2024", "2023"],
        ["Segment", "Q1", "Q2", "Q4"],
        ["North", "10", "11", "12"],
        ["North", "13", "14", "15"],
        ["South", "16", "17", "18"],
    ]
    assert sorted(got.spans) == [(2, 0, 2, 1)]


def test_text_layer_table_writes_its_row_spans_in_html_and_repeats_them_in_gfm():
    t = Table((0, 0, 100, 100), [list(r) for r in SPANNED], 1.0, True, header_rows=2, html_header=True,
              row_spans=[(0, 0, 2, 1), (2, 0, 2, 1)])
    assert t.spans == [(0, 0, 2, 1), (0, 1, 1, 2), (2, 0, 2, 1)]
    got = _GridFromHtml(t.markdown())
    assert got.rows() == SPANNED
    assert sorted(got.spans) == t.spans
    # the GFM form is unchanged: one row per grid row, the merged text repeated
    t.html_header = False
    assert [_parse_gfm_row(r) for r in t.markdown().splitlines() if not r.startswith("| ---")] == SPANNED
