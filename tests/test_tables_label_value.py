"""Two-column label/amount tables and two text columns written row by row (a notice page).

Pages are generated with PyMuPDF in the shape of a tax notice: two justified-ish prose columns,
and in the right column a small unruled table of payroll periods beside right-aligned amounts
(a "$" standing apart before the first amount, a parenthesised note wrapped under the last
label). The producer writes each text row across both columns, so MuPDF groups lines of both
columns into one block: that block is no evidence for reading the page in MuPDF's order.
"""

from __future__ import annotations

import random

import pymupdf

from pagerouter.common.pagetext import extract_textdict
from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.textlayer import read_text_layer
from pagerouter.textlayer.lines import Line
from pagerouter.textlayer.native import reentries, side_by_side_blocks

CFG = TextLayerConfig()
WORDS = (
    "the committee reviewed results of various studies and found that measured values agree with earlier "
    "estimates within small margins while several outliers remain unexplained by current models"
).split()
ROWS = [("Weekly", "$", "71.15"), ("Biweekly", "", "142.31"), ("Semimonthly", "", "154.17"), ("Monthly", "", "308.33"),
        ("Quarterly", "", "925.00"), ("Semiannually", "", "1,850.00"), ("Annually", "", "3,700.00"),
        ("Daily or Miscellaneous", "", "14.23")]


def _prose(rng: random.Random, n: int, width: float, first: str) -> list[str]:
    out, cur = [], first.split()
    while len(out) < n:
        w = rng.choice(WORDS)
        if pymupdf.get_text_length(" ".join([*cur, w]), "helv", 9) > width:
            out.append(" ".join(cur))
            cur = []
        cur.append(w)
    return out


def notice_page(table: bool) -> pymupdf.Document:
    """Left column: prose in paragraphs of 6 lines. Right column: prose, the table (when
    `table`), prose. Lines are written in row order across both columns."""
    rng = random.Random(3)
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    left_text = [*_prose(rng, 46, 250, "Left column begins"), "left column ends."]
    right_text = [*_prose(rng, 24, 245, "Right column begins"), "right column ends."]
    lh = 11.5
    items: list[tuple[float, float, str]] = []
    for k, t in enumerate(left_text):
        y = 80 + k * lh + 9 * (k // 6)
        if y < 740:
            items.append((y, 42, t))
    y = 80.0
    for k, t in enumerate(right_text[:8]):
        items.append((y, 318, t))
        y += lh + (9 if k == 3 else 0)
    if table:
        y += 8
        items += [(y, 323, "Payroll Period"), (y, 488, "Allowance")]
        y += 16
        for label, sign, value in ROWS:
            items.append((y, 323, label))
            if sign:
                items.append((y, 500, sign))
            items.append((y, 537 - pymupdf.get_text_length(value, "helv", 9), value))
            y += 16
        items.append((y - 5, 332, "(each day of the payroll period)"))
        y += 8
    for k, t in enumerate(right_text[8:]):
        items.append((y, 318, t))
        y += lh + (9 if k % 7 == 6 else 0)
    # the producer writes each text row across both columns
    for y, x, t in sorted(items, key=lambda a: (round(a[0]), a[1])):
        page.insert_text((x, y), t, fontsize=9, fontname="helv")
    return doc


def read(doc: pymupdf.Document):
    page = doc[0]
    return read_text_layer(page, extract_textdict(page), 1, CFG)


def test_label_amount_table_in_one_column_is_found_with_its_header_sign_and_wrapped_label():
    blocks = read(notice_page(table=True))
    tables = [b for b in blocks if b.role == "table"]
    assert len(tables) == 1, [b.text[:60] for b in blocks]
    want = [["Payroll Period", "Allowance"], ["Weekly", "$71.15"],
            *[[label, value] for label, _, value in ROWS[1:-1]],
            ["Daily or Miscellaneous (each day of the payroll period)", "14.23"]]
    assert tables[0].cells == want
    # the prose beside the table stays text, none of it in a cell
    x0, _, x1, _ = tables[0].bbox
    assert x0 > 306 and x1 < 560


def test_columns_written_row_by_row_are_read_column_by_column():
    blocks = [b for b in read(notice_page(table=False)) if b.role not in ("header", "footer", "page_number")]
    text = " ".join(b.text for b in blocks)
    assert text.index("left column ends") < text.index("Right column begins")
    assert text.index("Left column begins") < text.index("left column ends")
    for b in blocks:  # no block holds words of both columns
        assert b.bbox[2] < 306 or b.bbox[0] > 306, b.text[:80]


def test_contents_page_of_labels_and_page_numbers_is_not_a_table():
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 90.0
    for k, title in enumerate(["Introduction", "Background and scope", "Methods", "Sampling plan", "Results",
                               "Discussion", "Limitations", "Conclusions", "References"]):
        page.insert_text((72, y), title, fontsize=11, fontname="helv")
        num = str(3 + 4 * k)
        page.insert_text((540 - pymupdf.get_text_length(num, "helv", 11), y), num, fontsize=11, fontname="helv")
        y += 18
    assert not [b for b in read(doc) if b.role == "table"]


def _ln(x0: float, y: float, x1: float, block: int, rank: int) -> Line:
    text = "words of a prose line that runs on"
    return Line(x0, y, x1, y + 9, text, 9.0, False, False, chars=len(text), seq=(block, rank))


def test_a_block_of_side_by_side_lines_is_no_evidence_against_the_cut():
    # two columns; MuPDF blocks 0 and 1 each hold rows of both columns (left, right, left, ...)
    left = [_ln(42, 80 + 12 * k, 290, k // 3, 2 * k) for k in range(6)]
    right = [_ln(318, 80 + 12 * k, 560, k // 3, 2 * k + 1) for k in range(6)]
    assert side_by_side_blocks([*left, *right]) == {0, 1}
    assert reentries([*left, *right], CFG.form_max_words) == 0  # read column by column
    # blocks that keep to one column still count: leaving block 0 for 1 and coming back is one
    col = [_ln(42, 80 + 12 * k, 290, [0, 1, 0][k], k) for k in range(3)]
    assert reentries(col, CFG.form_max_words) == 1


def results_table_page() -> pymupdf.Document:
    """A paper's unruled results table: group labels ("Turns", "Lane change") over three
    columns each, the third column's header broken over two lines ("Time-to-" / "maneuver
    (s)"), then, one line-gap under the last row, the next table's caption in the left half
    beside the short labels of a figure in the right half."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    put = lambda x, y, t: page.insert_text((x, y), t, fontsize=8, fontname="tiro")  # noqa: E731
    xs = [200, 240, 280, 340, 380, 420]
    put(250, 100, "Turns")
    put(365, 100, "Lane change")
    for k in (2, 5):
        put(xs[k], 108, "Time-to-")
    put(100, 113, "Method")
    for k in range(6):
        put(xs[k], 113 if k % 3 != 2 else 117, ["Pr (%)", "Re (%)", "maneuver (s)"][k % 3])
    rows = [("SVM", "64.7 47.2 2.40 73.7 57.8 2.40"), ("AIO-HMM", "80.8 75.2 4.16 83.8 79.2 3.80"),
            ("S-RNN", "81.2 78.6 3.94 92.7 84.4 3.46")]
    for i, (name, vals) in enumerate(rows):
        put(100, 130 + 9 * i, name)
        for x, v in zip(xs, vals.split()):
            put(x, 130 + 9 * i, v)
    put(60, 168, "Table 3: Results on the second data set, where the model derived from the graph")
    for x, t in [(380, "Ground-truth"), (440, "stationary"), (490, "reachable"), (540, "movable")]:
        put(x, 168, t)
    return doc


def test_stacked_header_broken_at_a_hyphen_and_the_next_caption_outside_the_table():
    tables = [b for b in read(results_table_page()) if b.role == "table"]
    assert len(tables) == 1
    cells = tables[0].cells
    assert cells[-2:] == [["AIO-HMM", "80.8", "75.2", "4.16", "83.8", "79.2", "3.80"],
                          ["S-RNN", "81.2", "78.6", "3.94", "92.7", "84.4", "3.46"]]
    header = cells[1]
    assert header == ["Method", "Pr (%)", "Re (%)", "Time-to-maneuver (s)", "Pr (%)", "Re (%)", "Time-to-maneuver (s)"]
    assert cells[0][1:4] == ["Turns"] * 3 and cells[0][4:] == ["Lane change"] * 3
    assert len(cells) == 5  # group row, header row, three rows: no caption or figure label row


def booktabs_page() -> pymupdf.Document:
    """A booktabs table at the top of a column (top rule, rule under the header, bottom rule),
    then prose, then a section rule of the same extent far below. The top rule starts half a
    point right of the others (305.6 against 305.1: a rounding step apart)."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    put = lambda x, y, t: page.insert_text((x, y), t, fontsize=8, fontname="tiro")  # noqa: E731
    page.draw_line((305.6, 59.5), (550.4, 59.5), width=0.8)
    page.draw_line((305.1, 77.0), (550.9, 77.0), width=0.8)
    for x, t in [(306, "No."), (347, "Isolate"), (420, "Pathotype"), (499, "Source")]:
        put(x, 71, t)
    data = [("1", "G31", "Japanese pear", "Gifu, Japan"), ("2", "T88-52", "Japanese pear", "Tottori, Japan"),
            ("3", "O-187", "Strawberry", "Iwate, Japan"), ("4", "AM-1", "Apple", "Aichi, Japan")]
    for i, row in enumerate(data):
        for x, t in zip((310, 347, 420, 499), row):
            put(x, 90 + 9 * i, t)
    page.draw_line((305.6, 130.0), (550.4, 130.0), width=0.8)
    for k in range(14):
        put(306, 160 + 11 * k, "the isolates were kept on potato sucrose agar and tested")
    page.draw_line((305.7, 340.0), (550.4, 340.0), width=0.5)
    put(306, 356, "Materials and methods")
    return doc


def test_booktabs_rules_frame_their_table_not_the_prose_down_to_a_section_rule():
    tables = [b for b in read(booktabs_page()) if b.role == "table"]
    assert len(tables) == 1
    assert tables[0].cells == [["No.", "Isolate", "Pathotype", "Source"], ["1", "G31", "Japanese pear", "Gifu, Japan"],
                               ["2", "T88-52", "Japanese pear", "Tottori, Japan"], ["3", "O-187", "Strawberry", "Iwate, Japan"],
                               ["4", "AM-1", "Apple", "Aichi, Japan"]]
