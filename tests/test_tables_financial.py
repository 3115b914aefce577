"""Unruled financial statements (a 10-K income statement), built fresh with PyMuPDF: a label
column, a column group label ("Year Ended December 31,") over two or three date columns,
currency signs in their own whitespace column, rules drawn over the value columns only (the
group label's underline, the rules over totals, a double rule under the last), wrapped labels
and a page number under the table.

The truth is the grid a reader writes down: the sign joined to its number ("$ 1,975" is one
cell), the group label one cell spanning its columns, a wrapped label one row, the page number
outside the table. Before rules drawn short of the rows were told apart, the rules cut the
table at their ends: labels became a paragraph, the numbers a table of their own, the total
row a loose line of `$` signs and numbers.
"""

from __future__ import annotations

import pymupdf
import pytest

from pagerouter.common.pagetext import extract_textdict
from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.textlayer import read_text_layer

YEARS = ["2023", "2022", "2021"]
ROWS = [  # label, values, currency row (a `$` column before each value), total row (ruled above)
    ("Revenue", ["12,345", "11,002", "9,876"], True, False),
    ("Cost of revenue", ["7,210", "6,540", "5,990"], False, False),
    ("Research and development", ["1,100", "998", "870"], False, False),
    ("Selling, general and administrative expenses including stock-based compensation",
     ["2,015", "1,870", "1,701"], False, False),
    ("Total operating expenses", ["10,325", "9,408", "8,561"], False, True),
    ("Operating income", ["2,020", "1,594", "1,315"], False, False),
    ("Interest and other income (expense), net", ["(45)", "12", "(8)"], False, False),
    ("Net income", ["1,975", "1,606", "1,307"], True, True),
]
GROUP = "Year Ended December 31,"


def _cut(label: str) -> int:
    return label.rfind(" ", 0, 45)


def _label(label: str, wrap: bool) -> str:
    """The row's label as the page shows it: whole when it wraps, its first line otherwise."""
    return label if wrap or len(label) <= 45 else label[: _cut(label)]


def statement_page(*, dollar: bool, group: bool, ncols: int, wrap: bool, double_rule: bool) -> bytes:
    """One income statement page; returns the PDF bytes."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 72.0
    page.insert_text((72, y), "ACME CORPORATION", fontsize=12, fontname="hebo")
    y += 18
    page.insert_text((72, y), "CONSOLIDATED STATEMENTS OF OPERATIONS", fontsize=11, fontname="hebo")
    y += 14
    page.insert_text((72, y), "(In millions, except per share amounts)", fontsize=9, fontname="helv")
    y += 28
    right = [330 + i * 85 for i in range(ncols)]  # right edges of the value columns
    lo, hi = right[0] - 55, right[-1]  # the rules' extent: the value columns only
    if group:
        w = pymupdf.get_text_length(GROUP, "hebo", 9)
        page.insert_text(((lo + hi - w) / 2, y), GROUP, fontsize=9, fontname="hebo")
        y += 2
        page.draw_line((lo, y), (hi, y), width=0.5)
        y += 11
    for x, yr in zip(right, YEARS):
        page.insert_text((x - pymupdf.get_text_length(yr, "hebo", 9), y), yr, fontsize=9, fontname="hebo")
    y += 16
    for label, vals, cur, total in ROWS:
        if total:
            page.draw_line((lo, y - 10), (hi, y - 10), width=0.5)
        lines = [label]
        if len(label) > 45:  # a long label wraps under itself, indented; its values on its last line
            lines = [label[: _cut(label)], label[_cut(label) + 1 :]] if wrap else [label[: _cut(label)]]
        for k, ln in enumerate(lines):
            page.insert_text((72 + 8 * (k > 0), y), ln, fontsize=9, fontname="helv")
            y += 11 if k < len(lines) - 1 else 0
        for x, v in zip(right, vals):
            page.insert_text((x - pymupdf.get_text_length(v, "helv", 9), y), v, fontsize=9, fontname="helv")
            if dollar and cur:
                page.insert_text((x - 50, y), "$", fontsize=9, fontname="helv")
        if double_rule and label == ROWS[-1][0]:
            for dy in (3, 5):
                page.draw_line((lo, y + dy), (hi, y + dy), width=0.5)
        y += 14
    y += 20
    page.insert_text((72, y), "See accompanying notes to consolidated financial statements.", fontsize=9, fontname="helv")
    page.insert_text((300, 750), "52", fontsize=9, fontname="helv")
    return doc.tobytes()


def expected(*, dollar: bool, group: bool, ncols: int, wrap: bool) -> tuple[list[list[str]], list[tuple[int, int, int, int]]]:
    head = [["", *[GROUP] * ncols]] if group else []
    head.append(["", *YEARS[:ncols]])
    body = [[_label(label, wrap), *[f"${v}" if dollar and cur else v for v in vals[:ncols]]] for label, vals, cur, _t in ROWS]
    spans = [(0, 1, 1, ncols)] if group and ncols > 1 else []
    return [*head, *body], spans


VARIANTS = [
    {"dollar": True, "group": True, "ncols": 3, "wrap": True, "double_rule": False},
    {"dollar": False, "group": True, "ncols": 3, "wrap": True, "double_rule": True},
    {"dollar": True, "group": True, "ncols": 2, "wrap": False, "double_rule": True},
    {"dollar": True, "group": False, "ncols": 3, "wrap": True, "double_rule": True},
    {"dollar": False, "group": True, "ncols": 2, "wrap": True, "double_rule": False},
]


@pytest.mark.parametrize("v", VARIANTS, ids=lambda v: "-".join(f"{k}={int(x)}" for k, x in v.items()))
def test_statement_is_one_table_with_signs_joined_group_spanning_and_page_number_outside(v):
    doc = pymupdf.open("pdf", statement_page(**v))
    page = doc[0]
    blocks = read_text_layer(page, extract_textdict(page), 1, TextLayerConfig())
    tables = [b for b in blocks if b.role == "table"]
    cells, spans = expected(dollar=v["dollar"], group=v["group"], ncols=v["ncols"], wrap=v["wrap"])
    assert [t.cells for t in tables] == [cells]
    assert (tables[0].spans or []) == spans
    # nothing of the table is left outside it: no label paragraph, no loose `$` or numbers
    rest = [b.text for b in blocks if b.role != "table"]
    assert not any(t == "$" or t.replace(",", "").strip("()").isdigit() and t != "52" for t in rest)
    assert [b.text for b in blocks if b.role == "page_number"] == ["52"]


def quarterly_page(rule_each_column: bool) -> bytes:
    """A 10-Q statement: two column groups ("Three Months Ended", "Nine Months Ended") over two
    dates each, each underlined; subtotal rules drawn over each value column on its own, or
    once across all the value columns."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 72), "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS", fontsize=10, fontname="hebo")
    page.insert_text((72, 86), "(In thousands)", fontsize=9, fontname="helv")
    right = [330, 395, 480, 545]
    y = 110.0
    for lab, (a, b) in [("Three Months Ended", (0, 1)), ("Nine Months Ended", (2, 3))]:
        lo, hi = right[a] - 45, right[b]
        w = pymupdf.get_text_length(lab, "hebo", 8)
        page.insert_text(((lo + hi - w) / 2, y), lab, fontsize=8, fontname="hebo")
        page.draw_line((lo, y + 3), (hi, y + 3), width=0.5)
    y += 13
    for x, yr in zip(right, ["2024", "2023", "2024", "2023"]):
        page.insert_text((x - pymupdf.get_text_length(yr, "hebo", 8), y), yr, fontsize=8, fontname="hebo")
    y += 16
    for label, vals in QUARTER:
        page.insert_text((72, y), label, fontsize=9, fontname="helv")
        for x, v in zip(right, vals):
            if v.startswith("$"):
                page.insert_text((x - 45, y), "$", fontsize=9, fontname="helv")
                v = v[1:]
            page.insert_text((x - pymupdf.get_text_length(v, "helv", 9), y), v, fontsize=9, fontname="helv")
        if label.startswith(("Gross", "Income", "Net")):
            for lo, hi in [(x - 45, x) for x in right] if rule_each_column else [(right[0] - 45, right[-1])]:
                page.draw_line((lo, y - 10), (hi, y - 10), width=0.5)
        y += 14
    page.insert_text((300, 750), "4", fontsize=9, fontname="helv")
    return doc.tobytes()


QUARTER = [
    ("Net sales", ["$1,204", "$1,118", "$3,512", "$3,301"]),
    ("Cost of sales", ["702", "655", "2,061", "1,940"]),
    ("Gross profit", ["502", "463", "1,451", "1,361"]),
    ("Operating expenses", ["311", "290", "921", "870"]),
    ("Income from operations", ["191", "173", "530", "491"]),
    ("Net income", ["$140", "$127", "$389", "$360"]),
]


@pytest.mark.parametrize("rule_each_column", [True, False])
def test_two_column_groups_each_span_their_own_dates(rule_each_column):
    doc = pymupdf.open("pdf", quarterly_page(rule_each_column))
    page = doc[0]
    blocks = read_text_layer(page, extract_textdict(page), 1, TextLayerConfig())
    tables = [b for b in blocks if b.role == "table"]
    head = [["", "Three Months Ended", "Three Months Ended", "Nine Months Ended", "Nine Months Ended"],
            ["", "2024", "2023", "2024", "2023"]]
    assert [t.cells for t in tables] == [[*head, *([lab, *vals] for lab, vals in QUARTER)]]
    assert tables[0].spans == [(0, 1, 1, 2), (0, 3, 1, 2)]
    assert [b.text for b in blocks if b.role == "page_number"] == ["4"]
