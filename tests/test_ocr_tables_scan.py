"""Borderless tables on the OCR route: pages drawn born-digital, rendered to image-only scans
(grey, light noise) and read by the real CPU path (RapidOCR, rapid-layout), so the tables are
found from the OCR lines' column alignment (`ocr.tables.find_line_tables`), not from a layout
box. The tests assert cell relationships in the JSON `cells` (the value in a row's label x a
column's header), as `test_tables_borderless.py` does for the same pages on the text-layer
route, and that prose in two columns and numbered lists stay paragraphs.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pymupdf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from tests.test_tables_borderless import DATES, INCOME, _put, statement_page  # noqa: E402
from tests.test_tables_borderless import value as text_layer_value  # noqa: E402

pytestmark = pytest.mark.slow

STATIONS = [
    ["Station", "Keeper", "Elevation (m)", "Opened"],
    ["North quarry", "Ada Brandt", "412", "1968"],
    ["Copper weir", "Noor Moss", "1,208", "1974"],
    ["Salt marsh", "Ruth Okafor", "15", "1959"],
    ["Pale ridge", "Tom Ueda", "2,730", "1981"],
    ["Lean harbour", "Eva Lund", "38", "2003"],
]


def station_page(doc: pymupdf.Document) -> None:
    """A caption, a sentence, a borderless text table (header over left-aligned columns, no
    rules), a sentence under it: the layout model tends to box such a table as a picture."""
    page = doc.new_page(width=612, height=792)
    _put(page, 60, 80, "Table 2. Weather stations of the coastal survey", 13, "helv")
    _put(page, 60, 108, "The stations below were read every morning during the survey season.", 10, "helv")
    y = 140.0
    for row in STATIONS:
        for k, cell in enumerate(row):
            _put(page, 60 + k * 125, y, cell, 10, "helv")
        y += 16 if row is STATIONS[0] else 14
    _put(page, 60, y + 20, "Readings after the flood were taken at the harbour only.", 10, "helv")


def control_page(doc: pymupdf.Document) -> None:
    """A numbered list (short items, a note column) and two columns of prose."""
    from pagerouter.bench.synth import LOREM, add_text_page

    add_text_page(doc, [LOREM, LOREM[:300], LOREM[:200], LOREM], title="Annual review", columns=2)
    page = doc.new_page(width=612, height=792)
    y = 80.0
    for i, item in enumerate(["Apples 12 boxes", "Pears, two crates of 24", "Plums 7", "Figs from 2023, 3 kg"] * 2):
        _put(page, 72, y, f"{i + 1}.", 10, "helv")
        _put(page, 90, y, item, 10, "helv")
        _put(page, 300, y, "see note " + str(i), 10, "helv")
        y += 14


@pytest.fixture(scope="module")
def scanned():
    """(document, page rendered by page) for the table pages and the control pages."""
    from quality_cases_scans import as_scan

    from pagerouter.config import PagerouterConfig
    from pagerouter.convert.converter import Converter

    cfg = PagerouterConfig()
    cfg.ocr.escalation.enabled = False  # the small reader's own structure is under test
    conv = Converter(cfg)
    d = pymupdf.open()
    statement_page(d, INCOME, [("Year Ended", 0, 2)], [DATES])
    station_page(d)
    control_page(d)
    return conv.convert(as_scan(d, random.Random(3), dpi=200), name="tables-scan.pdf")


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s.replace("$", "")).strip()


def value(cells, label, *headers):
    """The text-layer tests' lookup (label row x header column), with `$` and spaces normalised."""
    return text_layer_value(cells, label, *headers, norm=_norm)


def tables_of(page):
    return [b for b in page.blocks if b.role == "table"]


def test_income_statement_scan_keeps_rows_columns_and_headers(scanned):
    page = scanned.pages[0]
    assert (page.route, page.status) == ("ocr", "ok"), [c.reason for c in page.checks if not c.passed]
    (t,) = tables_of(page)
    cells = t.cells
    # a value sits in its label's row and under its date; the date under the spanning group label
    assert value(cells, "Sales, general and administrative", "Jan 26, 2025") == "1,136"
    assert value(cells, "Research and development", "Year Ended", "Jan 28, 2024") == "8,675"
    assert value(cells, "Interest expense", "Jan 29, 2023") == "(262)"
    assert value(cells, "Total operating expenses", "Jan 26, 2025") == "14,050"
    # the `$` set apart at the column's left edge stays with its number, not in a column of its own
    assert value(cells, "Revenue", "Jan 28, 2024") == "60,922"
    assert value(cells, "Net income", "Jan 29, 2023") == "4,368"
    # a label wrapped over two lines is one row, its values on it
    assert value(cells, "Weighted average shares used in per share computation, basic", "Jan 26, 2025") == "24,555"
    # the group label spans the three date columns (JSON spans), the dates are one header row
    assert t.spans and (0, 1, 1, 3) in t.spans
    assert [_norm(c) for c in cells[1][1:]] == DATES
    # the text around the table stays paragraphs, in order
    rest = [b.text for b in sorted(page.blocks, key=lambda b: b.order) if b.role != "table"]
    assert rest[0] == "Consolidated Statements of Income"
    assert rest[-1].startswith("See accompanying notes")
    assert not any("1,136" in x or "Jan 2" in x for x in rest)


def test_simple_borderless_table_under_a_caption_is_a_grid(scanned):
    page = scanned.pages[1]
    assert (page.route, page.status) == ("ocr", "ok")
    (t,) = tables_of(page)
    for row in STATIONS[1:]:
        assert value(t.cells, row[0], "Keeper") == row[1]
        assert value(t.cells, row[0], "Elevation (m)") == row[2]
        assert value(t.cells, row[0], "Opened") == row[3]
    text = " ".join(b.text for b in page.blocks if b.role != "table")
    assert "Table 2. Weather stations" in text and "read every morning" in text and "harbour only" in text


def test_prose_columns_and_a_numbered_list_stay_paragraphs(scanned):
    for page in scanned.pages[2:]:
        assert page.route == "ocr"
        assert not tables_of(page), [b.text[:60] for b in page.blocks]
    words = " ".join(b.text for b in scanned.pages[3].blocks)
    assert all(w in words for w in ("Apples", "Pears", "Plums", "Figs", "see note 7"))
