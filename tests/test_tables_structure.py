"""Table structure on the text-layer route: cells that wrap onto several lines, group header
cells spanning columns, a table continued over two pages under its repeated header, two
tables side by side.

Pages come from the `tablestruct` bench builders (`benchmarks/quality_cases_tables.py`),
seeded and varied (font, size, column count and widths, ruled or borderless); the tests
assert where each cell lands (its row and column, the header over it, the span of a group
label), never the grid's shape alone, and that no cell text is lost.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pymupdf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from quality_cases import _pdf, new_doc_page  # noqa: E402
from quality_cases_tables import FONTS, Cells, TableSpec, _widths, draw_table, span_table, wrap_table  # noqa: E402

from pagerouter.config.textlayer import TextLayerConfig  # noqa: E402
from pagerouter.common.pagetext import extract_textdict  # noqa: E402
from pagerouter.textlayer import FurnitureModel, read_text_layer  # noqa: E402

CFG = TextLayerConfig()


class _Page:
    def __init__(self, blocks):
        self.blocks = blocks


class _Read:
    def __init__(self, pages):
        self.pages = pages


def _convert(tmp_path: Path, pdf: bytes) -> _Read:
    """The text-layer route's blocks per page, the furniture model built over the document
    as the converter builds it (this is what the route reads; triage is not under test)."""
    doc = pymupdf.open(stream=pdf, filetype="pdf")
    numbers = list(range(1, doc.page_count + 1))
    furniture = FurnitureModel.from_document(doc, numbers, CFG)
    pages = [_Page(read_text_layer(p, extract_textdict(p), n, CFG, furniture)) for p, n in zip(doc, numbers)]
    doc.close()
    return _Read(pages)


def _tables(page) -> list:
    return [b for b in page.blocks if b.role == "table"]


def _assert_grid(cells: list[list[str]], spec: TableSpec) -> None:
    """Every body cell in the row of its row label and under its column's header; the header
    row right above the body."""
    ncol = len(spec.leaf)
    head = next((i for i, r in enumerate(cells) if r[:ncol] == spec.leaf[:ncol] and len(r) == ncol), None)
    assert head is not None, f"no header row {spec.leaf} in {cells}"
    body = cells[head + 1 :]
    assert [r[0] for r in body] == [r[0] for r in spec.body], "row labels out of place"
    for got, want in zip(body, spec.body):
        assert got == want, f"row {want[0]!r}: {got} != {want}"


def _page_with(seed: int, draw) -> tuple[bytes, random.Random]:
    rng = random.Random(seed)
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice([(595.0, 842.0), (612.0, 792.0)]))
    draw(pen, rng)
    return _pdf(doc), rng


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("style", ["none", "booktabs", "grid"])
def test_wrapped_cells_stay_in_their_row(tmp_path, seed, style):
    """A row is a band of aligned cell starts: the lower lines of a wrapped cell (the row
    label's too) join that cell, the header row stays a header (not `#` headings)."""
    specs = []

    def draw(pen, rng):
        C = Cells(rng)
        font, size = FONTS[seed % len(FONTS)], rng.uniform(8, 10.5)
        ncol = rng.randint(3, 5)
        spec, numeric, wide = wrap_table(rng, C, ncol, rng.randint(4, 6), wrap_head=seed % 2 == 0)
        if 0 not in wide:  # the row label wraps too on these pages: no one-line spine
            spec.body = [[C.phrase(rng.randint(5, 7)), *r[1:]] for r in spec.body]
        gap = size * rng.uniform(0.4, 0.9) if style == "none" else 1.0
        pen.text(60, 70, "Survey of the sites", "helv", 14)
        draw_table(pen, spec, 60, 100, _widths(rng, pen.w - 120, ncol, [0, *wide]), font, size, style, gap, numeric)
        specs.append(spec)

    pdf, _ = _page_with(1000 + seed, draw)
    page = _convert(tmp_path, pdf).pages[0]
    tables = _tables(page)
    assert len(tables) == 1, [b.text[:60] for b in page.blocks]
    _assert_grid(tables[0].cells, specs[0])
    assert not any(b.role == "heading" and b.text in specs[0].leaf for b in page.blocks)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("style", ["none", "booktabs", "grid"])
def test_spanning_header_cell_is_one_cell(tmp_path, seed, style):
    """A group label over two or three columns stays whole, heads each column under it (the
    grid repeats it there) and is listed once in `spans` with its colspan."""
    specs = []

    def draw(pen, rng):
        C = Cells(rng)
        font, size = FONTS[(seed + 2) % len(FONTS)], rng.uniform(8, 10.5)
        spec, numeric = span_table(rng, C)
        gap = size * rng.uniform(0.4, 0.9) if style == "none" else 1.0
        draw_table(pen, spec, 60, 90, _widths(rng, pen.w - 120, len(spec.leaf), [0]), font, size, style, gap, numeric)
        specs.append(spec)

    pdf, _ = _page_with(2000 + seed, draw)
    page = _convert(tmp_path, pdf).pages[0]
    (table,) = _tables(page)
    spec = specs[0]
    groups, leaves = spec.header
    want_group_row, spans, col = [""], [], 1
    for text, n in groups[1:]:
        want_group_row += [text] * n
        spans.append((0, col, 1, n))
        col += n
    assert table.cells[0] == want_group_row
    assert table.cells[1] == [t for t, _ in leaves]
    assert table.cells[2:] == spec.body
    assert [tuple(s) for s in table.spans] == spans
    for text, n in groups[1:]:
        assert f'<th colspan="{n}">{text}</th>' in table.text  # Markdown: one HTML cell per group


@pytest.mark.parametrize("seed", range(4))
def test_continued_table_keeps_its_repeated_header(tmp_path, seed):
    """A borderless table continued at the top of page 2 under its repeated header row (and a
    running title on some pages): the header heads page 2's rows, it is neither furniture
    nor a body row, and no row is lost."""
    rng = random.Random(3000 + seed)
    C = Cells(rng)
    font, size = FONTS[seed % len(FONTS)], rng.uniform(8.5, 10)
    ncol = rng.randint(3, 4)
    spec, numeric, wide = wrap_table(rng, C, ncol, 22, False)
    spec.body = [[C.name() if k in wide else c for k, c in enumerate(r)] for r in spec.body]
    doc = pymupdf.open()
    widths = None
    halves = [TableSpec(spec.header, spec.leaf, spec.body[:14]), TableSpec(spec.header, spec.leaf, spec.body[14:])]
    for i, half in enumerate(halves):
        page, pen = new_doc_page(doc, (595.0, 842.0))
        if seed % 2:
            pen.text(60, 36, "Annual survey of the inland sites", "helv", 8)
        widths = widths or _widths(rng, pen.w - 120, ncol, [0])
        draw_table(pen, half, 60, 300 if i == 0 else 52, widths, font, size, "none", size * 0.6, numeric)
    result = _convert(tmp_path, _pdf(doc))
    for page, half in zip(result.pages, halves):
        tables = _tables(page)
        assert len(tables) == 1, [(b.role, b.text[:40]) for b in page.blocks]
        _assert_grid(tables[0].cells, half)
        assert tables[0].cells[0] == spec.leaf  # the header row first, not dropped
        assert not any(b.role in ("header", "footer", "page_number") and b.text in spec.leaf for b in page.blocks)


@pytest.mark.parametrize("seed", range(6))
def test_side_by_side_tables_are_two_tables(tmp_path, seed):
    """Two tables next to each other under their captions, rows on the same baselines:
    two tables, each row holding only its own table's cells."""
    specs = []

    def draw(pen, rng):
        C = Cells(rng)
        font, size = FONTS[seed % len(FONTS)], rng.uniform(8.5, 10)
        half = (pen.w - 120 - 40) / 2
        x = 60
        for side in range(2):
            ncol = 2 + (seed + side) % 2
            spec, numeric, _ = wrap_table(rng, C, ncol, 5, False)
            spec.body = [[C.name() if not numeric[k] else c for k, c in enumerate(r)] for r in spec.body]
            pen.text(x, 90, f"Table {side + 1}. Sites", "hebo", size)
            gap = size * 0.6 if seed % 3 else size * (0.6 + 0.5 * side)  # aligned rows, or not
            draw_table(pen, spec, x, 100, _widths(rng, half * 0.9, ncol, [0]), font, size, "none", gap, numeric)
            specs.append(spec)
            x += half + 40

    pdf, _ = _page_with(4000 + seed, draw)
    page = _convert(tmp_path, pdf).pages[0]
    tables = _tables(page)
    assert len(tables) == 2, [(b.role, b.text[:40]) for b in page.blocks]
    for table, spec in zip(sorted(tables, key=lambda t: t.bbox[0]), specs):
        _assert_grid(table.cells, spec)
