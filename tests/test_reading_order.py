"""The one reading order (pagerouter.layout.reading_order) as each route calls it.

Every geometric case runs twice: in points with the text layer's parameters (lines, em 10 pt)
and in pixels of a 170 dpi render with the OCR route's (layout regions: no words, point floor
times the scale). The last tests go through the OCR route's block assembly with a fake line
reader, so the final ordering in points is covered end to end without any model.
"""

from __future__ import annotations

import numpy as np
import pytest

from pagerouter.config.ocr import OcrConfig
from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.model import TriageDecision
from pagerouter.ocr.lines import OcrLine
from pagerouter.ocr.regions import read_task_with_lines
from pagerouter.layout.reading_order import LINE_BOX_EM, OrderParams, median_height, order_boxes, order_with_keys
from pagerouter.common.stages import LayoutResult, OcrTask

SCALE = 170 / 72  # the OCR route's default render: pixels per point

ROUTES = {
    # text layer: TextLayerConfig values, body size 10 pt, boxes in points
    "text_layer": (1.0, OrderParams.for_lines(10.0, TextLayerConfig())),
    # OCR layout regions: pixels, no line read yet (em unknown)
    "ocr_pixels": (SCALE, OrderParams.for_blocks(0.0, SCALE)),
}


def _px(boxes, s):
    return [tuple(v * s for v in b) for b in boxes]


def _order(route, boxes, **kw):
    s, params = ROUTES[route]
    return order_boxes(_px(boxes, s), params, **kw)


def _lines(x0, x1, top, n, step=14.0, h=10.0):
    return [(x0, top + step * k, x1, top + step * k + h) for k in range(n)]


both = pytest.mark.parametrize("route", list(ROUTES))


# ---- parameters --------------------------------------------------------------------------


def test_gap_is_the_text_layer_gutter_in_the_callers_units():
    cfg = TextLayerConfig()
    tl = OrderParams.for_lines(10.0, cfg)
    assert tl.min_gap == max(cfg.min_column_gap_pt, cfg.min_column_gap_em * 10.0)
    assert (tl.max_blockers, tl.form_pair_share, tl.form_max_words) == (
        cfg.gutter_max_blockers, cfg.form_pair_share, cfg.form_max_words)
    big = OrderParams.for_lines(20.0, cfg)  # large body text: the em term wins
    assert big.min_gap == pytest.approx(cfg.min_column_gap_em * 20.0)
    px = OrderParams.for_blocks(0.0, SCALE)  # OCR regions: the point floor in pixels
    assert px.min_gap == pytest.approx(cfg.min_column_gap_pt * SCALE)
    ocr = OrderParams.for_blocks(14.0)  # OCR blocks in points, median line box 14 pt: 11.2 pt text
    assert ocr.min_gap == pytest.approx(cfg.min_column_gap_em * 14.0 / LINE_BOX_EM)
    mixed = OrderParams.for_blocks(20.0, line_sets_gap=False)  # a mixed page: OCR lines are a picture's
    assert mixed.min_gap == cfg.min_column_gap_pt and mixed.line == 20.0
    assert ocr.blocks and px.blocks and not tl.blocks
    assert (ocr.line, px.line, tl.line) == (14.0, 0.0, 0.0)
    assert median_height([(0, 0, 5, 10), (0, 0, 5, 30), (0, 0, 5, 12)]) == 12
    assert median_height([]) == 0.0


# ---- columns -----------------------------------------------------------------------------


@both
def test_two_columns_read_column_by_column(route):
    left = _lines(50, 290, 100, 8)
    right = _lines(310, 550, 100, 8)  # baselines line up with the left column's
    boxes = right + left  # scrambled input order
    order = _order(route, boxes, words=[9] * len(boxes))
    assert [boxes[i] for i in order] == left + right


@both
def test_full_width_title_above_columns(route):
    title = (50, 40, 550, 70)
    left = [(50, 100 + 60 * k, 290, 150 + 60 * k) for k in range(4)]
    right = [(310, 100 + 60 * k, 550, 150 + 60 * k) for k in range(4)]
    boxes = right + [title] + left
    assert [boxes[i] for i in _order(route, boxes)] == [title] + left + right


@both
def test_aligned_columns_above_a_full_width_table(route):
    left = [(50, 100 + 60 * k, 290, 150 + 60 * k) for k in range(3)]
    right = [(310, 100 + 60 * k, 550, 150 + 60 * k) for k in range(3)]
    table = (50, 400, 550, 500)
    boxes = [table] + right + left
    assert [boxes[i] for i in _order(route, boxes)] == left + right + [table]


@both
def test_a_wide_table_the_next_column_wraps_around_is_read_with_its_own_column(route):
    """A journal table at the foot of the left column reaches into the gutter; the right
    column's lines beside it are set narrower, clear of it (real: failing_pdf_pg9 p3). The
    table is the left column's: left column, caption, table, then the whole right column.
    Cut into bands around it, the right column's lines above its top came before it and the
    lines beside it after it."""
    left = _lines(50, 290, 100, 20)
    right_top = _lines(310, 550, 100, 21)
    caption = (50, 400, 380, 410)
    table = (50, 416, 380, 520)
    right_beside = _lines(400, 550, 400, 9)
    boxes = right_beside + [table] + right_top + [caption] + left
    words = [9] * len(right_beside) + [0] + [9] * len(right_top) + [12] + [9] * len(left)
    order = _order(route, boxes, words=words)
    assert [boxes[i] for i in order] == left + [caption, table] + right_top + right_beside


@both
def test_a_wide_box_with_scattered_labels_beside_it_still_cuts_the_columns_into_bands(route):
    """The wrap rule wants prose beside the box, set to one edge: an equation's pieces or a
    diagram's labels beside a box that crosses the gutter keep the band cut."""
    left = _lines(50, 290, 100, 20)
    right_top = _lines(310, 550, 100, 21)
    wide = (50, 416, 380, 520)
    labels = [(400, 420, 420, 430), (470, 450, 490, 460), (430, 480, 450, 490)]
    boxes = labels + [wide] + right_top + left
    words = [1] * len(labels) + [0] + [9] * len(right_top) + [9] * len(left)
    order = [boxes[i] for i in _order(route, boxes, words=words)]
    assert order.index(wide) > order.index(right_top[-1])  # the band cut: both columns' tops first
    assert order.index(wide) < min(order.index(b) for b in labels)


@both
def test_full_width_block_between_two_column_sections(route):
    boxes = [(50, 50, 290, 100), (310, 50, 550, 100), (50, 120, 550, 200), (50, 220, 290, 260), (310, 220, 550, 260)]
    assert _order(route, boxes) == [0, 1, 2, 3, 4]


@both
def test_aligned_columns_between_full_width_elements_are_never_read_row_by_row(route):
    """Title, aligned columns, a full-width figure, aligned columns, a full-width footnote:
    every row of lines has whitespace across the page, and the full-width pieces block the
    gutter; still each section is read column by column."""
    title = (50, 40, 550, 64)
    a_left, a_right = _lines(50, 290, 90, 10), _lines(310, 550, 90, 10)
    figure = (50, 250, 550, 400)
    b_left, b_right = _lines(50, 290, 420, 10), _lines(310, 550, 420, 10)
    note = (50, 580, 550, 592)
    expected = [title] + a_left + a_right + [figure] + b_left + b_right + [note]
    boxes = list(reversed(expected))
    words = [0 if b == figure else 8 for b in boxes]
    assert [boxes[i] for i in _order(route, boxes, words=words)] == expected
    assert [boxes[i] for i in _order(route, boxes)] == expected  # words unknown: same


@both
def test_three_columns(route):
    cols = [_lines(50 + 170 * c, 200 + 170 * c, 100, 6) for c in range(3)]
    boxes = [b for row in zip(*cols) for b in row]  # row by row in the input
    assert [boxes[i] for i in _order(route, boxes, words=[10] * len(boxes))] == [b for c in cols for b in c]


def test_column_keys_separate_columns_and_bands():
    title = (50, 40, 550, 64)
    left, right = _lines(50, 290, 90, 6), _lines(310, 550, 90, 6)
    boxes = [title] + left + right
    keyed = order_with_keys(boxes, ROUTES["text_layer"][1], words=[8] * len(boxes))
    keys = {i: k for i, k in keyed}
    assert len({keys[i] for i in range(1, 7)}) == 1  # one column, one key
    assert len({keys[i] for i in range(7, 13)}) == 1
    assert len({keys[0], keys[1], keys[7]}) == 3  # title, left column, right column differ


# ---- furniture ---------------------------------------------------------------------------


@both
def test_header_first_footer_last_whatever_their_position(route):
    boxes = [(50, 100, 500, 150), (50, 800, 100, 815), (50, 20, 200, 30), (50, 200, 500, 250), (280, 780, 320, 790)]
    kinds = ["text", "footer", "header", "text", "page_number"]
    assert _order(route, boxes, kinds=kinds) == [2, 0, 3, 1, 4]
    keyed = order_with_keys(boxes, ROUTES[route][1], kinds=kinds)
    assert [k[:1] for _i, k in keyed] == [(-1,), (), (), (-2,), (-2,)]


@both
def test_a_header_beside_a_column_stays_first(route):
    """A running head at the top of the right column is not read after the left column."""
    header = (400, 20, 550, 30)
    left, right = _lines(50, 290, 60, 5), _lines(310, 550, 60, 5)
    boxes = left + right + [header]
    kinds = ["text"] * 10 + ["header"]
    assert [boxes[i] for i in _order(route, boxes, kinds=kinds)] == [header] + left + right


# ---- forms -------------------------------------------------------------------------------


@both
def test_form_labels_and_values_are_read_row_by_row(route):
    labels = [(50, 100 + 30 * k, 120, 112 + 30 * k) for k in range(5)]
    values = [(200, 100 + 30 * k, 330, 112 + 30 * k) for k in range(5)]
    boxes = labels + values
    words = [1] * 5 + [2] * 5  # "Name:" | "Jane Doe"
    assert _order(route, boxes, words=words) == [0, 5, 1, 6, 2, 7, 3, 8, 4, 9]


@both
def test_without_word_counts_no_form_is_assumed(route):
    """Layout regions, figures and tables carry no words (0): never labels or values."""
    labels = [(50, 100 + 30 * k, 120, 112 + 30 * k) for k in range(5)]
    values = [(200, 100 + 30 * k, 330, 112 + 30 * k) for k in range(5)]
    assert _order(route, labels + values) == list(range(10))


@both
def test_aligned_prose_columns_are_not_a_form(route):
    left, right = _lines(50, 290, 100, 6), _lines(310, 550, 100, 6)
    assert _order(route, left + right, words=[12] * 12) == list(range(12))


# ---- bands no cut splits -----------------------------------------------------------------


def test_ocr_figure_close_beside_a_column_does_not_interleave_the_column():
    """A sidebar figure 5 pt from a column (narrower than any gutter) chains the column's
    lines into one band; OCR left edges wobble by a point or two, so reading the band left
    to right would shuffle the lines. The figure is peeled and the lines read top down."""
    lines = [(32 + (k * 7) % 3, 100 + 16 * k, 336, 115 + 16 * k) for k in range(18)]
    figure = (343, 80, 578, 420)
    boxes = [figure] + lines[::-1]
    words = [0] + [9] * 18
    got = [boxes[i] for i in order_boxes(boxes, OrderParams.for_blocks(14.0), words=words)]
    assert [b for b in got if b != figure] == lines
    assert got.index(figure) <= 3  # where the band it chains begins, near its top


def test_ocr_picture_under_the_text_is_peeled_and_the_columns_still_cut():
    picture = (0, 0, 612, 500)  # a background picture under two columns and a title
    title = (60, 40, 550, 60)
    left, right = _lines(60, 290, 80, 12, step=16, h=12), _lines(320, 550, 80, 12, step=16, h=12)
    boxes = right + [picture] + left + [title]
    order = order_boxes(boxes, OrderParams.for_blocks(12.0), words=[8] * 12 + [0] + [8] * 13)
    assert [boxes[i] for i in order] == [picture, title] + left + right  # the picture where its top is


def test_ocr_tall_paragraph_beside_stacked_ones_is_a_column_not_a_container():
    """dolma-page-1's blocks (points): a paper's first page, title and author lines crossing
    the gutter, then two columns. The tall abstract beside the stacked introduction paragraphs
    must not be peeled out of its column."""
    head = [(140, 78, 458, 116), (85, 135, 159, 147), (188, 134, 271, 148), (297, 133, 380, 147),
            (406, 135, 492, 147), (115, 156, 469, 177), (84, 170, 504, 268), (175, 251, 447, 280),
            (266, 289, 311, 304), (82, 310, 523, 359)]
    left = [(156, 384, 204, 396), (85, 409, 275, 706), (92, 716, 258, 741), (91, 767, 291, 777)]
    right = [(304, 384, 390, 396), (304, 404, 527, 593), (307, 603, 527, 708), (307, 717, 526, 729),
             (304, 736, 527, 777)]
    foot = [(284, 782, 314, 795), (50, 797, 545, 820)]
    boxes = head + right + left + foot
    words = [6, 2, 2, 2, 2, 9, 30, 8, 2, 20] + [2, 160, 120, 7, 40] + [1, 150, 3, 8] + [1, 12]
    got = [boxes[i] for i in order_boxes(boxes, OrderParams.for_blocks(12.3), words=words)]
    assert got[len(head):len(head) + 9] == left + right
    assert got[-2:] == foot


def test_text_layer_reads_a_band_no_cut_splits_left_to_right():
    """Lines have exact PDF coordinates: a chained band (diagram labels at staggered heights)
    stays one row, read left to right, as the text layer always did."""
    boxes = [(300, 104, 340, 114), (100, 100, 140, 110), (200, 108, 240, 118)]
    assert order_boxes(boxes, ROUTES["text_layer"][1], words=[1, 1, 1]) == [1, 2, 0]


def test_ocr_columns_of_headings_list_items_and_paragraphs_are_not_a_form():
    """slideshow_mostly_images p34's blocks (points): two columns of prescribing-information
    highlights, many 'Text (4)' items and headings of 1-4 words beside each other. Counted in
    blocks the median is 2-3 words and most have a partner at the same height: a form. Counted
    in lines, as the text layer counts, the paragraphs weigh in and it is two columns."""
    left = [((15, 100, 246, 111), 4), ((13, 112, 335, 147), 23), ((13, 158, 336, 183), 12), ((14, 183, 150, 196), 4),
            ((27, 210, 327, 234), 12), ((23, 243, 66, 259), 2), ((24, 258, 74, 271), 2), ((108, 295, 251, 307), 3),
            ((13, 307, 338, 332), 12), ((111, 342, 247, 354), 3), ((14, 353, 321, 379), 15), ((14, 390, 140, 403), 5),
            ((22, 414, 262, 440), 5), ((23, 438, 72, 452), 2)]
    right = [((385, 99, 636, 125), 8), ((489, 136, 604, 146), 1), ((394, 146, 435, 162), 2), ((394, 160, 434, 174), 2),
             ((465, 185, 629, 195), 3), ((395, 195, 442, 210), 2), ((395, 208, 442, 222), 2), ((487, 233, 606, 244), 2),
             ((384, 243, 675, 257), 10), ((384, 268, 698, 304), 19), ((486, 315, 601, 327), 2), ((394, 327, 442, 341), 2),
             ((395, 340, 442, 354), 2), ((471, 363, 638, 375), 4), ((395, 376, 442, 390), 2), ((394, 389, 442, 403), 2),
             ((384, 414, 667, 438), 14), ((620, 447, 704, 461), 2)]
    items = sorted(left + right, key=lambda bw: bw[0][1])  # top down, as rows
    boxes, words = [b for b, _w in items], [w for _b, w in items]
    got = [boxes[i] for i in order_boxes(boxes, OrderParams.for_blocks(13.55), words=words)]
    assert got == [b for b, _w in left] + [b for b, _w in right]


@both
def test_overlapping_boxes_fall_back_to_top_down(route):
    boxes = [(50, 60, 300, 120), (40, 50, 310, 110)]
    assert _order(route, boxes) == [1, 0]


# ---- the OCR route's block assembly (fake reader, no model) -------------------------------


class _Reader:
    name = "fake"
    version = "0"

    def __init__(self, lines):
        self.lines = lines

    def read_image_lines(self, image, script=None):
        return [OcrLine(l.bbox, l.text, l.confidence) for l in self.lines]


def _ocr_read(items, regions=()):
    """(text, box in points) -> blocks through read_task_with_lines at SCALE."""
    lines = [OcrLine(tuple(v * SCALE for v in box), text, 0.99) for text, box in items]
    h, w = int(842 * SCALE), int(595 * SCALE)
    task = OcrTask("fake.pdf", 1, 595, 842, TriageDecision(route="ocr"), np.full((h, w, 3), 255, np.uint8),
                   SCALE, b"")
    return read_task_with_lines(task, LayoutResult(0, list(regions)), _Reader(lines), OcrConfig(), script="Latin").blocks


def test_ocr_blocks_of_aligned_columns_under_and_over_full_width_text():
    items = [("Report on routing", (60, 60, 400, 78))]
    for col, x0 in (("L", 60), ("R", 310)):
        items += [(f"{col}{k} column text line with words", (x0, 120 + 14 * k, x0 + 225, 130 + 14 * k)) for k in range(8)]
    items.append(("Full width closing paragraph of the page", (60, 300, 535, 310)))
    blocks = _ocr_read(items)
    text = " ".join(b.text for b in blocks)
    marks = [text.find(m) for m in ("Report", "L0 ", "L7 ", "R0 ", "R7 ", "Full width")]
    assert all(m >= 0 for m in marks) and marks == sorted(marks), text
    assert [b.order for b in blocks] == list(range(len(blocks)))


def test_ocr_blocks_of_a_form_read_row_by_row():
    """Rows far enough apart to be separate blocks: label, value, label, value."""
    items = []
    for k, (label, value) in enumerate([("Name:", "Jane Doe"), ("Date:", "12 May 2024"), ("Total:", "1,250.00 EUR")]):
        y = 100 + 40 * k
        items += [(label, (60, y, 110, y + 10)), (value, (220, y, 330, y + 10))]
    blocks = _ocr_read(items)
    assert [b.text for b in blocks] == ["Name:", "Jane Doe", "Date:", "12 May 2024", "Total:", "1,250.00 EUR"]
