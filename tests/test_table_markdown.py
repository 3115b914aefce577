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
