"""The `tablestruct` family of `quality_cases.py` (same conventions): table structure a reader
must recover beyond one-line rows. Four layouts, by variant number modulo 4:

- `wrap`: cells that wrap onto two or three lines (a row is a band of aligned cell starts,
  not one text line), headers that wrap too; ruled (grid or booktabs) or borderless (rows
  set apart by extra leading only);
- `span`: group header cells spanning two or three columns ("Fiscal 2024" over "Q1 Q2"),
  numbers in the body; the group label must stay one cell heading every column under it;
- `continued`: one table over two pages with its header row repeated at the top of page 2
  (under a running header on some variants): the repeated header heads page 2's rows;
- `sidebyside`: two small tables next to each other, rows on the same baselines on some
  variants: two tables, never rows running across both.

Every variant varies font, size, column count and widths, words vs numbers, ruled vs
borderless. Checks: `table` (row label x column header -> value, left/up/down neighbours)
and `present` for every cell's text, so a reader that loses a wrapped line fails.
`draw_table` is shared with `tests/test_tables_structure.py`, which asserts the same truth
on the JSON cells.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from quality_cases import _ADJ, _NOUN, PAGE_SIZES, Case, Words, _pdf, bold, flow, new_doc_page
from quality_checks import Check

import pymupdf

FONTS = ["helv", "tiro", "cour", "dvsans", "dvserif"]
_HEADS = ["Station", "Site", "Keeper", "Soil", "Owner", "Habitat", "Survey notes", "Access route", "Condition",
          "Remarks", "Species", "Material", "Region", "Season", "Purpose", "Hazards"]
_NUM_HEADS = ["Depth (cm)", "Area (ha)", "Count", "Visits", "Samples", "Length (m)", "Flow", "Yield"]


@dataclass
class TableSpec:
    """What a generated table holds: header rows of (text, colspan) cells, the leaf header
    (one name per column) and body rows (one string per column)."""

    header: list[list[tuple[str, int]]]
    leaf: list[str]
    body: list[list[str]]
    bbox: tuple[float, float, float, float] = (0, 0, 0, 0)
    row_tops: list[float] = field(default_factory=list)


class Cells:
    """Unique cell texts: short names, phrases that wrap, numbers."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def _unique(self, make) -> str:
        for _ in range(500):
            s = make()
            if s not in self.used and not any(s in u or u in s for u in self.used):
                self.used.add(s)
                return s
        raise RuntimeError("cell bank exhausted")

    def name(self) -> str:
        r = self.rng
        return self._unique(lambda: f"{r.choice(_ADJ).capitalize()} {r.choice(_NOUN)}")

    def phrase(self, words: int) -> str:
        r = self.rng
        pool = [*_ADJ, *_NOUN, "the", "and", "near", "with", "of"]

        def make() -> str:
            ws = [r.choice(_ADJ), r.choice(_NOUN)] + [r.choice(pool) for _ in range(words - 2)]
            ws[0] = ws[0].capitalize()
            return " ".join(ws)
        return self._unique(make)

    def number(self) -> str:
        r = self.rng
        return self._unique(lambda: r.choice([f"{r.randint(1000, 99999):,}", f"{r.randint(10, 999)}.{r.randint(0, 9)}",
                                              str(r.randint(11, 9999))]))


def draw_table(pen, spec: TableSpec, x0: float, y: float, widths: list[float], font: str, size: float,
               ruled: str, row_gap: float, numeric: list[bool], lead: float = 1.2) -> float:
    """Draw `spec` with its top-left at (x0, y); returns the y below it. `ruled`: "grid"
    (every row and column ruled), "booktabs" (top, under the header, bottom) or "none"
    (rows set apart by `row_gap` only). Cells wrap to their column; numbers right-aligned,
    spanning header cells centred over their columns."""
    # half the whitespace between two columns' text: clearly wider than a word space (a
    # monospace font's space is 0.6 em), or no reader could tell a column gap from a space
    pad = max(4.0, 0.6 * size, 1.5 * pen.width(" ", font, size))
    vpad = max(3.0, 0.4 * size)  # above and below a row's text, inside its rules
    widths = fitted_widths(pen, spec, widths, font, size)
    xs = [x0]
    for w in widths:
        xs.append(xs[-1] + w)
    hfont = bold(font)
    top = y
    rules = [y]
    tops: list[float] = []

    def band(cells: list[tuple[str, int]], f: str, is_head: bool) -> float:
        """One row band: every cell's first line on the band's first baseline."""
        nonlocal y
        tops.append(y)
        k, most = 0, 1
        y0 = y + vpad + size  # first baseline
        for text, span in cells:
            cw = xs[k + span] - xs[k] - 2 * pad
            lines = pen.wrap(text.split(), cw, f, size) if text else []
            most = max(most, len(lines))
            for i, ln in enumerate(lines):
                lw = pen.width(ln, f, size)
                if span > 1:
                    lx = (xs[k] + xs[k + span]) / 2 - lw / 2
                elif numeric[k]:
                    lx = xs[k + 1] - pad - lw
                else:
                    lx = xs[k] + pad
                pen.text(lx, y0 + i * size * lead, ln, f, size)
            k += span
        y = y0 + (most - 1) * size * lead + size * 0.35 + vpad + row_gap
        if ruled == "grid":  # column rules, none inside a spanning cell
            xk = 0
            for _text, span in cells:
                for xv in (xs[xk], xs[xk + span]):
                    pen.page.draw_line(pymupdf.Point(xv, tops[-1]) * pen.m, pymupdf.Point(xv, y) * pen.m, width=0.6)
                xk += span
        return y

    for row in spec.header:
        band(row, hfont, True)
        if ruled == "grid":
            rules.append(y)
    if ruled == "booktabs":
        rules.append(y)
    for row in spec.body:
        band([(c, 1) for c in row], font, False)
        if ruled == "grid":
            rules.append(y)
    if ruled == "booktabs":
        rules.append(y)
    if ruled != "none":
        for ry in sorted(set(round(r, 2) for r in rules)):
            pen.hline(xs[0], xs[-1], ry, 0.6)
    spec.bbox = (xs[0], top, xs[-1], y)
    spec.row_tops = tops
    return y


def fitted_widths(pen, spec: TableSpec, widths: list[float], font: str, size: float) -> list[float]:
    """Column widths widened where a column's longest word would not fit (it would run into
    the next column: no reader could tell the columns apart)."""
    pad = max(4.0, 0.6 * size, 1.5 * pen.width(" ", font, size))
    out = list(widths)
    for k in range(len(widths)):
        words = [w for r in spec.body for w in r[k].split()] + spec.leaf[k].split() * (len(spec.header) == 1)
        need = max((pen.width(w, bold(font), size) for w in words), default=0.0) + 2 * pad + 2
        out[k] = max(out[k], need)
    return out


def table_checks(spec: TableSpec, rng: random.Random, rows: list[int] | None = None, n: int = 4) -> list[Check]:
    """Row label x column header -> value, and neighbours, on body rows `rows` (default: all);
    `present` for every header and body cell."""
    body = spec.body
    pick = rows if rows is not None else list(range(len(body)))
    ncol = len(spec.leaf)
    checks: list[Check] = []
    for r in rng.sample(pick, min(n, len(pick))):
        k = rng.randrange(1, ncol)
        checks.append(Check("table", cell=body[r][k], left_heading=body[r][0], top_heading=spec.leaf[k],
                            note="row label x header -> value"))
        checks.append(Check("table", cell=body[r][k], left=body[r][k - 1], note="left neighbour"))
        if r + 1 in pick:
            checks.append(Check("table", cell=body[r][k], down=body[r + 1][k], note="down neighbour"))
    return checks


def presence(spec: TableSpec) -> list[Check]:
    texts = [t for row in spec.header for t, _ in row if t] + [c for row in spec.body for c in row]
    return [Check("present", text=t, note="cell text kept") for t in dict.fromkeys(texts)]


def _widths(rng: random.Random, total: float, n: int, wide: list[int]) -> list[float]:
    weights = [rng.uniform(1.6, 2.2) if k in wide else rng.uniform(0.8, 1.1) for k in range(n)]
    s = sum(weights)
    return [total * w / s for w in weights]


def _style(rng: random.Random) -> str:
    return rng.choice(["grid", "booktabs", "none", "none"])


class _DryPen:
    """Measures like a Pen and draws nothing (how many rows fit on a page)."""

    def __init__(self, pen):
        self.pen, self.m = pen, pen.m
        self.page = self

    def width(self, *a):
        return self.pen.width(*a)

    def wrap(self, *a, **k):
        return self.pen.wrap(*a, **k)

    def text(self, *a, **k):
        pass

    hline = draw_line = text


# ---------------------------------------------------------------------- layouts
def wrap_table(rng: random.Random, C: Cells, ncol: int, nrows: int, wrap_head: bool) -> tuple[TableSpec, list[bool], list[int]]:
    """A table whose text columns hold 4-9 word phrases (they wrap); the others names or numbers."""
    wide = rng.sample(range(1, ncol), rng.randint(1, max(1, ncol - 2)))
    if rng.random() < 0.5:
        wide.append(0)  # the row label wraps too: no column is a one-line spine for the rows
    numeric = [k not in wide and k > 0 and rng.random() < 0.5 for k in range(ncol)]
    heads = rng.sample(_HEADS, ncol)
    if wrap_head:
        k = rng.randrange(1, ncol)
        heads[k] = f"{heads[k]} {rng.choice(['recorded in the field', 'as last surveyed', 'at time of visit'])}"
    for k in range(ncol):
        if numeric[k]:
            heads[k] = rng.choice([h for h in _NUM_HEADS if h not in heads])
    body = []
    for _ in range(nrows):
        row = []
        for k in range(ncol):
            if k in wide:
                row.append(C.phrase(rng.randint(4, 9)))
            elif numeric[k]:
                row.append(C.number())
            else:
                row.append(C.name())
        body.append(row)
    return TableSpec([[(h, 1) for h in heads]], heads, body), numeric, wide


def span_table(rng: random.Random, C: Cells) -> tuple[TableSpec, list[bool]]:
    """A label column, then 2-3 groups of 2-3 numeric columns under spanning group labels."""
    ngroups = rng.randint(2, 3)
    per = rng.choice([2, 2, 3]) if ngroups == 2 else 2
    kind = rng.choice(["year", "region", "period"])
    years = sorted(rng.sample(range(2015, 2026), ngroups), reverse=True)
    if kind == "year":
        groups = [f"Fiscal {y}" for y in years]
        leaves = ["Q1", "Q2", "Q3"][:per] if per == 3 else rng.choice([["Q1", "Q2"], ["H1", "H2"]])
    elif kind == "region":
        groups = [f"{a.capitalize()} sites" for a in rng.sample(_ADJ, ngroups)]
        leaves = ["Count", "Area", "Share"][:per]
    else:
        groups = [f"Survey of {y}" for y in years]
        leaves = ["Wet", "Dry", "Mixed"][:per]
    label = rng.choice(["Region", "Station", "Basin", "Item"])
    header = [[("", 1)] + [(g, per) for g in groups], [(label, 1)] + [(lf, 1) for _ in groups for lf in leaves]]
    leaf = [label] + [f"{g} {lf}" for g in groups for lf in leaves]
    body = [[C.name()] + [C.number() for _ in range(ngroups * per)] for _ in range(rng.randint(4, 8))]
    return TableSpec(header, leaf, body), [False] + [True] * (ngroups * per)


def span_checks(spec: TableSpec, rng: random.Random) -> list[Check]:
    groups = [(t, n) for t, n in spec.header[0] if t]
    leaves = [t for t, _ in spec.header[1]]
    checks = []
    col = 1
    for g, n in groups:
        for k in range(col, col + n):  # every column under the group label is headed by it, whole
            r = rng.randrange(len(spec.body))
            checks.append(Check("table", cell=spec.body[r][k], top_heading=g, left_heading=spec.body[r][0],
                                note="spanning header over this column"))
        col += n
    for _ in range(3):
        r, k = rng.randrange(len(spec.body)), rng.randrange(1, len(leaves))
        checks.append(Check("table", cell=spec.body[r][k], top_heading=leaves[k], left=spec.body[r][k - 1],
                            note="leaf header and left neighbour"))
    k = rng.randrange(1, len(leaves))
    checks.append(Check("table", cell=spec.body[0][k], up=leaves[k], note="leaf header right above the first row"))
    return checks


# ---------------------------------------------------------------------- case
def tablestruct_case(rng: random.Random, v: int) -> Case:
    W = Words(rng)
    C = Cells(rng)
    font = rng.choice(FONTS)
    size = rng.uniform(8, 10.5)
    layout = ["wrap", "span", "continued", "sidebyside"][v % 4]
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice(PAGE_SIZES))
    mx = rng.uniform(45, 70)
    y = rng.uniform(60, 90)
    style = _style(rng)
    row_gap = size * rng.uniform(0.35, 0.9) if style == "none" else rng.uniform(0, 2)
    width = pen.w - 2 * mx
    checks: list[Check] = []
    pen.text(mx, y, W.title(), bold(font), size * 1.4)
    y += size * 2.2
    para = W.paragraph(2)
    _, _, low = flow(pen, [para], [(mx, width)], y, pen.h, font, size, 1.25, 0)
    y = low + size * 2.2
    if layout == "wrap":
        ncol = rng.randint(3, 5)
        spec, numeric, _ = wrap_table(rng, C, ncol, rng.randint(4, 6), rng.random() < 0.5)
        y = draw_table(pen, spec, mx, y, _widths(rng, width, ncol, [k for k in range(ncol) if not numeric[k]]),
                       font, size, style, row_gap, numeric)
        checks += table_checks(spec, rng) + presence(spec)
    elif layout == "span":
        spec, numeric = span_table(rng, C)
        n = len(spec.leaf)
        y = draw_table(pen, spec, mx, y, _widths(rng, width, n, [0]), font, size, style, row_gap, numeric)
        checks += span_checks(spec, rng) + presence(spec)
    elif layout == "continued":
        running = rng.random() < 0.5
        ncol = rng.randint(3, 5)
        wrap = rng.random() < 0.5
        spec, numeric, wide = wrap_table(rng, C, ncol, 60, False)
        if not wrap:
            spec.body = [[C.name() if k in wide else c for k, c in enumerate(r)] for r in spec.body]
        widths = _widths(rng, width, ncol, [k for k in range(ncol) if not numeric[k]])
        # as many rows as fit on page 1, the rest (at least 3) on page 2 under the repeated header
        # more prose first: page 1 holds a dozen rows or so, not forty (the checks stay balanced)
        while y < pen.h * 0.55:
            more = W.paragraph(3)
            _, _, low = flow(pen, [more], [(mx, width)], y, pen.h, font, size, 1.25, 0)
            y = low + size * 2.2
        first = TableSpec(spec.header, spec.leaf, [])
        dry = _DryPen(pen)
        for r in spec.body:
            first.body.append(r)
            if draw_table(dry, first, mx, y, widths, font, size, style, row_gap, numeric) > pen.h - 60:
                first.body.pop()
                break
        nsecond = rng.randint(3, 6)
        second = TableSpec(spec.header, spec.leaf, spec.body[len(first.body):len(first.body) + nsecond])
        title = W.title()
        if running:
            pen.text(mx, 36, title, font, size * 0.85)
        draw_table(pen, first, mx, y, widths, font, size, style, row_gap, numeric)
        page2, pen2 = new_doc_page(doc, (pen.w, pen.h))
        y2 = 36 + size * 1.5 if running else rng.uniform(40, 60)
        if running:
            pen2.text(mx, 36, title, font, size * 0.85)
        y2 = draw_table(pen2, second, mx, y2, widths, font, size, style, row_gap, numeric)
        after = W.paragraph(2)
        flow(pen2, [after], [(mx, width)], y2 + size * 2, pen.h, font, size, 1.25, 0)
        pen = pen2
        checks += table_checks(second, rng, n=4)
        k = rng.randrange(1, ncol)
        checks.append(Check("table", cell=second.body[0][k], up=spec.leaf[k], note="repeated header right above page 2's first row"))
        checks.append(Check("table", cell=second.body[0][0], up=spec.leaf[0], note="repeated header right above page 2's first row"))
        checks += table_checks(first, rng, n=2) + presence(first) + presence(TableSpec([], [], second.body))
        checks.append(Check("order", before=first.body[-1][0], after=second.body[0][0], note="page 1 rows before page 2 rows"))
    else:
        gap = rng.uniform(36, 60)
        half = (width - gap) / 2
        aligned = rng.random() < 0.6
        specs = []
        x = mx
        bottoms = []
        for side in range(2):
            ncol = rng.randint(2, 3)
            spec, numeric, _ = wrap_table(rng, C, ncol, rng.randint(4, 7), False)
            spec.body = [[C.name() if (k > 0 and not numeric[k] and rng.random() < 0.7) else c for k, c in enumerate(r)]
                         if not numeric[0] else r for r in spec.body]
            spec.body = [[c if len(c.split()) <= 3 else " ".join(c.split()[:3]) for c in r] for r in spec.body]
            cap = f"Table {2 * v + side + 1}. {rng.choice(_NOUN).capitalize()} {rng.choice(['counts', 'sites', 'records'])}"
            pen.text(x, y, cap, bold(font), size)
            gap_rows = row_gap if aligned else row_gap + size * rng.uniform(0.3, 0.8) * side
            tw = half * rng.uniform(0.85, 1.0)
            widths = _widths(rng, tw, ncol, [0])
            if sum(fitted_widths(pen, spec, widths, font, size)) > half:  # too narrow for its words: two columns
                spec = TableSpec([[(h, 1) for h in spec.leaf[:2]]], spec.leaf[:2], [r[:2] for r in spec.body])
                numeric, ncol = numeric[:2], 2
                widths = _widths(rng, tw, ncol, [0])
            bottoms.append(draw_table(pen, spec, x, y + size * 0.8, widths, font, size,
                                      style, gap_rows, numeric))
            specs.append(spec)
            x += half + gap
        y = max(bottoms)
        for spec in specs:
            checks += table_checks(spec, rng, n=3) + presence(spec)
    if layout != "continued":
        after = W.paragraph(2)
        flow(pen, [after], [(mx, width)], y + size * 2, pen.h, font, size, 1.25, 0)
        checks.append(Check("order", before=para[-1], after=after[0], max_diffs=1, note="text around the table in order"))
    return Case(f"tablestruct-{v:02d}-{layout}-{style}", "tablestruct", _pdf(doc), checks, note=f"{font} {size:.1f}pt")


# ---------------------------------------------------------------------- table
_LABELS = ["Revenue", "Cost of revenue", "Gross profit", "Research and development", "Sales, general and administrative",
           "Acquisition termination cost", "Total operating expenses", "Operating income", "Interest income",
           "Interest expense", "Other income (expense), net", "Income before income tax", "Income tax expense (benefit)",
           "Net income", "Depreciation and amortization", "Restructuring charges", "Total current assets", "Goodwill"]
_MON = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def _money(rng: random.Random, used: set[str]) -> str:
    while True:
        v = rng.randint(12, 99999)
        s = f"{v:,}"
        if rng.random() < 0.2:
            s = f"({s})"
        if s not in used:
            used.add(s)
            return s


def financial_table(pen, rng: random.Random, x0: float, y: float, font: str, size: float) -> tuple[list[Check], float]:
    """A borderless income statement: label column, one or two column groups under a spanning
    header ("Year Ended" / dates), `$` in its own cell, a unit line between header and body,
    parenthesised negatives, subtotal rows. Returns the checks and the y below it."""
    groups = [("Year Ended", rng.randint(2, 3))] if rng.random() < 0.6 else [("Three Months Ended", 2), ("Nine Months Ended", 2)]
    ncol = sum(n for _, n in groups)
    right = pen.w - x0
    colw = rng.uniform(52, 66)
    dollar_w = 10
    pitch = colw + dollar_w + rng.uniform(10, 22)  # a visible gap between a value and the next `$`
    label_w = right - x0 - ncol * pitch
    col_right = [x0 + label_w + (i + 1) * pitch for i in range(ncol)]
    unit = rng.choice(["(In millions, except per share data)", "(In millions)", "(In thousands of dollars)"])
    unit_above = rng.random() < 0.3
    if unit_above:
        pen.text(x0, y, unit, font, size * 0.85)
        y += size * 1.8
    years = sorted(rng.sample(range(2015, 2026), ncol // len(groups)), reverse=True)
    dates, c = [], 0
    hsize = size * 0.92
    for g, n in groups:
        gx0, gx1 = col_right[c] - colw, col_right[c + n - 1]
        pen.text((gx0 + gx1) / 2 - pen.width(g, bold(font), hsize) / 2, y, g, bold(font), hsize)
        pen.hline(gx0, gx1, y + 3, 0.4)
        for k in range(n):
            d = f"{rng.choice(_MON)} {rng.randint(1, 28)}, {years[k]}"
            dates.append(d)
            pen.text(col_right[c] - pen.width(d, bold(font), hsize), y + size * 1.3, d, bold(font), hsize)
            c += 1
    y += size * 1.3
    if not unit_above:
        pen.text(x0, y + size * 1.4, unit, font, size * 0.85)
        y += size * 1.4
    y += size * 1.6
    labels = rng.sample(_LABELS, rng.randint(7, 11))
    used: set[str] = set()
    rows = []
    for i, lab in enumerate(labels):
        vals = [_money(rng, used) for _ in range(ncol)]
        total = lab.startswith(("Total", "Gross", "Net", "Operating income"))
        indent = 10 if (not total and rng.random() < 0.5) else 0
        pen.text(x0 + indent, y, lab, bold(font) if total and rng.random() < 0.5 else font, size)
        for k, val in enumerate(vals):
            if i == 0 or total:
                pen.text(col_right[k] - colw - dollar_w + 2, y, "$", font, size)
            pen.text(col_right[k] - pen.width(val, font, size), y, val, font, size)
            if total and rng.random() < 0.5:
                pen.hline(col_right[k] - colw, col_right[k], y - size - 1, 0.4)
        rows.append((lab, vals))
        y += size * 1.45
    checks = []
    for lab, vals in rng.sample(rows, min(5, len(rows))):
        k = rng.randrange(ncol)
        checks.append(Check("table", cell=vals[k], left_heading=lab, top_heading=dates[k], note="label x date -> value"))
    r = rng.randrange(len(rows))
    k = rng.randrange(1, ncol)
    checks.append(Check("table", cell=rows[r][1][k], left=rows[r][1][k - 1], note="left neighbour"))
    checks.append(Check("table", cell=rows[r][1][0], left=rows[r][0], note="label left of first value"))
    if r + 1 < len(rows):
        checks.append(Check("table", cell=rows[r][1][k], down=rows[r + 1][1][k], note="down neighbour"))
    checks.append(Check("table", cell=rows[-1][1][0], top_heading=groups[0][0], note="group header over the column"))
    return checks, y


def simple_table(pen, rng: random.Random, x0: float, y: float, width: float, font: str, size: float) -> tuple[list[Check], float]:
    """A borderless text table: left-aligned columns, bold header, no rules."""
    names = ["Station", "Site", "Elevation (m)", "Annual rain (mm)", "Opened", "Keeper", "Soil", "Depth (cm)", "Owner"]
    n = rng.randint(3, 5)
    while True:  # headers that fit their column (a header running into the next one is no table)
        cw = width / n
        fit = [h for h in names if pen.width(h, bold(font), size) < cw - 6]
        if len(fit) >= n or n == 2:
            break
        n -= 1
    heads = rng.sample(fit, min(n, len(fit)))
    n = len(heads)
    cw = width / n
    for k, h in enumerate(heads):
        pen.text(x0 + k * cw, y, h, bold(font), size)
    y += size * 1.6
    rows, used = [], set()
    for _ in range(rng.randint(4, 7)):
        row = []
        for k in range(n):
            while True:
                val = rng.choice([f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN)}", str(rng.randint(10, 4000)), f"{rng.randint(1, 99)}.{rng.randint(0, 9)}"])
                if val not in used and pen.width(val, font, size) < cw - 8:
                    used.add(val)
                    break
            row.append(val)
            pen.text(x0 + k * cw, y, val, font, size)
        rows.append(row)
        y += size * 1.4
    checks = []
    for row in rng.sample(rows, min(3, len(rows))):
        k = rng.randrange(1, n)
        checks.append(Check("table", cell=row[k], left_heading=row[0], top_heading=heads[k], note="row x header -> value"))
        checks.append(Check("table", cell=row[k], left=row[k - 1], note="left neighbour"))
    return checks, y


def table_case(rng: random.Random, v: int) -> Case:
    W = Words(rng)
    font = rng.choice(["helv", "tiro", "dvsans", "dvserif"])
    size = rng.uniform(8.5, 10)
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice(PAGE_SIZES))
    mx = rng.uniform(45, 70)
    y = rng.uniform(60, 90)
    checks: list[Check] = []
    financial = v % 3 != 2
    head = rng.choice(["Consolidated Statements of Income", "Condensed Consolidated Statements of Operations",
                       "Segment Results", "Selected Financial Data"]) if financial else f"Table {rng.randint(1, 9)}. {W.title()}"
    pen.text(mx, y, head, bold(font), size * 1.4)
    y += size * 2.2
    para = W.paragraph(2)
    _, _, low = flow(pen, [para], [(mx, pen.w - 2 * mx)], y, pen.h, font, size, 1.25, 0)
    y = low + size * 2.5
    if financial:
        fc, y = financial_table(pen, rng, mx, y, font, size)
        checks += fc
    else:
        sc, y = simple_table(pen, rng, mx, y, pen.w - 2 * mx, font, size)
        checks += sc
    after = W.paragraph(2)
    flow(pen, [after], [(mx, pen.w - 2 * mx)], y + size * 1.5, pen.h, font, size, 1.25, 0)
    checks.append(Check("order", before=para[-1], after=after[0], max_diffs=1, note="text around the table in order"))
    return Case(f"table-{v:02d}-{'financial' if financial else 'simple'}", "table", _pdf(doc), checks, note=f"{font} {size:.1f}pt")
