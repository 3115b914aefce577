"""Tables: cheap candidate detection, then cells from rules and word positions.

Candidates come from two cheap signals, so a page without either never pays for table work:

* **rules** (`page.get_bboxlog()`, about as cheap as `get_drawings()`): thin horizontal
  paths (and the top/bottom edges of filled cell rectangles) with the same left and right
  ends stacked down the page, at least `table_min_rows` of them -> a ruled table (grid or
  booktabs style). Vertical rules covering at least half the region give column borders.
* **text geometry**: at least `table_min_rows` consecutive rows of at least `table_min_cols`
  short fragments (median words <= `table_max_cell_words`) whose columns line up, and which
  are not justified prose columns. The run passes over a few one-line rows (section labels,
  a unit line) and takes in the header lines standing over its value columns above it. Such a
  region over a drawing (curves and slanted strokes: a diagram, a chart) holds the drawing's
  labels, not a table (`DrawnStrokes`).

Unruled regions get their cells from `tables_text.build_text_table` (header levels, currency
sign columns, wrapped labels: see there); ruled ones from the rules as below.

Cells are then built from `page.get_text("words", clip=region)`: columns from the vertical
rules or from whitespace gaps in the words' x projection, rows from text lines, and a text
line whose first column is empty and sits tight under the previous one continues that row
(wrapped cells). We measured `find_tables()` at 0.5-0.8 s per page here (its `clip` did not
make it cheaper), and on one real file it lost every space inside cells; word positions give
the right words for a fraction of the cost. A candidate that yields fewer than 2 columns or
2 filled rows is not a table and its lines stay text; a table that was built is never
flattened back into paragraphs.
"""

from __future__ import annotations

import bisect
import re
import statistics
from dataclasses import dataclass, field

import pymupdf

from ..config.textlayer import TextLayerConfig
from ..common.geometry import BBox
from ..common.pagetext import words_in
from ..render.table_markdown import cells_to_html, cells_to_markdown, header_spans
from .hyphen import join_lines
from .lines import Line
from .tables_text import _UNIT, build_text_table, bullet_list, column_cuts, phrases, rows_of, word_space


_CAPTION = re.compile(r"^(?:Table|Tab\.|Tabelle|Tableau|Tabla|Figure|Fig\.|Exhibit|Schedule)\s*[A-Z]?[\dIVX]", re.I)


@dataclass
class Table:
    bbox: BBox
    cells: list[list[str]]
    confidence: float
    ruled: bool
    reasons: list[str] = field(default_factory=list)
    header_rows: int = 1  # leading rows of `cells` that are column headers
    html_header: bool = False  # write a table with several header rows as HTML (GFM has one)
    row_spans: list[tuple[int, int, int, int]] = field(default_factory=list)  # merged cells a ruled grid draws

    @property
    def spans(self) -> list[tuple[int, int, int, int]] | None:
        """Spanning cells (row, col, rowspan, colspan); `cells` repeats their text: header group
        labels across columns, and cells a ruled grid draws over several rows."""
        cols = header_spans(self.cells, self.header_rows)
        covered = {(r + i, c + j) for r, c, rs, cs in self.row_spans for i in range(rs) for j in range(cs)}
        cols = [s for s in cols if not any((s[0], s[1] + j) in covered for j in range(s[3]))]
        return sorted(_block_spans({*cols, *self.row_spans})) or None

    def markdown(self) -> str:
        if self.header_rows > 1 and self.html_header:
            return cells_to_html(self.cells, self.header_rows, self.spans or [])
        return cells_to_markdown(self.cells)


# --------------------------------------------------------------------------- candidates


def rule_candidates(
    hrules: list[BBox], vrules: list[BBox], lines: list[Line], cfg: TextLayerConfig, page_h: float
) -> list[tuple[BBox, list[float], list[float]]]:
    """Regions framed by stacked horizontal rules of equal extent: (bbox, row ys, column xs)."""
    groups: list[list[BBox]] = []
    # top down, so that a rule whose ends differ by a rounding step from the next one's
    # (305.6 against 305.1) still joins its group above the others
    for r in sorted(_joined_segments(hrules), key=lambda r: (r[1], r[0])):
        for g in groups:
            last = g[-1]
            if abs(r[0] - last[0]) <= 3 and abs(r[2] - last[2]) <= 3 and 0 <= r[1] - last[3] and (
                    r[1] - last[3] <= 0.4 * page_h or _rows_of_cells(lines, hrules, last, r)):
                g.append(r)
                break
        else:
            groups.append([r])
    regions: list[list[float]] = []
    for g in groups:
        gx0, gx1 = min(r[0] for r in g), max(r[2] for r in g)
        for ys in _split_stacked(_cluster([(r[1] + r[3]) / 2 for r in g], 1.5), lines, gx0, gx1, vrules):
            if len(ys) >= cfg.table_min_rows:
                regions.append([gx0, ys[0], gx1, ys[-1]])
    # adjacent column groups (cell-shaded tables) form one region
    merged = _merge_rects(regions, 3.0)
    out = []
    for reg in merged:
        x0, y0, x1, y1 = reg
        inside = [ln for ln in lines if ln.x0 >= x0 - 2 and ln.x1 <= x1 + 2 and ln.y0 >= y0 - 2 and ln.y1 <= y1 + 2]
        if len(inside) < 2:
            continue
        ys = _cluster(
            [(r[1] + r[3]) / 2 for r in hrules if r[0] >= x0 - 3 and r[2] <= x1 + 3 and y0 - 2 <= r[1] <= y1 + 2], 1.5
        )
        cover: dict[float, float] = {}
        for v in vrules:
            if x0 - 3 <= (v[0] + v[2]) / 2 <= x1 + 3 and v[3] >= y0 - 3 and v[1] <= y1 + 3:
                xc = round((v[0] + v[2]) / 2)
                cover[xc] = cover.get(xc, 0.0) + min(v[3], y1) - max(v[1], y0)
        xs = _cluster([x for x, c in cover.items() if c >= 0.5 * (y1 - y0)], 2.0)
        xs = _cluster([*xs, *_rule_joints(hrules, (x0, y0, x1, y1), len(ys))], 2.0)
        # a header row boxed by the column rules above the first row rule (its own top edge a
        # fill, or no rule at all) belongs to the table
        # (band by band: a group label's row over the sub-column headers has rules of its own)
        for _band in range(3):
            tops = [v[1] for v in vrules if any(abs((v[0] + v[2]) / 2 - x) <= 3 for x in xs)
                    and v[1] < y0 - 2 and v[3] >= y0 - 3 and y0 - v[1] <= 0.1 * page_h]
            if not (tops and any(ln.y0 >= min(tops) - 2 and ln.y1 <= y0 + 2 and ln.x0 >= x0 - 2 and ln.x1 <= x1 + 2
                                 for ln in lines)):
                break
            y0 = min(tops)
            ys = [y0, *ys]
        # and a row boxed by the column rules under the last row rule (a total row under a
        # double rule, the table's foot left open)
        bottoms = [v[3] for v in vrules if any(abs((v[0] + v[2]) / 2 - x) <= 3 for x in xs)
                   and v[3] > y1 + 2 and v[1] <= y1 + 3 and v[3] - y1 <= 0.1 * page_h]
        if bottoms and any(ln.y0 >= y1 - 2 and ln.y1 <= max(bottoms) + 2 and ln.x0 >= x0 - 2 and ln.x1 <= x1 + 2
                           for ln in lines):
            y1 = max(bottoms)
            ys = [*ys, y1]
        left = _labels_outside(lines, (x0, y0, x1, y1), ys, cfg)
        if left is not None and xs:
            xs = _cluster([x0, *xs], 2.0)
            x0 = left
        out.append(((x0, y0, x1, y1), ys, xs))
    return out


def _rows_of_cells(lines: list[Line], hrules: list[BBox], above: BBox, below: BBox) -> bool:
    """The text between two rules of one extent set far apart (a long table's header rule and
    its bottom rule, 40% of the page or more apart) is the unruled body of one table: no rule
    half their width or more between them (rows ruled on their own are a table of their own,
    under a frame's top edge), at least four rows, and four in five of them hold two lines or
    more side by side. Prose between a table's last rule and a rule at the page foot is one
    line a row."""
    x0, x1 = min(above[0], below[0]), max(above[2], below[2])
    if any(above[3] + 1 < (h[1] + h[3]) / 2 < below[1] - 1 and min(h[2], x1) - max(h[0], x0) >= 0.5 * (x1 - x0)
           for h in hrules):
        return False
    rows = text_rows([ln for ln in lines if ln.y0 >= above[3] - 1 and ln.y1 <= below[1] + 1
                      and ln.x0 >= x0 - 2 and ln.x1 <= x1 + 2])
    return len(rows) >= 4 and sum(1 for r in rows if len(r) >= 2) >= 0.8 * len(rows)


def _labels_outside(lines: list[Line], region: BBox, ys: list[float], cfg: TextLayerConfig) -> float | None:
    """The left edge of a label column standing outside a grid's frame, or None. A cost
    schedule rules its amounts cell by cell and sets the row labels ("Salaries (a)", "Office
    Rent") unruled to the left, one in each row band: they are the table's first column. The
    evidence: one short line left of the frame in at least 60% of the row bands (3 or more),
    none in a band holding several (a prose column beside a grid has a line every 12 pt and
    long lines)."""
    x0, y0, x1, y1 = region
    bands = [(a, b) for a, b in zip(ys, ys[1:]) if b - a > 2]
    if len(bands) < cfg.table_min_rows:
        return None
    beside = [ln for ln in lines if ln.horizontal and ln.x1 <= x0 + 1 and y0 - 1 <= (ln.y0 + ln.y1) / 2 <= y1 + 1]
    if not beside or any(ln.words() > cfg.table_max_cell_words for ln in beside):
        return None
    per_band = [sum(1 for ln in beside if a <= (ln.y0 + ln.y1) / 2 <= b) for a, b in bands]
    if max(per_band) > 1 or sum(per_band) < max(cfg.table_min_rows, 0.6 * len(bands)):
        return None
    return min(ln.x0 for ln in beside)


def rules_short_of_rows(region: BBox, col_xs: list[float], lines: list[Line], cfg: TextLayerConfig) -> bool:
    """Rules drawn over the value columns only, the rows running on beside them: a financial
    statement underlines its column group label and rules its totals across the numbers, while
    the label column to their left has no rule. Such rules frame no cells (no column rule, and
    on at least half the text rows inside them a short fragment stands on the same row outside
    their extent): the table is the aligned text, rules and all, and a region cut at the rules'
    ends would split each row into a label paragraph and a table of numbers."""
    if col_xs:
        return False
    x0, y0, x1, y1 = region
    inside = [ln for ln in lines if ln.x0 >= x0 - 2 and ln.x1 <= x1 + 2 and y0 - 2 <= (ln.y0 + ln.y1) / 2 <= y1 + 2]
    # on the left only: the label column stands left of the values; lines to the right are
    # the next text column of a two-column page beside a booktabs table in the first
    beside = [ln for ln in lines if ln.x1 <= x0 + 2 and y0 - 2 <= (ln.y0 + ln.y1) / 2 <= y1 + 2
              and ln.words() <= 2 * cfg.table_max_cell_words]
    if len(inside) < 2:
        return False
    rows = text_rows(inside)
    with_beside = sum(
        1 for r in rows if any(abs((b.y0 + b.y1) / 2 - (r[0].y0 + r[0].y1) / 2) <= 0.5 * r[0].height for b in beside)
    )
    return with_beside >= max(2, 0.5 * len(rows))


def _joined_segments(hrules: list[BBox]) -> list[BBox]:
    """A row rule drawn cell by cell (segments end to end on one y) as one rule, for grouping
    rules by their extent: a table's last rule drawn so still closes its last row."""
    out: list[list[float]] = []
    for r in sorted(hrules, key=lambda r: (round((r[1] + r[3]) / 2), r[0])):
        last = out[-1] if out else None
        # overlapping or end to end on one y: one rule (the union of the pieces)
        if last is not None and abs((r[1] + r[3]) / 2 - (last[1] + last[3]) / 2) <= 0.6 and r[0] <= last[2] + 1.5:
            last[2] = max(last[2], r[2])
            last[1], last[3] = min(last[1], r[1]), max(last[3], r[3])
        else:
            out.append(list(r))
    return [tuple(r) for r in out]


def _split_stacked(ys: list[float], lines: list[Line], x0: float, x1: float,
                   vrules: list[BBox] = ()) -> list[list[float]]:
    """Rules of one extent stacked down the page may frame several tables ("Reference table",
    then the next under its own caption): between two rules far apart (over 2.5 x the
    smallest gap), text that stands clear of a rule by 1.5 line heights is not a row the rules frame
    (a table's rows hug their rules): the stack splits there; so does a caption between two rules.
    Where the rows are walled (vertical rules run from one row rule to the next), such a gap
    holding a line of one fragment with no vertical rule beside it (a title, not a row of cells) is
    between two tables however close its text sits (a section title over each grid of a web page
    printed to PDF, every grid as wide as the next)."""
    if len(ys) < 3:
        return [ys]
    gaps = [b - a for a, b in zip(ys, ys[1:])]
    # the gap the rules keep around a row: the smallest (a booktabs table's top, header and
    # bottom rules have one short gap and one the height of the body; the median of so few
    # gaps is the body's, and text far below the table would pass for its rows)
    usual = min(gaps)
    inside = [ln for ln in lines if ln.x0 >= x0 - 2 and ln.x1 <= x1 + 2]
    # (a caption may run a little past the rules' ends: any line over them counts)
    over = [ln for ln in lines if ln.x0 < x1 and ln.x1 > x0 and _CAPTION.match(ln.text.strip())]
    walls = [v for v in vrules if x0 - 3 <= (v[0] + v[2]) / 2 <= x1 + 3]

    def walled(a: float, b: float) -> bool:
        return any(v[1] <= a + 2 and v[3] >= b - 2 for v in walls)

    def title_between(rows: list[list[Line]]) -> bool:
        """A line of one fragment with no vertical rule beside it, set apart from the line above
        (a wrapped cell's next line sits at line pitch under its row)."""
        for k, row in enumerate(rows):
            ln = row[0]
            if len(row) == 1 and not any(v[1] < ln.y1 - 1 and v[3] > ln.y0 + 1 for v in walls) and (
                    k == 0 or ln.y0 - max(m.y1 for m in rows[k - 1]) > 0.5 * ln.height):
                return True
        return False

    framed = sum(1 for a, b in zip(ys, ys[1:]) if walled(a, b)) >= 2
    out = [[ys[0]]]
    for a, b in zip(ys, ys[1:]):
        between = [ln for ln in inside if ln.y0 >= a - 1 and ln.y1 <= b + 1]
        if framed and b - a > 2.5 * usual and between and title_between(text_rows(between)):
            out.append([b])
            continue
        # a caption between two rules opens the next table ("Table 5:" under Table 4's last
        # rule, over rules of the same extent): stacked tables, never one
        if any(ln.y0 >= a - 1 and ln.y1 <= b + 1 for ln in over):
            out.append([b])
            continue
        if b - a > 2.5 * usual and between:
            h = statistics.median([ln.height for ln in between])
            if min(ln.y0 for ln in between) - a >= 1.5 * h or b - max(ln.y1 for ln in between) >= 1.5 * h:
                out.append([b])
                continue
        out[-1].append(b)
    return out


def _rule_joints(hrules: list[BBox], region: BBox, nrules: int) -> list[float]:
    """Column borders where the row rules are drawn cell by cell: an x where row rule
    segments end and the next begins, on at least half of the rules (the vertical rules may
    be missing or drawn as a fill's edges the rule reading does not keep)."""
    x0, y0, x1, y1 = region
    ends: dict[int, set[int]] = {}
    where: dict[int, list[float]] = {}
    for r in hrules:
        if r[0] >= x0 - 3 and r[2] <= x1 + 3 and y0 - 2 <= r[1] <= y1 + 2:
            for x in (r[0], r[2]):
                if x0 + 3 < x < x1 - 3:
                    ends.setdefault(round(x / 2), set()).add(round((r[1] + r[3]) / 2))
                    where.setdefault(round(x / 2), []).append(x)
    merged: dict[int, set[int]] = {}
    xs: dict[int, list[float]] = {}
    for k in sorted(ends):  # neighbouring 2-pt bins are one joint (a segment ends 1 pt past the next)
        key = next((j for j in merged if abs(j - k) <= 1), k)
        merged.setdefault(key, set()).update(ends[k])
        xs.setdefault(key, []).extend(where[k])
    # the joint where the segments meet, not its 2-pt bin: numbers set flush against the cell's
    # edge end on it ("14,062" ending at 248.96 on a joint binned to 248 spanned two columns)
    return [sum(xs[k]) / len(xs[k]) for k, ys in merged.items() if len(_cluster(sorted(ys), 1.5)) >= max(2, nrules / 2)]


def text_candidates(lines: list[Line], cfg: TextLayerConfig, em: float) -> list[BBox]:
    """Regions where rows of short fragments line up in at least `table_min_cols` columns.

    A run of such rows may pass over up to `table_bridge_rows` rows of one or two fragments
    (a section label without values, a unit line, the first line of a wrapped label) when an
    aligned row follows; and it takes in up to `table_header_max_lines` lines right above it
    that sit over its value columns (a label spanning a group of columns, the upper lines of
    stacked header cells), so that a statement's header and body stay one table."""
    # lines flagged as furniture may be given too: a table continued at the top of a page has
    # its repeated header and first rows in the running-header band
    rows = text_rows([ln for ln in lines if ln.horizontal and ln.role in (None, "header", "footer", "page_number")])
    # a table needs `table_min_rows` rows of `table_min_cols` cells (`flush`'s strong rows, whose
    # cells are a subset of their row's fragments): a page of prose has none and stops here
    if sum(1 for r in rows if len(r) >= cfg.table_min_cols) < cfg.table_min_rows:
        return []
    out: list[BBox] = []
    run: list[list[Line]] = []
    weak: list[list[Line]] = []  # rows passed over, waiting for the next aligned row
    start = 0  # index in `rows` of the run's first row
    conts: set[int] = set()  # ids of rows that continue wrapped cells of the row band above

    def flush() -> None:
        # a continuation line holds the lower lines of wrapped cells: not a row of its own
        strong = [r for r in run if len(r) >= cfg.table_min_cols and id(r) not in conts]
        # column gaps from the fullest rows: a label spanning a group of columns crosses them
        full = statistics.median([len(r) for r in strong]) if strong else 0
        if len(strong) >= cfg.table_min_rows:
            sfrags = [f for r in strong for f in r]
            cut_rows = [r for r in strong if len(r) >= full]
            cols = column_cuts([(f.x0, f.x1) for r in cut_rows for f in r], len(cut_rows), max(4.0, 0.8 * em))
            # row bands (cells that wrap under a row of aligned cell starts) are a table's shape,
            # however full its wrapped first lines look: prose columns have no such bands
            banded = _banded(run, conts)
            if len(cols) + 1 >= cfg.table_min_cols and (banded or not prose_columns(sfrags, cols)):
                firsts = [r for r in run if id(r) not in conts]
                gaps = [b[0].y0 - max(f.y1 for f in a) for a, b in zip(firsts, firsts[1:])]
                # a header line may stand as far above the rows as the rows stand apart
                reach = max(1.2 * em, 1.15 * statistics.median(gaps)) if gaps else 1.2 * em
                frags = [f for r in run for f in r] + _header_lines(rows[:start], run, cols[0], cfg, reach)
                out.append(
                    (min(f.x0 for f in frags), min(f.y0 for f in frags), max(f.x1 for f in frags), max(f.y1 for f in frags))
                )
        run.clear()
        weak.clear()

    for i, row in enumerate(rows):
        cells = [f for f in row if f.words() <= 2 * cfg.table_max_cell_words]
        last = (weak or run)[-1] if (weak or run) else None
        if last is not None and row[0].y0 - max(f.y1 for f in last) > 2.5 * em:
            flush()
        if any(_CAPTION.match(f.text.strip()) and f.words() > cfg.table_max_cell_words for f in row):
            # the next table's or figure's caption ("Table 3: Results on ...") ends this table; the
            # short labels of a figure beside it would otherwise pass for a row of cells
            flush()
            continue
        if run and not weak and _continues_cells(row, run):
            conts.add(id(row))
            run.append(row)
            continue
        words = statistics.median([f.words() for f in cells]) if cells else 0
        # a row of longer cells counts when its cells wrap onto the line below (or the run's
        # did already): the first line of a wrapped cell is as long as the column allows
        wrapping = bool(conts) and any(id(r) in conts for r in run) or (
            i + 1 < len(rows) and len(cells) == len(row) and _continues_cells(rows[i + 1], [row]))
        if len(cells) >= cfg.table_min_cols and (
            words <= cfg.table_max_cell_words or (wrapping and words <= 2 * cfg.table_max_cell_words)
        ):
            if not run:
                start = i
            run.extend(weak)
            weak.clear()
            run.append(cells)
        elif run and len(row) <= 2 and len(cells) == len(row) and len(weak) < cfg.table_bridge_rows and _inside(row, run):
            weak.append(row)
        else:
            flush()
    flush()
    return out


def column_candidates(lines: list[Line], cfg: TextLayerConfig, em: float, page_width: float,
                      columns: list[list[Line]] | None = None) -> list[BBox]:
    """`text_candidates` inside each text column of the page (`text_columns`, or `columns` when
    the caller has them already). No gutter: nothing (the whole-page pass covered it)."""
    out: list[BBox] = []
    for col in text_columns(lines, cfg, em, page_width) if columns is None else columns:
        if len(col) >= cfg.table_min_rows and _shares_rows(col, cfg):
            out += text_candidates(col, cfg, em)
    return out


def text_columns(lines: list[Line], cfg: TextLayerConfig, em: float, page_width: float) -> list[list[Line]]:
    """The body lines of each text column, where whitespace gutters run the height of the body
    (lines wider than 60% of the page are left out, and a few narrower ones may cross: a
    title, a caption); [] when the page has no gutter."""
    narrow = [ln for ln in lines if ln.horizontal and ln.role is None and ln.width < 0.6 * page_width]
    min_gap = max(cfg.min_column_gap_pt, cfg.min_column_gap_em * em)
    # whitespace crossed by at most ~10% of the lines (a title or a caption may cross a gutter)
    cuts = column_cuts([(ln.x0, ln.x1) for ln in narrow], len(narrow), min_gap)
    # a text column's gutter has prose on both sides (a table's own column gaps do not)
    prose = [ln for ln in narrow if ln.words() >= 5]
    cuts = [c for c in cuts if any(ln.x1 <= c for ln in prose) and any(ln.x0 >= c for ln in prose)]
    if not cuts:
        return []
    bounds = [-1e9, *cuts, 1e9]
    return [[ln for ln in narrow if lo <= (ln.x0 + ln.x1) / 2 < hi] for lo, hi in zip(bounds, bounds[1:])]


def side_by_side_candidates(lines: list[Line], cfg: TextLayerConfig, em: float) -> list[BBox]:
    """Tables set next to each other under captions on one line ("Table 3. ..." beside
    "Table 4. ..."): below such a row each caption's side is searched on its own, from its
    caption's left edge to the next caption's, down to the first line crossing into another
    side. Their rows often share baselines, and read across the page they would make one
    table of both; a side table may have two columns (its caption vouches for it)."""
    body = [ln for ln in lines if ln.horizontal and ln.role is None]
    if sum(1 for ln in body if _CAPTION.match(ln.text.strip())) < 2:
        return []  # no two captions, so no row of them (most pages)
    rows = text_rows(body)
    out: list[BBox] = []
    side_cfg = cfg.model_copy(update={"table_min_cols": min(2, cfg.table_min_cols)})
    for i, row in enumerate(rows):
        caps = [f for f in row if _CAPTION.match(f.text.strip())]
        if len(caps) < 2:
            continue
        edges = [f.x0 - 2 for f in caps] + [1e9]
        below: list[list[Line]] = [[] for _ in caps]
        for r in rows[i + 1 :]:
            sides = [max(k for k in range(len(caps)) if f.x0 >= edges[k]) if f.x0 >= edges[0] else -1 for f in r]
            if any(s < 0 or f.x1 > edges[s + 1] for f, s in zip(r, sides)):
                break  # a line crossing a side's edge (the text after the tables) ends them
            for f, s_ in zip(r, sides):
                below[s_].append(f)
        for side in below:
            if len(side) >= side_cfg.table_min_rows * side_cfg.table_min_cols:
                out += text_candidates(side, side_cfg, em)
    return out


def _shares_rows(col: list[Line], cfg: TextLayerConfig) -> bool:
    """Enough fragments beside another on its baseline for a table (a prose column has one line
    per baseline and skips the table search)."""
    ys = sorted(round(ln.y1) for ln in col)
    beside = sum(1 for a, b in zip(ys, ys[1:]) if a == b)
    return beside >= cfg.table_min_rows * (cfg.table_min_cols - 1)


def _banded(run: list[list[Line]], conts: set[int]) -> bool:
    """Rows in bands: at least two continuation lines, and the rows that start a band stand
    clearly further from the line above than the continuation lines do (the leading inside
    a cell against the gap between rows). Prose columns, where a paragraph ending in one
    column leaves a shorter line, are evenly spaced and have no such bands."""
    gaps = [(id(b) in conts, b[0].y0 - max(f.y1 for f in a), b[0].height) for a, b in zip(run, run[1:])]
    inner = [g for c, g, _ in gaps if c]
    starts = [(g, h) for c, g, h in gaps if not c]
    if len(inner) < 2 or not starts:
        return False
    lead = max(inner)
    return sum(1 for g, h in starts if g >= lead + 0.35 * h) >= 0.67 * len(starts)


def _continues_cells(row: list[Line], run: list[list[Line]]) -> bool:
    """`row` holds the next lines of cells that wrapped in the row band above: set tight under
    it (leading, not a row gap), fewer fragments than the band's first line, and each one
    starting where a cell of that line starts (left-aligned wrapped text)."""
    prev = run[-1]
    h = min(max(f.height for f in row), max(f.height for f in prev))
    if row[0].y0 - max(f.y1 for f in prev) > 0.3 * h:
        return False
    k = len(run) - 1
    while k > 0 and abs(run[k][0].y0 - max(f.y1 for f in run[k - 1])) <= 0.3 * h and len(run[k]) < len(run[k - 1]):
        k -= 1  # back to the band's first line
    head = run[k]
    if len(row) >= len(head) or len(head) < 2:
        return False
    return all(any(abs(f.x0 - g.x0) <= 2.0 for g in head) for f in row)


def _inside(row: list[Line], run: list[list[Line]]) -> bool:
    """Within the run's width: the left edge counts once two rows have set it (a unit line
    starts left of a run that holds only the header's dates; a bullet point beside a small
    table does not belong to it)."""
    x1 = max(f.x1 for r in run for f in r)
    x0 = min(f.x0 for r in run for f in r) if len(run) >= 2 else -1e9
    return all(f.x1 <= x1 + 2 and f.x0 >= x0 - 2 for f in row)


def _header_lines(above: list[list[Line]], run: list[list[Line]], first_cut: float, cfg: TextLayerConfig, reach: float) -> list[Line]:
    """Lines right above a table (at most `reach` above the next) that stand over its value
    columns (right of the first gap)."""
    out: list[Line] = []
    top = min(f.y0 for f in run[0])
    x1 = max(f.x1 for r in run for f in r)
    for row in reversed(above[-(cfg.table_header_max_lines + 1) :]):
        if top - max(f.y1 for f in row) > reach:
            break
        if not all(first_cut <= f.x0 and f.x1 <= x1 + 2 for f in row):
            # a unit line ("(In millions)") between the header and the body sits in the label
            # column: take it and look on above it for the header over the value columns
            if not (len(row) == 1 and _UNIT.search(row[0].text.strip()) and row[0].x1 < first_cut and not out):
                break
        if any(_CAPTION.match(f.text.strip()) for f in row):
            break  # "Table 3. ..." over the columns is the table's caption, not its header
        out += row
        top = min(f.y0 for f in row)
    return out


def prose_columns(frags: list[Line], cuts: list[float]) -> bool:
    """Text columns, not table columns: in most columns the fragments hold several words and
    either fill the column (justified) or run on from line to line (ragged prose, where most
    lines continue the sentence of the line above: they start lower-case)."""
    bounds = [-1e9, *cuts, 1e9]
    prose = 0
    for i in range(len(bounds) - 1):
        col = sorted((f for f in frags if bounds[i] <= (f.x0 + f.x1) / 2 < bounds[i + 1]), key=lambda f: f.y0)
        if not col:
            continue
        if statistics.median([f.words() for f in col]) < 3:
            continue
        width = max(f.x1 for f in col) - min(f.x0 for f in col)
        ratio = statistics.median([f.width / width for f in col]) if width > 0 else 1.0
        starts = [f.text.lstrip()[:1] for f in col[1:]]
        runs_on = sum(1 for c in starts if c.islower()) / len(starts) if starts else 0.0
        if ratio >= 0.85 or (ratio >= 0.5 and runs_on >= 0.5):
            prose += 1
    return prose >= max(2, (len(bounds) - 1) // 2)


class DrawnStrokes:
    """Curves and slanted lines drawn on the page, read once (`page.get_cdrawings()`) and only
    when an unruled table candidate asks: a table is drawn with straight rules and boxes, a
    diagram or a chart with curves and slanted strokes, and its labels line up in rows and
    columns too (a graphical model's node and edge labels, a schematic's pin names)."""

    MIN_CURVES = 30
    MIN_SLANTED = 15

    def __init__(self, page: pymupdf.Page, derotate: pymupdf.Matrix | None) -> None:
        self.page, self.derotate = page, derotate
        self.points: tuple[list, list] | None = None

    def _read(self) -> tuple[list, list]:
        curves: list = []
        slanted: list = []
        # the C-level paths: get_drawings() only wraps every point of them in a Point object,
        # which cost ~4x the walk itself (120 ms on a page of plots)
        for d in self.page.get_cdrawings():
            for it in d.get("items", ()):
                if it[0] == "c":
                    curves.append(it[1])
                elif it[0] == "l" and abs(it[1][0] - it[2][0]) > 1 and abs(it[1][1] - it[2][1]) > 1:
                    slanted.append(it[1])
        return curves, slanted

    def drawing(self, region: BBox) -> bool:
        """The region holds enough curves and slanted strokes to be a drawing's (30 curves, 15
        slanted strokes, or the same share of both together: a few nodes and their edges; a
        table's rounded frame has 4 to 8 curves)."""
        if self.points is None:
            self.points = self._read()
        r = pymupdf.Rect(region)
        if self.derotate is not None:
            r = r * self.derotate
        curves, slanted = self.points
        c = sum(1 for q in curves if q in r)
        s = sum(1 for q in slanted if q in r)
        return c / self.MIN_CURVES + s / self.MIN_SLANTED >= 1.0


# --------------------------------------------------------------------------- cells


def build_table(
    page: pymupdf.Page,
    region: BBox,
    row_ys: list[float],
    col_xs: list[float],
    cfg: TextLayerConfig,
    em: float,
    derotate: pymupdf.Matrix | None,
    rotate: pymupdf.Matrix | None,
    ruled: bool,
    vsegs: list[BBox] = (),
    hsegs: list[BBox] = (),
) -> Table | None:
    """Cells of one candidate region. `vsegs` (ruled regions) are the vertical rule segments:
    a column rule that is not drawn across a band whose words cross it does not divide that
    band (a merged cell: a group label, or a title or note standing inside the frame); `hsegs`,
    the horizontal ones: a row rule not drawn over a column joins that column's cells above and
    below it (a header label set over two header rows)."""
    clip = pymupdf.Rect(region) + (-1, -1, 1, 1)
    if derotate is not None:
        clip = clip * derotate
    words = []
    for w in words_in(page, tuple(clip)):
        r = pymupdf.Rect(w[:4])
        if rotate is not None:
            r = r * rotate
        words.append((r.x0, r.y0, r.x1, r.y1, w[4]))
    if not words:
        return None
    reasons = ["ruled: framed by stacked horizontal rules" if ruled else "unruled: rows of short fragments aligned in columns"]
    if not ruled:
        got = build_text_table(words, cfg, em)
        if got is None:
            return None
        cells, header_rows, why = got
        return Table(region, cells, cfg.text_table_confidence, False, reasons + why, header_rows, cfg.table_html_header)
    drawn_cols = 0  # columns the vertical rules draw
    if len(col_xs) >= 1 and ruled:
        cuts = [x for x in col_xs if region[0] + 3 < x < region[2] - 3]
        drawn_cols = len(cuts) + 1
        reasons.append(f"{len(cuts) + 1} columns from vertical rules")
        inner = _whitespace_inside(words, [region[0], *cuts, region[2]], em)
        if inner:
            cuts = sorted([*cuts, *inner])
            reasons.append(f"{len(inner)} more from whitespace inside ruled columns")
            # vertical rules between groups of columns only ("Turns | Lane change | All
            # maneuvers", each over three): group labels, wrapped heads and section rows across
            # the sub-columns hide some of their gaps from the test above; the whitespace
            # reading of a booktabs table, which knows them, is taken when it finds as many
            # columns or more
            got = build_text_table(words, cfg, em)
            if got is not None and len(got[0][0]) >= len(cuts) + 1:
                cells, header_rows, why = got
                return Table(region, cells, cfg.ruled_table_confidence, True,
                             reasons + ["rules between column groups: columns from whitespace", *why],
                             header_rows, cfg.table_html_header)
    else:
        cuts = []
    if not cuts:
        # rules across the page only (booktabs): the columns are whitespace as in an unruled
        # table, with its header levels (group labels spanning columns) and wrapped cells; the
        # first rule inside with text on both sides ends the header (a table of text cells has
        # no values to tell its body by)
        inner = [y for y in row_ys if region[1] + 2 < y < region[3] - 2
                 and any(w[3] <= y + 1 for w in words) and any(w[1] >= y - 1 for w in words)]
        got = build_text_table(words, cfg, em, header_until=min(inner) if inner else None)
        if got is not None:
            cells, header_rows, why = got
            return Table(region, cells, cfg.ruled_table_confidence, True, reasons + why, header_rows, cfg.table_html_header)
        nrows = len(rows_of(words))
        cuts = column_cuts([(w[0], w[2]) for w in words], nrows, max(4.0, 0.8 * em))
        reasons.append(f"{len(cuts) + 1} columns from whitespace between words")
    if not cuts:
        return None
    ncols = len(cuts) + 1
    bands = [y for y in row_ys if region[1] + 2 < y < region[3] - 2]
    # group words into text rows inside each band between rules
    rows: list[list[str]] = []
    prev_bottom: float | None = None
    prev_band = -1
    prev_record: tuple[int, ...] | None = None
    spanned: list[int] = []  # rows holding a cell that spans columns
    # rules between the rows (more than a header rule): lines between the same two rules are
    # one row, whatever columns they fill
    # (rules across the frame: a group label's rule, drawn under its columns only, is no row rule)
    row_rules = sum(1 for y in bands if _across(y, hsegs)) >= 2
    text_rows = rows_of(words)
    space = word_space(text_rows, max(4.0, 0.8 * em))
    joins = max(0.35 * em, 1.3 * space) if space else 0.35 * em  # a word space, not a cell's padding
    merged = _merged_bands(text_rows, [region[1], *bands, region[3]], cuts, vsegs, em, hsegs)
    row_box: list[list[float]] = []  # each row's top and bottom
    row_band: list[int] = []  # the band (between row rules) each row starts in
    row_merged: list[bool] = []  # the row's band is merged cells (_merged_bands)
    prev_nums: set[int] = set()
    for trow in text_rows:
        yc = (min(w[1] for w in trow) + max(w[3] for w in trow)) / 2
        band = bisect.bisect_left(bands, yc)
        cells = [""] * ncols
        span_here = False
        groups = merged.get(band)
        if groups is not None:
            # the band is one merged cell across undrawn rules: each drawn cell takes its words
            # whole, repeated in every column it covers
            texts: dict[int, str] = {}
            for a, b, text in phrases(trow, joins):
                gi = groups[bisect.bisect_left(cuts, (a + b) / 2)]
                texts[gi] = f"{texts.get(gi, '')} {text}".strip()
            for c in range(ncols):
                cells[c] = texts.get(groups[c], "")
            span_here = any(groups[c] == groups[c - 1] and cells[c] for c in range(1, ncols))
        for a, b, text in phrases(trow, joins) if groups is None else ():
            # a phrase set with word spaces across a column rule crosses no rule: one cell
            # spanning those columns (a group label); its text stands in each (see Table.spans)
            ca, cb = bisect.bisect_left(cuts, a + 0.1 * em), bisect.bisect_left(cuts, b - 0.1 * em)
            for c in range(ca, cb + 1):
                cells[c] = f"{cells[c]} {text}".strip()
            span_here |= cb > ca
        top = min(w[1] for w in trow)
        h = max(w[3] for w in trow) - top
        # two lines in one band that each hold a label and numbers in the same columns are two
        # records (a spreadsheet rules groups of rows, not each row: "FY2013 ... / FY2014 ...");
        # a wrapped cell's next line fills fewer columns, and numbers do not wrap
        filled = tuple(i for i, c in enumerate(cells) if c)
        record = (filled if cells[0] and len(filled) >= 2 and any(_NUMBER.fullmatch(c) for c in cells[1:] if c)
                  else None)
        # the same for lines under a row-spanning label ("6 | OTSL ... / | HTML ..."): two
        # lines each holding numbers in the same columns are two rows
        nums = {i for i, c in enumerate(cells) if c and _NUMBER.fullmatch(c)}
        continues = (
            rows
            and band == prev_band
            and (not cells[0] or row_rules)
            and not (record is not None and record == prev_record)
            and not (len(nums & prev_nums) >= 2)
            and prev_bottom is not None
            and top - prev_bottom < 0.45 * h
        )
        prev_record = record
        prev_nums = (prev_nums | nums) if continues else nums  # a row's numbers so far
        if span_here and not continues:
            spanned.append(len(rows))
        if continues:
            # a cell's lines join as a paragraph's do: "Preva-" over "lence" is one word
            if groups is not None:  # a merged cell's lines join once, not once per column
                rows[-1] = [a if b and a.endswith(b) else join_lines([a, b]) for a, b in zip(rows[-1], cells)]
            else:
                rows[-1] = [join_lines([a, b]) for a, b in zip(rows[-1], cells)]
            row_box[-1][1] = max(w[3] for w in trow)
        else:
            rows.append(cells)
            row_box.append([top, max(w[3] for w in trow)])
            row_band.append(band)
            row_merged.append(groups is not None)
        prev_bottom = max(w[3] for w in trow)
        prev_band = band
    row_spans = _row_spans(rows, row_band, bands, cuts, (region[0], region[2]), hsegs)
    if row_spans:
        reasons.append(f"{len(row_spans)} cells spanning rows (no row rule drawn under them)")
    # drop columns that are empty in every row (a rule drawn twice, a wide gap)
    keep = [j for j in range(ncols) if any(r[j] for r in rows)]
    rows = [[r[j] for j in keep] for r in rows]
    row_spans = [(r, keep.index(c), n) for r, c, n in row_spans if c in keep]
    # a first or last row that is one merged cell across the whole frame and holds no number
    # is the table's title or its notes, written inside the spreadsheet's rules: text above or
    # below the table (kept as lines: a title is never lost inside a table), not a row
    y0, y1 = region[1], region[3]
    while len(rows) > 2 and _frame_wide(rows[0]):
        y0 = row_box[1][0] - 1
        reasons.append(f"first row {rows[0][0][:40]!r} spans the frame: the table's title, kept as text")
        rows, row_box, row_merged = rows[1:], row_box[1:], row_merged[1:]
        spanned = [i - 1 for i in spanned if i > 0]
        row_spans = [(r - 1, c, n) for r, c, n in row_spans if r > 0]
    while len(rows) > 2 and _frame_wide(rows[-1]):
        y1 = row_box[-2][1] + 1
        reasons.append(f"last row {rows[-1][0][:40]!r} spans the frame: notes under the table, kept as text")
        rows, row_box, row_merged = rows[:-1], row_box[:-1], row_merged[:-1]
        row_spans = [(r, c, min(n, len(rows) - r)) for r, c, n in row_spans if r < len(rows)]
    region = (region[0], y0, region[2], y1)
    ncols = len(keep)
    # a merged cell counts once (its text stands in every column it covers)
    distinct = [sum(1 for j, c in enumerate(r) if c and (j == 0 or r[j - 1] != c)) for r in rows]
    # (a grid whose rules draw its columns, its top and bottom rules each one run, may hold one
    # row under its header: a result table's "No results" row across the frame; a diagram's boxes
    # side by side have gaps in their rules)
    grid = drawn_cols >= 3 and len(rows) >= 2 and distinct[0] >= 3 and _across(region[1], hsegs) \
        and _across(region[3], hsegs)
    if (sum(1 for n in distinct if n >= 2) < 2 and not grid) or sum(distinct) < 0.4 * len(rows) * ncols \
            or bullet_list(rows):
        return None
    conf = cfg.ruled_table_confidence if ruled else cfg.text_table_confidence
    # spanning cells in the top rows are group labels: the header runs down to the row under them
    top_spans = [i for i in spanned if i <= cfg.table_header_max_lines]
    header_rows = top_spans[-1] + 2 if top_spans and top_spans[-1] + 2 < len(rows) else 1
    if header_rows > 1:
        reasons.append(f"{header_rows} header rows (a label spanning a group of columns)")
    # merged cells across columns, in any row (header_spans finds them in header rows only)
    col_spans = []
    for r, row in enumerate(rows):
        j = 0
        while row_merged[r] and j < len(row):
            k = j + 1
            while row[j] and k < len(row) and row[k] == row[j]:
                k += 1
            if k - j > 1:
                col_spans.append((r, j, 1, k - j))
            j = k
    return Table(region, rows, conf, ruled, reasons, header_rows, cfg.table_html_header,
                 row_spans=[*((r, c, n, 1) for r, c, n in row_spans if n > 1), *col_spans])


# --------------------------------------------------------------------------- helpers

def _across(y: float, hsegs: list[BBox]) -> bool:
    """The rule at `y` is drawn in one run: not separate underlines, one under each group of
    columns with gaps between them (a group label's rule), which rule no row. (A rule that
    leaves an unruled label column out is still one run.) Without the segments (a caller that
    has none) every rule counts as one run."""
    pieces = sorted((r[0], r[2]) for r in hsegs if abs((r[1] + r[3]) / 2 - y) <= 1.5)
    end = None
    for a, b in pieces:
        if end is not None and a > end + 4.0:
            return False
        end = b if end is None else max(end, b)
    return True


_NUMBER = re.compile(r"[-–(+$€£¥]?\s*\d[\d,.\s]*%?\)?|[-–—]")
"""A cell that is an amount, a rate or a dash standing for none."""


def _whitespace_inside(words: list, bounds: list[float], em: float) -> list[float]:
    """Column gaps inside the columns vertical rules give: a table ruled only after its label
    column (LaTeX's `l|cccc`) sets its value columns apart by whitespace. A gap counts when
    it is clear on the rows (`column_cuts`) and nearly every row holding words in that ruled
    column has words on both sides of it: whole sub-columns, not a note marker beside some
    amounts ("10,000 (1)") or a justified header's word space."""
    out: list[float] = []
    for a, b in zip(bounds, bounds[1:]):
        inside = [w for w in words if a < (w[0] + w[2]) / 2 < b]
        rows = rows_of(inside)
        # the header lines over the first row holding a number ("Turns" over "Pr (%)  Re (%)
        # Time-to-" over "maneuver (s)") are a group label and wrapped heads, not evidence of
        # where the columns are: the body's rows say
        first = next((i for i, r in enumerate(rows) if any(_NUMBER.fullmatch(w[4]) for w in r)), 0)
        if len(rows) - first >= 3:
            rows = rows[first:]
        if len(rows) < 3:
            continue
        for cut in column_cuts([(w[0], w[2]) for r in rows for w in r], len(rows), max(4.0, 0.8 * em)):
            both = sum(1 for r in rows if any(w[2] <= cut for w in r) and any(w[0] >= cut for w in r))
            if both >= 0.75 * len(rows):
                out.append(cut)
    return out


def _row_spans(
    rows: list[list[str]], row_band: list[int], bands: list[float], cuts: list[float],
    xspan: tuple[float, float], hsegs: list[BBox],
) -> list[tuple[int, int, int]]:
    """Cells a ruled grid draws over several rows, as (row, col, rows), their text joined into
    each position they cover (`rows` is changed in place). Two cases, both from the rules:
    rows in adjacent bands whose rule between them is not drawn over a column (a header label
    over two header rows beside a group label's sub-headers), and the leading label columns of
    a band holding several records, filled in its first record only (a label the rules draw
    beside all of them)."""
    if not hsegs or len(rows) < 2:
        return []
    bounds = [xspan[0], *cuts, xspan[1]]
    ncols = len(bounds) - 1

    def drawn(y: float, c: int) -> bool:
        xm = (bounds[c] + bounds[c + 1]) / 2
        return any(abs((h[1] + h[3]) / 2 - y) <= 2 and h[0] - 2 <= xm <= h[2] + 2 for h in hsegs)

    # a column row rules are drawn over once at most (labels set unruled beside a grid's frame,
    # their header underlined) holds no cell spanning rows: the grid's rules beside it part them
    ruled_col = [sum(1 for y in bands if drawn(y, c)) >= 2 for c in range(ncols)]
    owner = [[(r, c) for c in range(ncols)] for r in range(len(rows))]
    for r in range(len(rows) - 1):
        b0, b1 = row_band[r], row_band[r + 1]
        if b1 == b0 + 1 and b0 < len(bands):
            # is any rule drawn between them at all (not rows split inside one band)?
            # (a rule over columns empty in both rows, a spreadsheet's blank column, is no evidence)
            used = [k for k in range(ncols) if rows[r][k] or rows[r + 1][k]]
            if not any(drawn(bands[b0], k) for k in used):
                continue
            for c in range(ncols):
                # (two values are two records whatever the rules: a label is not set as numbers)
                if ruled_col[c] and not drawn(bands[b0], c) and not all(_NUMBER.fullmatch(x) for x in (rows[r][c], rows[r + 1][c])):
                    owner[r + 1][c] = owner[r][c]
        elif b1 == b0:
            lead = next((c for c in range(ncols) if rows[r + 1][c]), ncols)
            top = owner[r][0][0]
            if any(rows[top][c] for c in range(lead)):
                for c in range(lead):
                    owner[r + 1][c] = owner[r][c]
    groups: dict[tuple[int, int], list[int]] = {}
    for r in range(len(rows)):
        for c in range(ncols):
            groups.setdefault(owner[r][c], []).append(r)
    out = []
    for (r, c), rs in groups.items():
        if len(rs) < 2:
            continue
        text = " ".join(rows[i][c] for i in rs if rows[i][c])
        for i in rs:
            rows[i][c] = text
        out.append((r, c, len(rs)))
    return out


def _block_spans(spans: set[tuple[int, int, int, int]]) -> set[tuple[int, int, int, int]]:
    """One cell over several rows and columns ("All the available individuals" across three
    rows and five columns) comes out of the rule reading as a span across the columns in each
    row and a span down the rows in each column; as such it would be read as 5 + 3 overlapping
    cells. Where the column spans of n rows and the row spans of w columns cover the same
    block exactly, they are one (row, col, n, w) span."""
    down = {(r, c): n for r, c, n, w in spans if w == 1 and n > 1}
    out = set(spans)
    for r, c, n, w in sorted(spans):
        if n != 1 or w < 2 or (r, c, 1, w) not in out:
            continue
        depth = down.get((r, c))
        if not depth or any(down.get((r, c + j)) != depth for j in range(w)) or any(
                (r + i, c, 1, w) not in out for i in range(depth)):
            continue
        out -= {(r + i, c, 1, w) for i in range(depth)} | {(r, c + j, depth, 1) for j in range(w)}
        out.add((r, c, depth, w))
    return out


def _frame_wide(row: list[str]) -> bool:
    """One merged cell across every column (its text repeated in each), of words, not a value."""
    return len(row) >= 2 and bool(row[0]) and all(c == row[0] for c in row) and not _NUMBER.fullmatch(row[0])


def _merged_bands(
    text_rows: list[list], edges: list[float], cuts: list[float], vsegs: list[BBox], em: float,
    hsegs: list[BBox] = (),
) -> dict[int, list[int]]:
    """Bands (between horizontal rules) whose words cross a column cut where no vertical rule
    is drawn: for each, the merged cell (group index) of every column, from the rules drawn
    across that band. Bands whose words keep to their columns are left out (a table with rules
    in its header only still has columns below). A cut where the band's top rule is drawn in
    pieces that meet (each cell's top border drawn on its own, as word processors do) and
    words stand clear on both sides of it borders the band's cells even where the cell edges
    are shading only: a header row of group labels over unshaded sub-column cells keeps
    "States" and "Revenue" apart (a section label alone in its row still spans the row)."""
    if not vsegs or not cuts:
        return {}
    drawn: dict[int, set[int]] = {}
    joints: dict[int, set[int]] = {}  # cuts where the band's top rule is drawn in pieces that meet
    apart: dict[int, set[int]] = {}
    whole: dict[int, bool] = {}
    crossed: dict[int, set[int]] = {}
    used: dict[int, set[int]] = {}  # columns holding the band's words
    bands = edges[1:-1]
    for trow in text_rows:
        yc = (min(w[1] for w in trow) + max(w[3] for w in trow)) / 2
        band = bisect.bisect_left(bands, yc)
        if band not in drawn:  # rules drawn across the band's middle (a text line may touch its edge)
            ym = (edges[band] + edges[band + 1]) / 2
            drawn[band] = {i for i, x in enumerate(cuts)
                           if any(abs((v[0] + v[2]) / 2 - x) <= 3 and v[1] - 1 <= ym <= v[3] + 1 for v in vsegs)}
            top = [h for h in hsegs if abs((h[1] + h[3]) / 2 - edges[band]) <= 1.5]
            joints[band] = {i for i, x in enumerate(cuts)
                            if any(abs(h[2] - x) <= 2 for h in top) and any(abs(h[0] - x) <= 2 for h in top)}
            bottom = [h for h in hsegs if abs((h[1] + h[3]) / 2 - edges[band + 1]) <= 1.5]
            # top and bottom rules each drawn in one piece over every cut, none crossing the band:
            # a band like a title bar inside the frame, one cell (`_frame_wide` then keeps it as text)
            whole[band] = not drawn[band] and all(
                any(h[0] <= cuts[0] - 3 and h[2] >= cuts[-1] + 3 for h in rules) for rules in (top, bottom))
        # words on both sides of a cut, clear of it: two labels that the cut may part
        xs = sorted((w[0], w[2]) for w in trow)
        apart.setdefault(band, set()).update(
            i for i, x in enumerate(cuts)
            if any(b <= x - 0.3 * em for _, b in xs) and any(a >= x + 0.3 * em for a, _ in xs)
            and not any(a < x < b for a, b in xs))
        crossed.setdefault(band, set()).update(
            i for i, x in enumerate(cuts) for w in trow if w[0] < x - 0.1 * em and w[2] > x + 0.1 * em)
        used.setdefault(band, set()).update(bisect.bisect_left(cuts, (w[0] + w[2]) / 2) for w in trow)
    ruled = {i for i, x in enumerate(cuts) if any(abs((v[0] + v[2]) / 2 - x) <= 3 for v in vsegs)}
    out: dict[int, list[int]] = {}
    for band, cross in crossed.items():
        if whole[band] and cross:
            out[band] = [0] * (len(cuts) + 1)
            continue
        drawn[band] |= set(range(len(cuts))) - ruled - cross  # a border only the row rules give
        drawn[band] |= joints[band] & apart[band] - cross
        # words across an undrawn rule, or rules drawn across some columns of the band and not
        # others (a group label's cell over its sub-columns)
        # others (a group label's cell over its sub-columns), or no column rule drawn across a
        # band whose words keep to one column (a section label's row across the table)
        if cross - drawn[band] or (drawn[band] & ruled and len(drawn[band]) < len(cuts)) or (
                ruled and not drawn[band] & ruled and len(used[band]) == 1):
            groups = [0]
            for i in range(len(cuts)):
                groups.append(groups[-1] + (1 if i in drawn[band] else 0))
            out[band] = groups
    return out


def _cluster(values: list[float], tol: float) -> list[float]:
    out: list[list[float]] = []
    for v in sorted(values):
        if out and v - out[-1][-1] <= tol:
            out[-1].append(v)
        else:
            out.append([v])
    return [sum(c) / len(c) for c in out]


def _merge_rects(rects: list[list[float]], tol: float) -> list[list[float]]:
    rects = [list(r) for r in rects]
    changed = True
    while changed:
        changed = False
        for i in range(len(rects)):
            for j in range(i + 1, len(rects)):
                a, b = rects[i], rects[j]
                if a[0] - tol <= b[2] and b[0] - tol <= a[2] and a[1] - tol <= b[3] and b[1] - tol <= a[3]:
                    rects[i] = [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]
                    del rects[j]
                    changed = True
                    break
            if changed:
                break
    return rects


def text_rows(lines: list[Line]) -> list[list[Line]]:
    """`lines` grouped into rows (centres within 0.4 of the smaller line height), top to bottom,
    each row left to right."""
    rows: list[list[Line]] = []
    for ln in sorted(lines, key=lambda ln: ln.yc):
        if rows:
            ref = rows[-1][0]
            if abs(ln.yc - ref.yc) <= 0.4 * min(ln.height, ref.height):
                rows[-1].append(ln)
                continue
        rows.append([ln])
    for r in rows:
        r.sort(key=lambda ln: ln.x0)
    return rows
