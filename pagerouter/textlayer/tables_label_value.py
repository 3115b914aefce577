"""Two-column tables of labels and amounts, found from the text layer's geometry.

The general whitespace search (`tables.text_candidates`) wants `table_min_cols` (3) aligned
columns, because two columns of short fragments are also what a form, a list of headings
beside their page numbers or a heading over its first line look like. A label column beside
one column of amounts ("Weekly ... $ 71.15", "Biweekly ... 142.31", a payroll period table,
a statement of a few totals) is still a table a reader writes down, and it has its own
evidence, checked here:

* at least `table_min_rows + 1` rows (one more than a wider table needs: two columns are
  weaker evidence), each a label fragment and, set apart by a clear gap, one amount (a
  number, a percentage, a dash standing for none; a currency sign may stand alone before it);
* the amounts line up on their right edges (numbers are set flush right) or on their left;
* the labels start at one left edge (indents of sub-rows allowed), and a gap of at least
  `_MIN_GAP_EM` em separates the labels' right edges from the amounts;
* the amounts are not page numbers: a run of plain whole numbers that never decrease (a
  contents page, an index) or labels ending in leader dots are not tables;
* a row of one label fragment (a section label, the wrapped second line of a label) may sit
  between such rows (at most `table_bridge_rows` in a row), and up to `table_header_max_lines`
  short lines right above the first row, inside the table's width, are its header ("Payroll
  Period" over the labels, "One Withholding / Allowance" over the amounts).

The region goes to the same cell builder as every whitespace table
(`tables_text.build_text_table`), which decides the header, the sign column and wrapped
labels. The search runs inside each text column (a table in one column of a notice has the
other column's prose on its rows) and over the whole page when it has no columns.
"""

from __future__ import annotations

import re
import statistics

from ..config.textlayer import TextLayerConfig
from ..common.geometry import BBox
from .lines import Line
from .tables import text_rows
from .tables_text import _SIGNS, is_value

_MIN_GAP_EM = 1.5
"""Whitespace (em) between the widest label and the amounts: a word space or a tab stop in
prose is narrower; a table's value column stands clearly apart."""

_ALIGN_PT = 2.0
"""Points two amounts' edges may differ and still be one column's alignment."""

_LEADERS = re.compile(r"(?:\.\s*){4,}$|…$")
"""Leader dots at the end of a label: a contents or index entry, not a table row."""

_WHOLE = re.compile(r"^\d{1,4}$")


def _split(row: list[Line]) -> tuple[Line, list[Line]] | None:
    """(label, amount fragments) when the row is a label followed by one amount (a lone
    currency sign may stand before it), else None."""
    if len(row) < 2 or is_value(row[0].text) or row[0].text.strip() in _SIGNS:
        return None
    rest = row[1:]
    texts = [f.text.strip() for f in rest]
    values = [t for t in texts if t not in _SIGNS]
    if len(values) != 1 or not is_value(values[0]) or any(t in _SIGNS for t in texts[1:]):
        return None
    return row[0], rest


def _aligned(xs: list[float]) -> bool:
    """Most of `xs` within `_ALIGN_PT` of their median."""
    m = statistics.median(xs)
    return sum(1 for x in xs if abs(x - m) <= _ALIGN_PT) >= 0.8 * len(xs)


def _is_table(pairs: list[tuple[Line, list[Line]]], em: float) -> bool:
    labels = [lab for lab, _ in pairs]
    amounts = [a[-1] for _, a in pairs]
    if not (_aligned([a.x1 for a in amounts]) or _aligned([a.x0 for a in amounts])):
        return False
    left = min(lab.x0 for lab in labels)
    # the labels share a left edge (sub-rows may be indented, not scattered like prose)
    if sum(1 for lab in labels if lab.x0 - left <= _ALIGN_PT) < 0.6 * len(labels):
        return False
    if min(a[0].x0 for _, a in pairs) - max(lab.x1 for lab in labels) < _MIN_GAP_EM * em:
        return False
    if any(_LEADERS.search(lab.text.rstrip()) for lab in labels):
        return False
    texts = [a.text.strip() for a in amounts]
    if all(_WHOLE.match(t) for t in texts):
        nums = [int(t) for t in texts]
        if all(b >= a for a, b in zip(nums, nums[1:])):
            return False  # page numbers of a contents page or an index
    return True


def label_value_candidates(lines: list[Line], cfg: TextLayerConfig, em: float) -> list[BBox]:
    """Regions of two-column label/amount tables among `lines` (one text column, or a page
    without columns): see the module docstring."""
    rows = text_rows([ln for ln in lines if ln.horizontal and ln.role is None])
    out: list[BBox] = []
    i = 0
    while i < len(rows):
        if _split(rows[i]) is None:
            i += 1
            continue
        start = i
        pairs: list[tuple[Line, list[Line]]] = []
        members: list[Line] = []
        weak: list[Line] = []
        j = i
        while j < len(rows):
            row = rows[j]
            last = (weak or members)[-1] if (weak or members) else None
            if last is not None and row[0].y0 - last.y1 > 2.0 * em and not _section_apart(rows, j, pairs, last, em, cfg):
                break  # a paragraph's distance: the table ended
            got = _split(row)
            if got is not None:
                pairs.append(got)
                members += weak + row
                weak = []
            elif (len(row) == 1 and len(weak) < cfg.table_bridge_rows and pairs
                  and row[0].words() <= 2 * cfg.table_max_cell_words
                  and row[0].x1 < min(a[0].x0 for _, a in pairs)):
                weak.append(row[0])  # a section label or a label's second line, in the label column
            else:
                break
            j += 1
        # a label's wrapped last line after the last amount belongs to the table too
        members += [w for w in weak if w.y0 - members[-1].y1 <= 0.6 * w.height] if members else []
        i = max(j, i + 1)
        if len(pairs) < cfg.table_min_rows + 1 or not _is_table(pairs, em):
            continue
        members += _header(rows[:start], members, pairs, cfg, em)
        out.append((min(f.x0 for f in members), min(f.y0 for f in members),
                    max(f.x1 for f in members), max(f.y1 for f in members)))
    return out


_SECTION_GAP_EM = 4.0
"""Space (em) a statement may leave above a section label ("Class B", "Total for the Fund")
inside one table: a blank row or two of its own pitch, never a page's worth."""


def _section_apart(rows: list[list[Line]], j: int, pairs: list[tuple[Line, list[Line]]], last: Line, em: float,
                   cfg: TextLayerConfig) -> bool:
    """Row `j`, far below the run, is a section label of the same table: a statement sets its
    groups apart with blank rows ("Class A" rows, space, "Class B" rows). It is one short
    fragment at the labels' left edge, within `_SECTION_GAP_EM`, and right under it (a row's
    usual distance) comes a label/amount row whose amount stands in the run's amount column.
    Prose after a table fails it: a sentence is long, and no amount follows in that column."""
    row = rows[j]
    if not pairs or len(row) != 1 or j + 1 >= len(rows) or row[0].y0 - last.y1 > _SECTION_GAP_EM * em:
        return False
    lab = row[0]
    left = min(p[0].x0 for p in pairs)
    if abs(lab.x0 - left) > _ALIGN_PT or lab.words() > 2 * cfg.table_max_cell_words:
        return False
    if lab.x1 >= min(a[0].x0 for _, a in pairs):
        return False
    nxt = _split(rows[j + 1])
    if nxt is None or rows[j + 1][0].y0 - lab.y1 > 2.0 * em:
        return False
    right = statistics.median([a[-1].x1 for _, a in pairs])
    return abs(nxt[1][-1].x1 - right) <= _ALIGN_PT


def _header(above: list[list[Line]], members: list[Line], pairs: list[tuple[Line, list[Line]]],
            cfg: TextLayerConfig, em: float) -> list[Line]:
    """Short lines right above the first row, inside the table's width, none a sentence: the
    header over the labels and the amounts."""
    x0 = min(lab.x0 for lab, _ in pairs)
    x1 = max(a[-1].x1 for _, a in pairs)
    top = min(f.y0 for f in members)
    out: list[Line] = []
    for row in reversed(above[-cfg.table_header_max_lines:]):
        if top - max(f.y1 for f in row) > 1.2 * em:
            break
        # a header over the amounts may reach past their right edge ("One Withholding")
        if not all(f.x0 >= x0 - _ALIGN_PT and f.x1 <= x1 + 4 * em for f in row):
            break
        if any(f.words() > cfg.table_max_cell_words or f.text.rstrip().endswith((".", ":")) for f in row):
            break
        out += row
        top = min(f.y0 for f in row)
    return out
