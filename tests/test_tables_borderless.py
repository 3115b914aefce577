"""Whitespace-aligned (unruled) tables: financial statements with spanning and stacked headers,
currency signs in their own cells, a unit line between header and body, wrapped row labels.

Pages are generated with PyMuPDF; the tests assert cell relationships (row label x column
header -> value), not the grid's shape, and that prose and lists stay paragraphs.
"""

from __future__ import annotations

import pymupdf
import pytest

from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.common.pagetext import extract_textdict
from pagerouter.textlayer import read_text_layer

CFG = TextLayerConfig()

# (label, values, indent level, currency sign on this row)
INCOME = [
    ("Revenue", ["130,497", "60,922", "26,974"], 0, True),
    ("Cost of revenue", ["32,639", "16,621", "11,618"], 0, False),
    ("Gross profit", ["97,858", "44,301", "15,356"], 0, False),
    ("Operating expenses", [], 0, False),
    ("Research and development", ["12,914", "8,675", "7,339"], 1, False),
    ("Sales, general and administrative", ["1,136", "2,654", "2,440"], 1, False),
    ("Acquisition termination cost", ["\u2014", "\u2014", "1,353"], 1, False),
    ("Total operating expenses", ["14,050", "11,329", "11,132"], 0, False),
    ("Operating income", ["83,808", "32,972", "4,224"], 0, False),
    ("Interest income", ["1,786", "866", "267"], 0, False),
    ("Interest expense", ["(247)", "(257)", "(262)"], 0, False),
    ("Other, net", ["1,034", "237", "(48)"], 0, False),
    ("Income before income tax", ["86,381", "33,818", "4,181"], 0, False),
    ("Net income", ["75,235", "29,760", "4,368"], 0, True),
    (("Weighted average shares used in per share", "computation, basic"), ["24,555", "24,690", "24,870"], 0, False),
]
DATES = ["Jan 26, 2025", "Jan 28, 2024", "Jan 29, 2023"]


def _put(page, x, y, text, size, font):
    # the base-14 font embedded as a Unicode font: em-dashes and euro signs come out as written
    name = "U" + font
    if name not in {f[4] for f in page.get_fonts()}:
        page.insert_font(fontname=name, fontbuffer=pymupdf.Font(font).buffer)
    page.insert_text((x, y), text, fontsize=size, fontname=name)


def _width(text, size, font):
    return pymupdf.Font(font).text_length(text, fontsize=size)


def _right(page, x_right, y, text, size, font):
    x = x_right - _width(text, size, font)
    _put(page, x, y, text, size, font)
    return x


def _center(page, xc, y, text, size, font):
    _put(page, xc - _width(text, size, font) / 2, y, text, size, font)


def statement_page(
    doc,
    rows,
    groups,
    leaf_lines,
    *,
    font="helv",
    size=9.0,
    x_label=56.0,
    col_right=(380.0, 460.0, 540.0),
    col_width=62.0,
    sign="$",
    sign_apart=True,
    unit_line="(In millions, except per share data)",
    unit_between=True,
    title="Consolidated Statements of Income",
):
    """A statement page: title, optional unit line, header lines (groups spanning column
    ranges, then one line per stacked header level), rows of label + right-aligned values.
    `sign_apart` puts the currency sign at the column's left edge (its own cell), else just
    before the number."""
    page = doc.new_page(width=612, height=792)
    lead = size * 1.45
    y = 72.0
    _put(page, x_label, y, title, size + 5, font)
    y += 2.2 * lead
    _put(page, x_label, y, "The statement below is presented on the basis described in Note 1.", size, font)
    y += 2 * lead
    if unit_line and not unit_between:
        _put(page, x_label, y, unit_line, size, font)
        y += 1.6 * lead
    for text, first, last in groups:  # spanning group labels on one line, centred over their columns
        _center(page, (col_right[first] - col_width + col_right[last]) / 2, y, text, size, font)
    y += lead if groups else 0
    for line in leaf_lines:
        for c, text in enumerate(line):
            _right(page, col_right[c], y, text, size, font)
        y += lead
    if unit_line and unit_between:
        _put(page, x_label, y, unit_line, size, font)
        y += 1.3 * lead
    for label, values, indent, with_sign in rows:
        labels = label if isinstance(label, tuple) else (label,)
        for k, part in enumerate(labels):
            _put(page, x_label + 10 * (indent + (k > 0)), y, part, size, font)
            if k < len(labels) - 1:
                y += lead * 0.95
        for c, v in enumerate(values):
            x = _right(page, col_right[c], y, v, size, font)
            if with_sign:
                sx = col_right[c] - col_width if sign_apart else x - _width(sign + " ", size, font)
                _put(page, sx, y, sign, size, font)
        y += lead
    y += lead
    _put(page, x_label, y, "See accompanying notes to the consolidated financial statements.", size, font)
    return page


BANK = [
    ("Interest income", ["4.512", "3.980", "2.104", "1.877", "611", "540"], 0, True),
    ("Interest expense", ["(1.203)", "(1.118)", "(655)", "(602)", "(88)", "(71)"], 0, False),
    ("Net interest income", ["3.309", "2.862", "1.449", "1.275", "523", "469"], 0, False),
    ("Fee and commission income", ["1.045", "998", "412", "377", "\u2014", "\u2014"], 0, False),
    ("Trading result", ["(37)", "122", "(15)", "61", "4", "9"], 0, False),
    ("Impairment charges (a)", ["(210)", "(188)", "(97)", "(90)", "(12)", "(9)"], 0, False),
    ("Operating income", ["4.107", "3.794", "1.749", "1.623", "515", "469"], 0, False),
    ("Administrative expenses", ["(2.250)", "(2.101)", "(940)", "(899)", "(301)", "(288)"], 0, False),
    ("Profit before tax", ["1.857", "1.693", "809", "724", "214", "181"], 0, True),
]
BANK_GROUPS = [("Group", 0, 1), ("Retail Banking", 2, 3), ("Insurance", 4, 5)]
BANK_LEAF = [["Dec 31,"] * 6, ["2024", "2023"] * 3]


def bank_page(doc):
    return statement_page(
        doc, BANK, BANK_GROUPS, BANK_LEAF, font="tiro", size=8.0, x_label=40.0,
        col_right=(262.0, 310.0, 376.0, 424.0, 490.0, 538.0), col_width=44.0, sign="\u20ac", sign_apart=False,
        unit_line="in EUR million", unit_between=False, title="Segment income statement",
    )  # fmt: skip


def read(page, cfg=CFG):
    return read_text_layer(page, extract_textdict(page), page.number + 1, cfg)


def tables_of(blocks):
    return [b for b in blocks if b.role == "table"]


def value(cells, label, *headers, norm=lambda s: s):
    """The cell in the row labelled `label` under a column headed by all of `headers` (header
    cells anywhere above the row; a label spanning a column group counts for each column);
    `norm` is applied to every cell compared and to the answer (the OCR route's test strips `$`)."""
    (r,) = [i for i, row in enumerate(cells) if norm(row[0]) == label]
    cols = [j for j in range(1, len(cells[0])) if all(any(norm(cells[i][j]) == h for i in range(r)) for h in headers)]
    assert len(cols) == 1, (label, headers, cols, cells[:4])
    return norm(cells[r][cols[0]])


@pytest.fixture(scope="module")
def pages():
    d = pymupdf.open()
    statement_page(d, INCOME, [("Year Ended", 0, 2)], [DATES])
    bank_page(d)
    yield d
    d.close()


def test_income_statement_is_one_table(pages):
    blocks = read(pages[0])
    (t,) = tables_of(blocks)
    cells = t.cells
    assert value(cells, "Sales, general and administrative", "Jan 26, 2025") == "1,136"
    assert value(cells, "Research and development", "Year Ended", "Jan 28, 2024") == "8,675"
    assert value(cells, "Interest expense", "Jan 29, 2023") == "(262)"
    assert value(cells, "Acquisition termination cost", "Jan 28, 2024") == "\u2014"
    assert value(cells, "Total operating expenses", "Jan 26, 2025") == "14,050"
    # the currency sign, set in its own whitespace column, stays with its number
    assert value(cells, "Revenue", "Jan 28, 2024").lstrip("$ ") == "60,922"
    assert value(cells, "Net income", "Jan 29, 2023").lstrip("$ ") == "4,368"
    assert all(c in ("", "$") or not c.startswith("$") or c[1:].strip()[0].isdigit() for r in cells for c in r)
    # the header is the table's first rows; the spanning label and each date are header cells
    assert cells[0][1:] == ["Year Ended"] * 3 or cells[0][1:] == ["Year Ended", "", ""]
    assert cells[1][1:] == DATES
    # a section label without values is a row, the wrapped label one row with its values
    assert ["Operating expenses", "", "", ""] in cells
    assert value(cells, "Weighted average shares used in per share computation, basic", "Jan 26, 2025") == "24,555"
    assert len(cells) == 2 + len(INCOME)
    # nothing of the table is left over as paragraphs; the text around it keeps its order
    rest = [b.text for b in blocks if b.role != "table"]
    assert rest[0] == "Consolidated Statements of Income"
    assert rest[-1].startswith("See accompanying notes")
    assert not any("Year Ended" in x or "Jan 2" in x or "millions" in x or "1,136" in x for x in rest)
    assert [b.role for b in blocks].index("table") == 2


def test_income_statement_markdown_keeps_both_header_rows(pages):
    (t,) = tables_of(read(pages[0]))
    assert '<th colspan="3">Year Ended</th>' in t.text
    assert "<th>Jan 26, 2025</th>" in t.text and "<td>1,136</td>" in t.text
    gfm = tables_of(read(pages[0], TextLayerConfig(table_html_header=False)))[0].text
    assert gfm.splitlines()[0].startswith("|") and "Sales, general and administrative | 1,136 |" in gfm


def test_three_column_groups_stacked_headers_euro(pages):
    (t,) = tables_of(read(pages[1]))
    cells = t.cells
    assert value(cells, "Trading result", "Retail Banking", "Dec 31, 2024") == "(15)"
    assert value(cells, "Trading result", "Group", "Dec 31, 2023") == "122"
    assert value(cells, "Fee and commission income", "Insurance", "Dec 31, 2023") == "\u2014"
    assert value(cells, "Impairment charges (a)", "Insurance", "Dec 31, 2024") == "(12)"
    assert value(cells, "Interest income", "Group", "Dec 31, 2024").replace(" ", "") == "\u20ac4.512"
    assert value(cells, "Profit before tax", "Insurance", "Dec 31, 2023").replace(" ", "") == "\u20ac181"
    assert len(cells) == 2 + len(BANK)
    assert '<th colspan="2">Retail Banking</th>' in t.text


@pytest.mark.parametrize(
    "font,size,x_label,col_right,sign_apart,unit_between,groups",
    [
        ("cour", 8.0, 40.0, (330.0, 420.0, 510.0), True, False, [("Year Ended", 0, 2)]),
        ("tiro", 10.0, 72.0, (400.0, 470.0, 540.0), False, True, [("Year Ended", 0, 2)]),
        ("helv", 9.5, 60.0, (360.0, 440.0, 520.0), True, True, []),
        ("hebo", 8.5, 50.0, (300.0, 400.0, 500.0), True, False, [("Fiscal year", 0, 2)]),
    ],
)
def test_income_statement_variants(font, size, x_label, col_right, sign_apart, unit_between, groups):
    d = pymupdf.open()
    statement_page(
        d, INCOME, groups, [DATES], font=font, size=size, x_label=x_label, col_right=col_right,
        col_width=min(62.0, col_right[1] - col_right[0] - 8), sign_apart=sign_apart, unit_between=unit_between,
    )  # fmt: skip
    (t,) = tables_of(read(d[0]))
    cells = t.cells
    assert value(cells, "Sales, general and administrative", "Jan 26, 2025") == "1,136"
    assert value(cells, "Other, net", "Jan 29, 2023") == "(48)"
    assert value(cells, "Revenue", "Jan 26, 2025").replace(" ", "") == "$130,497"
    for label, vals, _, with_sign in INCOME[:-1]:
        for date, v in zip(DATES, vals):
            v = "$" + v if with_sign else v
            assert value(cells, label, date).replace(" ", "") == v
    if groups:
        assert value(cells, "Gross profit", groups[0][0], "Jan 28, 2024") == "44,301"


def test_two_value_columns_under_a_unit_line_keep_their_header():
    """Two year columns: the header's date row alone is too narrow to start a table, and the unit
    line between it and the body sits in the label column; the header must still join the table."""
    d = pymupdf.open()
    rows = [(label, vals[:2], ind, sign) for label, vals, ind, sign in INCOME[:9]]
    statement_page(d, rows, [("Year Ended", 0, 1)], [DATES[:2]], col_right=(460.0, 540.0), unit_between=True)
    (t,) = tables_of(read(d[0]))
    assert value(t.cells, "Sales, general and administrative", "Jan 26, 2025") == "1,136"
    assert value(t.cells, "Gross profit", "Year Ended", "Jan 28, 2024") == "44,301"
    assert value(t.cells, "Revenue", "Jan 28, 2024").replace(" ", "") == "$60,922"


@pytest.mark.parametrize("font,gutter", [("helv", 20.0), ("tiro", 28.0)])
def test_a_small_table_in_one_column_of_a_two_column_page(font, gutter):
    """The right column's prose shares every row of a table set in the left column: the table
    is found within its column (cells in the right columns, no prose in a cell), with its
    header cells kept apart even where they are set close ("Station" and "Keeper")."""
    d = pymupdf.open()
    page = d.new_page(width=612, height=792)
    m, colw = 56.0, (612 - 112 - gutter) / 2
    page.insert_text((m, 60), "Stations of the northern survey and their keepers", fontsize=15, fontname=font)
    right = "Rain gauges were read each morning and the readings were copied into the ledger by hand. " * 9
    page.insert_textbox((m + colw + gutter, 90, 612 - m, 600), right, fontsize=9.5, fontname=font)
    page.insert_textbox((m, 90, m + colw, 140), "The table lists each station with its keeper and soil.",
                        fontsize=9.5, fontname=font)
    heads = ["Site", "Keeper", "Station", "Soil"]
    rows = [["Ardmore", "Hale", "North", "Clay"], ["Brent", "Iles", "South", "Loam"],
            ["Carrow", "Jopp", "East", "Sand"], ["Dunmore", "Kerr", "West", "Peat"]]
    xs = [m + k * colw / 4 for k in range(4)]
    for k, h in enumerate(heads):
        page.insert_text((xs[k], 160), h, fontsize=9, fontname="hebo" if font == "helv" else "tibo")
    for r, row in enumerate(rows):
        for k, v in enumerate(row):
            page.insert_text((xs[k], 174 + 12 * r), v, fontsize=9, fontname=font)
    page.insert_textbox((m, 240, m + colw, 400), "After the table the left column goes on with more prose.",
                        fontsize=9.5, fontname=font)
    (t,) = tables_of(read(page))
    assert t.cells[0] == heads
    for row in rows:
        assert value(t.cells, row[0], "Station") == row[2]
        assert value(t.cells, row[0], "Soil") == row[3]
    assert not any("ledger" in c for r in t.cells for c in r)


def test_two_column_prose_and_a_list_stay_paragraphs():
    from pagerouter.bench.synth import LOREM, add_text_page

    d = pymupdf.open()
    add_text_page(d, [LOREM, LOREM[:300], LOREM[:200], LOREM], title="Annual review", columns=2)
    page = d.new_page(width=612, height=792)
    y = 80.0
    for i, item in enumerate(["Apples 12 boxes", "Pears, two crates of 24", "Plums 7", "Figs from 2023, 3 kg"] * 2):
        _put(page, 72, y, f"{i + 1}.", 10, "helv")
        _put(page, 90, y, item, 10, "helv")
        _put(page, 300, y, "see note " + str(i), 10, "helv")
        y += 14
    for p in d:
        blocks = read(p)
        assert not tables_of(blocks), [b.text for b in blocks]


def test_html_table_spans_group_labels_and_escapes():
    from pagerouter.render.table_markdown import cells_to_html

    html = cells_to_html([["", "Group", "Group", "Bank"], ["in <EUR>", "2024", "2023", "2024"], ["A & B", "1", "2", "3"]], 2)
    assert '<tr><th></th><th colspan="2">Group</th><th>Bank</th></tr>' in html
    assert "<th>in &lt;EUR&gt;</th>" in html and "<td>A &amp; B</td>" in html
    assert html.count("<tr>") == 3 and "<tbody>" in html
