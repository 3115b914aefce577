"""Cells of a whitespace-aligned (unruled) table from word positions.

Financial statements are the hard case this is built for: a label column, value columns of
right-aligned numbers, header cells stacked over several lines under a label spanning a group
of columns ("Year Ended" over three dates), currency signs set at the column's left edge
(their own whitespace column), a unit line ("(In millions, except per share data)") between
header and body, section labels without values, row labels wrapped over two lines.

* **Body and header.** The body starts at the first row holding a number right of the label
  column; the rows above it (at most `table_header_max_lines`) are the header. Columns are
  cut only from the body's multi-cell rows: a spanning group label or a one-cell line (unit
  line, section label) would cross the gaps and hide them.
* **Sign columns.** A column whose cells are only currency signs joins the column on its
  right ("$ 1,136" -> "$1,136"); one holding only ")" or "%" joins its left neighbour, so a
  sign never shifts the values into the wrong column.
* **Header levels.** Going up from the header's last line, a line with fewer phrases than
  there are headed value columns is a group label: it spans the columns nearest to it and
  becomes its own header row; a line with a phrase per column continues those cells (stacked
  header text is joined top to bottom: "Dec 31," over "2024" -> "Dec 31, 2024"). A header
  line holding only label-column text is a unit line when it reads like one (parenthesised,
  "in millions"...): it goes into the header's label cell; otherwise it is a body row.
* **Rows.** A label-only row followed tight by a row that continues its sentence (starts in
  lower case, or the label ends in a comma or a joining word) is one wrapped label; a row with
  an empty label, no number and tight under the previous row continues its cells. Text set at
  the table's word space across a column gap (a section row over a narrow label column) stays
  one cell, in the column holding most of it; a score ("/25", "3/4") is a value, never wrapped
  text.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from ..config.textlayer import TextLayerConfig
from .hyphen import join_lines

Word = tuple  # (x0, y0, x1, y1, text) in displayed-page coordinates

_NUM = re.compile(r"^[(\[]?[-+\u2212]?[$€£¥₹]?\s?[-+\u2212]?(?:\d[\d,.\u2009\u202f' ]*\d|\d)\s?%?[)\]]?%?\*?$")
_DASH = {"\u2014", "\u2013", "-", "\u2212", "\u2012", "n/a", "N/A", "nm", "NM", "*"}
_SIGNS = set("$€£¥₹")
_OPERATORS = {"+", "=", "×", "·", "±", "≤", "≥", "<", ">", "+ +", "= ="}
_CLOSERS = {")", "%", ")%", "%)"}
_BULLETS = {"•", "◦", "▪", "■", "□", "●", "○", "◆", "➢", "►", "–", "-", "*", "\uf0b7", "\uf0a7", "\uf0d8"}
_UNIT = re.compile(r"^\(.*\)$|\b(?:in|en|in der|amounts in)\s+(?:millions?|thousands?|billions?|[A-Z]{3}\b)|except\b|\bper share\b", re.I)
_YEAR = re.compile(r"^(?:FY|Q[1-4] )?(?:19|20)\d\d[A-Za-z*]?$")
_JOINERS = {"and", "or", "of", "to", "for", "from", "in", "on", "the", "a", "an", "by", "with", "at", "per", "as"}


_OUT_OF = re.compile(r"^(?:\d{1,4}\s?)?/\s?\d{1,4}$")
"""A score and what it is out of ("3/4", "/25" in a scorecard's points column)."""


def bullet_list(cells: list[list[str]]) -> bool:
    """Two columns, the first holding only bullet glyphs: a list beside its bullets (set on ruled
    notebook paper or in a frame), not a table. (A line running across both columns, a merged
    cell, is the list's own text.)"""
    if not cells or any(len(r) != 2 for r in cells):
        return False
    firsts = [r[0].strip() for r in cells if r[0].strip() and r[0] != r[1]]
    return len(firsts) >= 2 and set(firsts) <= _BULLETS


def is_value(text: str) -> bool:
    """A number, amount, percentage, parenthesised negative, a score out of a number or a dash
    standing for none."""
    t = text.strip()
    return bool(t) and (t in _DASH or bool(_NUM.match(t)) or bool(_OUT_OF.match(t)))


def _body_like(p: list[tuple[float, float, str]]) -> bool:
    """A row of the table's body: values after a label, or values that are not just years
    (a header row of years, "2024  2023", is all numbers too)."""
    if len(p) < 2:
        return False
    texts = [t for _, _, t in p]
    if not is_value(texts[0]):
        return any(is_value(t) for t in texts[1:])
    return any(is_value(t) and not _YEAR.match(t) for t in texts)


def rows_of(words: list[Word]) -> list[list[Word]]:
    """Words grouped into text rows (centres within 0.4 of the smaller height), left to right."""
    rows: list[list[Word]] = []
    for w in sorted(words, key=lambda w: ((w[1] + w[3]) / 2, w[0])):
        yc, h = (w[1] + w[3]) / 2, w[3] - w[1]
        if rows:
            ref = rows[-1][0]
            if abs(yc - (ref[1] + ref[3]) / 2) <= 0.4 * min(h, ref[3] - ref[1]):
                rows[-1].append(w)
                continue
        rows.append([w])
    for r in rows:
        r.sort(key=lambda w: w[0])
    return rows


def phrases(row: list[Word], gap: float, cuts: list[float] = (), split_gap: float = 0.0) -> list[tuple[float, float, str]]:
    """Runs of words closer than `gap`: (x0, x1, text). With `cuts` (the body's column gaps), a
    space wider than `split_gap` with a cut in it ends the run too: two header cells set close
    over their columns ("Station Keeper"), while a label spanning columns ("Year Ended") has
    ordinary word spaces. (Columns by word centres: a header word may overhang its column.)"""
    out: list[list] = []
    prev = None
    for w in row:
        space = w[0] - out[-1][1] if out else 0.0
        at_cut = bool(split_gap and prev is not None and space > split_gap
                      and _col(cuts, (prev[0] + prev[2]) / 2) != _col(cuts, (w[0] + w[2]) / 2))
        prev = w
        if out and space < gap and not at_cut:
            out[-1][1] = max(out[-1][1], w[2])
            out[-1][2] += " " + w[4]
        else:
            out.append([w[0], w[2], w[4]])
    return [(a, b, t) for a, b, t in out]


def word_space(rows: list[list[Word]], gap: float) -> float | None:
    """The table's own word space: the median space between two words of text closer than
    `gap` (close value columns are no word spaces); None with fewer than 3 such spaces. A
    monospace font's space (0.6 em) is twice a proportional one's."""
    spaces = [b[0] - a[2] for r in rows for a, b in zip(r, r[1:])
              if 0 < b[0] - a[2] < gap and str(a[4])[:1].isalpha() and str(b[4])[:1].isalpha()]
    return float(np.median(spaces)) if len(spaces) >= 3 else None


def column_cuts(intervals: list[tuple[float, float]], nrows: int, min_gap: float) -> list[float]:
    """x positions of column gaps: whitespace crossed by at most ~10% of the rows."""
    if not intervals:
        return []
    x0 = min(a for a, _ in intervals)
    x1 = max(b for _, b in intervals)
    width = int(x1 - x0) + 2
    cov = np.zeros(width + 1, dtype=np.int32)
    for a, b in intervals:
        cov[int(a - x0)] += 1
        cov[int(b - x0 + 0.999)] -= 1
    low = np.cumsum(cov)[:width] <= int(0.1 * nrows)
    cuts: list[float] = []
    i = 0
    while i < width:
        if not low[i]:
            i += 1
            continue
        j = i
        while j < width and low[j]:
            j += 1
        if i > 0 and j < width and j - i >= min_gap:
            cuts.append(x0 + (i + j) / 2)
        i = j
    return cuts


def _col(cuts: list[float], x: float) -> int:
    return int(np.searchsorted(cuts, x))


def _assign(row: list[Word], cuts: list[float], join: float = 0.0) -> list[str]:
    """Each word into the column of its centre. With `join` (the table's word space, wider
    than none of its column gaps), words of text set at word spaces that cross a column gap
    stay one phrase, in the column holding most of it: a section or title row ("Task
    Completion: Was the task ...") runs over the narrow label column of the rows under it,
    and split at the gap by word centres it read "Task" | "Completion: Was ...". Numbers are
    never held together (value columns may stand closer than a word space)."""
    cells = [""] * (len(cuts) + 1)
    runs: list[list[Word]] = []
    for w in row:
        prev = runs[-1][-1] if runs else None
        if join and prev is not None and -0.5 <= w[0] - prev[2] <= join and abs(w[1] - prev[1]) < 0.5 * (w[3] - w[1]) \
                and not is_value(w[4]) and not is_value(prev[4]):  # (a folded band holds several lines)
            runs[-1].append(w)
        else:
            runs.append([w])
    for run in runs:
        cols = [_col(cuts, (w[0] + w[2]) / 2) for w in run]
        if len(set(cols)) > 1:
            bounds = [-1e9, *cuts, 1e9]
            share = {c: sum(max(0.0, min(w[2], bounds[c + 1]) - max(w[0], bounds[c])) for w in run) for c in set(cols)}
            cols = [max(share, key=share.get)] * len(run)
        for w, c in zip(run, cols):
            cells[c] = f"{cells[c]} {w[4]}".strip()
    return cells


def _merge_sign_columns(body: list[list[Word]], cuts: list[float]) -> tuple[list[float], list[str]]:
    """Drop the cuts that set a currency sign (or a closing ")"/"%") apart from its number."""
    notes: list[str] = []
    changed = True
    while changed and cuts:
        changed = False
        grid = [_assign(r, cuts) for r in body]
        for j in range(len(cuts) + 1):
            vals = {g[j] for g in grid if g[j]}
            if not vals:
                continue
            if vals <= _SIGNS and j < len(cuts):
                del cuts[j]  # the sign joins the column on its right
                notes.append("currency-sign column joined to its numbers")
                changed = True
                break
            if vals <= _CLOSERS and j > 0:
                del cuts[j - 1]
                notes.append("closing-sign column joined to its numbers")
                changed = True
                break
    return cuts, notes


def _tidy(cell: str) -> str:
    # "$ 1,136" -> "$1,136", "( 247 )" -> "(247)", "12.5 %" -> "12.5%": one value, one cell
    # (only where the result reads as one value: text cells keep their spacing)
    t = re.sub(r"^([$€£¥₹(])\s+(?=[-\d(.])", r"\1", cell)
    t = re.sub(r"(?<=[\d)])\s+([%)])", r"\1", t)
    t = re.sub(r"^\(\s+", "(", t)
    return t if t != cell and is_value(t) else cell


def build_text_table(
    words: list[Word], cfg: TextLayerConfig, em: float, header_until: float | None = None
) -> tuple[list[list[str]], int, list[str]] | None:
    """(cells with header rows first, number of header rows, reasons) or None. `header_until`:
    the y of a rule under the header (a booktabs table's), when the caller has one."""
    rows = rows_of(words)
    if len(rows) < 2:
        return None
    gap = max(4.0, 0.8 * em)
    phr = [phrases(r, gap) for r in rows]
    # the body starts at the first row with a value right of its first phrase
    first = next((i for i, p in enumerate(phr) if _body_like(p)), 0)
    if first > cfg.table_header_max_lines:
        first = 1  # far down: the values start late, not a header that tall
    if header_until is not None:
        # the header rule: the rows above it are the header, whatever their words
        above = sum(1 for r in rows if max(w[3] for w in r) <= header_until + 1)
        if 1 <= above <= cfg.table_header_max_lines:
            first = above
    body_rows = rows[first:]
    multi = [r for r, p in zip(body_rows, phr[first:]) if len(p) >= 2] or body_rows
    cuts = column_cuts([(w[0], w[2]) for r in multi for w in r], len(multi), gap)
    if not cuts:
        return None
    reasons = [f"{len(cuts) + 1} columns from whitespace in {len(multi)} body rows"]
    cuts, notes = _merge_sign_columns(multi, cuts)
    reasons += sorted(set(notes))
    if not cuts:
        return None
    ncols = len(cuts) + 1
    # a space wider than the table's own word spaces (wide in a monospace font) parts two
    # header cells set close; a label spanning columns has ordinary word spaces
    space = word_space(rows, gap)
    split_gap = max(0.45 * em, 1.5 * space) if space else 0.45 * em
    phr[:first] = [phrases(r, gap, cuts, split_gap) for r in rows[:first]]
    # no header lines: the first row, cut like the body, stands as the header row
    header, extra_body = _header(phr[:first], rows[:first], cuts, ncols) if first else ([], [])
    if len(header) > 1:
        reasons.append(f"{len(header)} header rows (a label spanning a group of columns)")
    body = _body([*extra_body, *body_rows], cuts, ncols, 1.25 * space if space else 0.0)
    cells = [[_tidy(c) for c in r] for r in [*header, *body]]
    filled = [r for r in cells if sum(1 for c in r if c) >= 2]
    total = sum(1 for r in cells for c in r if c)
    if len(filled) < max(2, cfg.table_min_rows) or total < 0.4 * len(cells) * ncols:
        return None
    for j in range(ncols):
        col = {r[j] for r in cells[len(header):] if r[j]}
        if len(col) and col <= _OPERATORS:
            return None  # a column of "+" and "=": an aligned equation array, not a table
    if bullet_list(cells):
        return None
    # every word of the region must land in a cell: a grid that loses text (a sidebar's note,
    # a heading cut in two by a column boundary) is not this table; the lines stay prose
    kept = Counter(ch for r in cells for c in r for ch in c if not ch.isspace())
    lost = Counter(ch for w in words for ch in str(w[4]) if not ch.isspace()) - kept
    if sum(lost.values()) > 0:
        return None
    keep = [j for j in range(ncols) if any(r[j] for r in cells)]
    return [[r[j] for j in keep] for r in cells], max(1, len(header)), reasons


def _header(
    phr: list[list[tuple[float, float, str]]], rows: list[list[Word]], cuts: list[float], ncols: int
) -> tuple[list[list[str]], list[list[Word]]]:
    """Header rows (group rows, then one leaf row) and the header lines that are body rows.

    Lines are taken bottom up and each line's pieces prepended to the cells under them, right to
    left, so that two pieces of one line in one cell ("Fraction" and "of" set apart by more than a
    word space) keep their order."""
    leaf = [""] * ncols
    groups: list[list[str]] = []
    extra: list[list[Word]] = []
    seen_values = False  # a line above held text over the value columns
    ext: dict[int, tuple[float, float]] = {}  # x extent of each value column's header cell so far
    for p, row in reversed(list(zip(phr, rows))):
        cols = [_col(cuts, (a + b) / 2) for a, b, _ in p]
        if all(c == 0 for c in cols):
            text = " ".join(t for _, _, t in p)
            if not seen_values and not _UNIT.search(text):
                extra.insert(0, row)  # a section label under the header: a body row
            else:
                leaf[0] = f"{text} {leaf[0]}".strip()
            continue
        headed = [j for j in range(1, ncols) if leaf[j]]
        value_p = [(a, b, t) for (a, b, t), c in zip(p, cols) if c > 0]
        if seen_values and value_p and all(t.endswith("-") for _, _, t in value_p):
            # a word broken over the lines of stacked header cells ("Time-to-" over "maneuver
            # (s)"): each piece continues the cell under it, however few there are
            for (a, b, t), c in reversed(list(zip(p, cols))):
                leaf[c] = f"{t}{leaf[c]}" if c > 0 else f"{t} {leaf[c]}".strip()
            continue
        if seen_values and value_p and all(_stacks_on(a, b, c, ext) for (a, b, _), c in zip(p, cols) if c > 0):
            # each piece sits on the header cell under it, flush with its left or right edge
            # ("Apostolico" over "et al. (2009)"): the upper line of a stacked cell, not a group
            # label (a label over a group is centred on the group)
            for (a, b, t), c in reversed(list(zip(p, cols))):
                leaf[c] = f"{t} {leaf[c]}".strip()
                ext[c] = (min(a, ext.get(c, (a, b))[0]), max(b, ext.get(c, (a, b))[1]))
            continue
        if seen_values and len(value_p) < len(headed):
            # a group label: each headed column takes the nearest label above it
            centers = [(a + b) / 2 for a, b, _ in value_p]
            mids = _col_centers(cuts, ncols, rows)
            g = [""] * ncols
            for j in headed:
                k = min(range(len(centers)), key=lambda k: abs(centers[k] - mids[j]))
                g[j] = value_p[k][2]
            groups.insert(0, g)
        else:
            for (a, b, t), c in reversed(list(zip(p, cols))):
                if c > 0:
                    leaf[c] = f"{t} {leaf[c]}".strip()
                    ext[c] = (min(a, ext.get(c, (a, b))[0]), max(b, ext.get(c, (a, b))[1]))
        for (a, b, t), c in reversed(list(zip(p, cols))):
            if c == 0:
                leaf[0] = f"{t} {leaf[0]}".strip()
        seen_values = True
    if not seen_values:
        return [leaf], extra
    return [*groups, leaf], extra


def _stacks_on(a: float, b: float, c: int, ext: dict[int, tuple[float, float]]) -> bool:
    """A header piece [a, b] over column c is flush with the left or right edge of the header
    cell below it (within half a point: the lines of one cell share an edge exactly in a text
    layer; an OCR'd group label centred over an odd group came within 0.9 pt of its middle
    column's edge) and no wider than it. Centred is no evidence: a group label is centred on
    its group, and so on the middle column of an odd group."""
    if c not in ext:
        return False
    x0, x1 = ext[c]
    return b - a <= x1 - x0 + 1 and (abs(a - x0) <= 0.5 or abs(b - x1) <= 0.5)


def _col_centers(cuts: list[float], ncols: int, rows: list[list[Word]]) -> list[float]:
    xs = [w for r in rows for w in r]
    lo = min(w[0] for w in xs) if xs else 0.0
    hi = max(w[2] for w in xs) if xs else 0.0
    bounds = [min(lo, cuts[0] - 50), *cuts, max(hi, cuts[-1] + 50)]
    return [(bounds[j] + bounds[j + 1]) / 2 for j in range(ncols)]


def fold_wrapped(rows: list[list[Word]], cuts: list[float]) -> list[list[Word]]:
    """Text rows folded into row bands: a row whose cells all continue cells that wrapped in
    the line above (a row is a band of aligned cell starts, not one text line) joins that
    band, its words after the band's (cells then read top to bottom).

    A line continues the band when it sits tight under it (the leading inside a cell, clearly
    less than the gaps between the table's bands: with no such contrast, rows of one line
    each are never folded), fills only columns the band fills, and in each its first word
    would not have fit on the line above within the column (the line above wrapped there);
    or, whatever the spacing, each of its cells starts right of its cell's first line (a
    hanging indent)."""
    if len(rows) < 3:
        return rows
    tops = [min(w[1] for w in r) for r in rows]
    bots = [max(w[3] for w in r) for r in rows]
    hs = sorted(b - t for t, b in zip(tops, bots))
    h = hs[len(hs) // 2]
    gaps = [tops[i] - bots[i - 1] for i in range(1, len(rows))]
    small = min(gaps)
    # evenly spaced lines: only a hanging indent folds a line (below), never the fit of words
    even = max(gaps) < small + 0.35 * h
    right = _column_right_edges(rows, cuts)
    out: list[list[Word]] = [list(rows[0])]
    head = [_col(cuts, (w[0] + w[2]) / 2) for w in rows[0]]
    last_x1: dict[int, float] = {}
    for w in rows[0]:
        c = _col(cuts, (w[0] + w[2]) / 2)
        last_x1[c] = max(last_x1.get(c, -1e9), w[2])
    for i in range(1, len(rows)):
        row = rows[i]
        cols = [_col(cuts, (w[0] + w[2]) / 2) for w in row]
        filled = set(cols)
        first_words = {}
        for w, c in zip(row, cols):
            first_words.setdefault(c, w)
        folds = (
            not even
            and gaps[i - 1] <= small + 0.2 * h
            and filled <= set(last_x1)
            and not any(_would_fit(last_x1[c], w, right[c], h) for c, w in first_words.items())
            and not any(is_value(w[4]) for w in row)
        )
        # a hanging indent: every cell's line starts right of its cell's first line, as a
        # wrapped entry does ("American Society for Reproductive Medicine" / "(2012)"), while
        # a number set right-aligned under a value column's number is a record of its own
        band = {}
        for w in out[-1]:
            band.setdefault(_col(cuts, (w[0] + w[2]) / 2), []).append(w)
        folds = folds or (
            gaps[i - 1] <= small + 0.2 * h
            and filled <= set(last_x1)
            and any(not is_value(w[4]) for w in row)
            and all(w[0] >= min(v[0] for v in band[c]) + 0.3 * h
                    and not (is_value(w[4]) and any(is_value(v[4]) for v in band[c]))
                    for c, w in first_words.items())
        )
        if folds:
            out[-1] += row
            for c in filled:  # the cell's last line is now this one
                last_x1[c] = max(w[2] for w, cc in zip(row, cols) if cc == c)
            continue
        out.append(list(row))
        head = cols
        last_x1 = {}
        for w, c in zip(row, cols):
            last_x1[c] = max(last_x1.get(c, -1e9), w[2])
    return out


def _starts_item(prev: list[Word], row: list[Word], cuts: list[float], right: dict[int, float], h: float) -> bool:
    """A line that begins a new entry of a list cell, not the wrapped rest of the line above: in
    a column the line above also fills, its first word would have fitted on that line ("Previous
    aortic dissection" / "Aortic dilatation (...)": one criterion a line), or it stands out left
    of the line above (a hanging indent's next item)."""
    top = min(w[1] for w in row)
    first: dict[int, Word] = {}
    for w in sorted((w for w in row if w[1] <= top + 0.5 * h), key=lambda w: w[0]):
        first.setdefault(_col(cuts, (w[0] + w[2]) / 2), w)
    for c, w in first.items():
        above = [v for v in prev if _col(cuts, (v[0] + v[2]) / 2) == c]
        if not above:
            continue
        bottom = max(v[1] for v in above)
        last = [v for v in above if v[1] >= bottom - 0.5 * h]
        if _would_fit(max(v[2] for v in last), w, right[c], h):
            return True
    return False


def _would_fit(line_end: float, w: Word, col_right: float, h: float) -> bool:
    """Word `w` would have fitted after a line ending at `line_end` in a column whose text
    reaches `col_right` (a word space of 0.3 line heights between): the line did not wrap there."""
    return line_end + 0.3 * h + (w[2] - w[0]) <= col_right - 1.0


def _column_right_edges(rows: list[list[Word]], cuts: list[float]) -> dict[int, float]:
    """Where each column's text reaches on the right, over all rows."""
    right: dict[int, float] = {}
    for r in rows:
        for w in r:
            c = _col(cuts, (w[0] + w[2]) / 2)
            right[c] = max(right.get(c, -1e9), w[2])
    return right


def _body(rows: list[list[Word]], cuts: list[float], ncols: int, join: float = 0.0) -> list[list[str]]:
    out: list[list[str]] = []
    prev: list[Word] | None = None
    right = _column_right_edges(rows, cuts)
    for row in fold_wrapped(rows, cuts):
        cells = _assign(row, cuts, join)
        top = min(w[1] for w in row)
        h = max(w[3] for w in row) - top
        tight = prev is not None and top - max(w[3] for w in prev) < 0.6 * h
        if out and tight:
            last = out[-1]
            label_only = lambda r: r[0] and not any(r[1:])  # noqa: E731
            runs_on = cells[0][:1].islower() or last[0].endswith((",", "-")) or (
                last[0].split()[-1:] and last[0].split()[-1].lower() in _JOINERS
            )
            if label_only(last) and cells[0] and runs_on:
                out[-1] = [f"{last[0]} {cells[0]}", *cells[1:]]  # a wrapped label, values on its last line
                prev = row
                continue
            # a label wraps under its values: it runs on in lower case, or a parenthesised note
            # set indented under the label ("Daily or Miscellaneous / (each day of the period)")
            note = cells[0][:1] == "(" and row[0][0] > prev[0][0] + 1.0
            if label_only(cells) and (cells[0][:1].islower() or note):
                out[-1] = [f"{last[0]} {cells[0]}", *last[1:]]
                prev = row
                continue
            if not cells[0] and not any(is_value(c) for c in cells if c) and not _starts_item(prev, row, cuts, right, h):
                out[-1] = [join_lines([a, b]) for a, b in zip(last, cells)]  # wrapped text cells (a hyphen-broken word joins)
                prev = row
                continue
        out.append(cells)
        prev = row
    return out
