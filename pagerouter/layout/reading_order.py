"""Reading order of boxes on a page: one column-aware recursive XY cut for every route.

The text layer orders lines, tables and figures in points; the OCR route orders layout
regions (pixels of the render), line groups inside a region (pixels) and the page's final
blocks (points, with a mixed page's text-layer blocks). They all call `order_boxes` /
`order_with_keys` here, so a page's order does not depend on its route. The thresholds come
in the caller's units (`OrderParams.for_lines`: the text layer's lines, in points, exactly its
former cut; `OrderParams.for_blocks`: the OCR route's blocks and regions, whose several lines
per box and approximate edges add a few rules, all listed there and marked "blocks" below).

At each region, in this order:

1. **Clean gutter**: a vertical strip of whitespace at least `min_gap` wide that no box
   crosses splits the region into columns, read left to right, unless the two sides are
   short items paired row by row (labels and values of a form: read row by row instead).
   Text lines: a strip down to `narrow_gap` counts with `narrow_lines` lines on each side.
2. **Blocked gutter**: a strip crossed only by a few boxes (a full-width title, a figure or a
   footer spanning both columns: at most `max_blockers` of the region's boxes). The crossing
   boxes cut the region into horizontal bands (above, the blockers, below) and each band is
   ordered on its own. Doing this *before* any horizontal cut matters: two columns whose
   baselines line up have whitespace between every row, and cutting there first would read
   the page row by row across both columns.
3. **Horizontal cut** at every vertical whitespace gap; a band of several pieces may open a
   run of bands that is cut into columns as one region (`_order_bands`: a page whose two
   sections have different columns has no gutter running down it, and cutting every row of
   the top section's aligned columns apart would read them row by row). Blocks: a box
   holding stacked boxes inside it is peeled first.
4. Otherwise: rows top to bottom, left to right within a row (blocks: a band that is not one
   row has its tallest box peeled and the rest cut again, `_peel`).

Each box comes back with a *column key*: the path of column/band choices that led to it.
The text layer never continues a paragraph across a change of column key.

Optional `kinds` put page furniture outside the body order: `header` boxes first, `footer` and
`page_number` boxes last (each group cut on its own). Optional `words` (words per box, 0 =
unknown: figures, tables, layout regions not read yet) feed the form rule; a box with 0
words is never taken for a form label or value.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from itertools import accumulate
from typing import Sequence

import numpy as np

from ..config.textlayer import TextLayerConfig

Box = tuple[float, float, float, float]
Key = tuple[int, ...]

LINE_BOX_EM = 1.25  # an OCR line box's height in font sizes (1.15-1.3 measured, RapidOCR 9-14 pt)
HEAD_KINDS = ("header",)
FOOT_KINDS = ("footer", "page_number")
WRAP_MIN_WORDS = 4  # words per line of the text a column wraps around a wide box (median): prose, not labels


@dataclass(frozen=True)
class OrderParams:
    """Thresholds of the cut, `min_gap` in the boxes' own units (points or pixels)."""

    min_gap: float  # narrowest column gutter
    max_blockers: float  # share of a region's boxes that may cross a gutter (TextLayerConfig.gutter_max_blockers)
    form_pair_share: float  # share of left items with a right partner that makes a form
    form_max_words: float  # median words per item at or below which items are short (labels/values)
    blocks: bool = False  # boxes are blocks (OCR: paragraphs, regions, figures), not lines; see below
    line: float = 0.0  # height of one text line in the boxes' units (blocks; 0: unknown)
    narrow_gap: float = 0.0  # a narrower gutter counts with `narrow_lines` boxes each side (0: off)
    narrow_lines: int = 0

    @classmethod
    def for_lines(cls, em: float, cfg: TextLayerConfig) -> OrderParams:
        """The text layer's: lines (and tables, figures) in points, body font size `em`.

        PDF coordinates are exact, so a band no cut splits is read as one row, left to right
        (sub/superscripts, labels of a diagram; stacked lines with one left edge come out top
        down because ties on x0 go by y0)."""
        p = cls._from(cfg, max(cfg.min_column_gap_pt, cfg.min_column_gap_em * em))
        narrow = min(p.min_gap, cfg.narrow_gutter_em * em)
        return cls(**{**p.__dict__, "narrow_gap": narrow, "narrow_lines": cfg.narrow_gutter_min_lines})

    @classmethod
    def for_blocks(
        cls, line: float, scale: float = 1.0, cfg: TextLayerConfig | None = None, *, line_sets_gap: bool = True
    ) -> OrderParams:
        """The OCR route's: layout regions, line groups and blocks in units of `scale` per point,
        `line` the median height of the page's OCR line boxes in those units (0: unknown).
        `line_sets_gap` False: the lines are not the page's text (a mixed page's OCR lines are
        a picture's labels): they still weigh blocks in lines, but the gutter is the floor.

        The OCR config has no knobs for this; the text layer's thresholds (defaults) apply, the
        gutter at least `min_column_gap_pt * scale` and `min_column_gap_em` font sizes. A
        detected line box is 1.15-1.3 font sizes (RapidOCR on 9-14 pt scans, measured), so the
        font size is taken as `line / LINE_BOX_EM`: the same gutter the text layer would use
        for that text, wider than word spacing (a line the detector split at a space is not two
        columns) and narrower than real gutters (1.5 font sizes and up). With `line` 0 (layout
        regions come before any line is read) the point floor stands alone.

        Blocks hold several lines and have approximate edges, which changes three things (the
        text layer's lines keep the plain rules, so its output does not change):
        - the blocker share and the form rule count text lines, as the text layer's do: a box
          with words weighs its height in lines (`line`) and brings its words per line, one
          without words (figure, table, region) weighs one, like the text layer's tables and
          figures. Counted in boxes, a page of twenty blocks would allow a single blocker,
          and a column of headings and short list items beside paragraphs would be a form;
        - a band of several pieces (two column headings side by side, the two groups of a
          dialog) opens the longest run of bands from it that splits into columns, ordered as
          one region (`_order_bands`); cutting every band at once would read such a band, and
          every band below it, across the columns;
        - a box holding two stacked boxes inside it (a picture under the text) is peeled first
          (`_container`), and a band no cut splits that is not one row has its tallest box
          peeled (`_peel`) instead of being read left to right.
        """
        c = cfg if cfg is not None else TextLayerConfig()
        gap = max(c.min_column_gap_pt * scale, c.min_column_gap_em * line / LINE_BOX_EM if line_sets_gap else 0.0)
        return cls._from(c, gap, blocks=True, line=line)

    @classmethod
    def _from(cls, cfg: TextLayerConfig, min_gap: float, blocks: bool = False, line: float = 0.0) -> OrderParams:
        return cls(min_gap, cfg.gutter_max_blockers, cfg.form_pair_share, cfg.form_max_words, blocks, line)


def median_height(boxes: Sequence[Box]) -> float:
    """Median height of text-line boxes: the OCR route's `line` for `OrderParams.for_blocks` (0: none)."""
    return float(statistics.median(b[3] - b[1] for b in boxes)) if boxes else 0.0


class _It:
    """A box taking part in the cut; `i` is its index in the caller's list."""

    __slots__ = ("x0", "y0", "x1", "y1", "n", "i")

    def __init__(self, box: Box, n: int, i: int) -> None:
        self.x0, self.y0, self.x1, self.y1 = box
        self.n = n
        self.i = i


def order_boxes(
    boxes: Sequence[Box], params: OrderParams, *, words: Sequence[int] | None = None,
    kinds: Sequence[str] | None = None,
) -> list[int]:  # fmt: skip
    """Indices of `boxes` in reading order."""
    return [i for i, _key in order_with_keys(boxes, params, words=words, kinds=kinds)]


def order_with_keys(
    boxes: Sequence[Box], params: OrderParams, *, words: Sequence[int] | None = None,
    kinds: Sequence[str] | None = None,
) -> list[tuple[int, Key]]:  # fmt: skip
    """(index, column key) of every box in reading order.

    Body boxes get keys from the cut; header boxes are prefixed (-1,), footer/page-number
    boxes (-2,), so furniture never shares a key with body text.
    """
    n = len(boxes)
    counts = list(words) if words is not None else [0] * n
    items = [_It(tuple(boxes[i]), int(counts[i]), i) for i in range(n)]
    if kinds is None:
        groups: list[tuple[Key, list[_It]]] = [((), items)]
    else:
        head = [it for it in items if kinds[it.i] in HEAD_KINDS]
        foot = [it for it in items if kinds[it.i] in FOOT_KINDS]
        body = [it for it in items if kinds[it.i] not in HEAD_KINDS + FOOT_KINDS]
        groups = [((-1,), head), ((), body), ((-2,), foot)]
    out: list[tuple[_It, Key]] = []
    for key, group in groups:
        if group:
            _order(group, key, out, params, 0)
    return [(it.i, key) for it, key in out]


def _order(items: list[_It], key: Key, out: list[tuple[_It, Key]], p: OrderParams, depth: int) -> None:
    if len(items) <= 1 or depth > 60:
        out.extend((it, key) for it in _rows(items))
        return
    cols = _split_x(items, p.min_gap, p)
    if len(cols) > 1 and not _is_form(cols, p):
        for i, col in enumerate(cols):
            _order(col, key + (i,), out, p, depth + 1)
        return
    zones = _split_blocked(items, p)
    if zones is not None:
        for i, zone in enumerate(zones):
            _order(zone, key + (100 + i,), out, p, depth + 1)
        return
    tall = _container(items) if p.blocks else None
    if tall is not None:
        _peel(items, tall, key, out, p, depth)
        return
    bands = _split_y(items)
    if len(bands) > 1:
        _order_bands(bands, key, out, p, depth)
        return
    if p.blocks and not _is_row(items):
        _peel(items, max(items, key=_height), key, out, p, depth)
        return
    out.extend((it, key) for it in _rows(items))


def _order_bands(bands: list[list[_It]], key: Key, out: list[tuple[_It, Key]], p: OrderParams, depth: int) -> None:
    """Bands top down, but a band of several pieces (a row across columns: two column
    headings, the two groups of a dialog) opens the longest run of bands from it whose top
    splits into columns, and the bands of those columns are ordered as one region. Only such
    bands open a search, so a page of one column costs one cut per band."""
    k = 0
    while k < len(bands):
        end = k + 1
        if not p.blocks:
            end = _line_run(bands, k, p)
        elif k + 1 < len(bands) and len(_split_x(bands[k], p.min_gap)) > 1:
            for j in range(len(bands), k + 1, -1):
                region = _columns_at_top([it for b in bands[k:j] for it in b], p) if (k, j) != (0, len(bands)) else None
                if region is not None:
                    # the run ends with the columns: bands below the first blockers go on alone
                    inside = {id(it) for it in region}
                    end = k + 1
                    while end < j and all(id(it) in inside for it in bands[end]):
                        end += 1
                    break
        _order([it for b in bands[k:end] for it in b], key, out, p, depth + 1)
        k = end


def _line_run(bands: list[list[_It]], k: int, p: OrderParams) -> int:
    """Text lines: the end of the run of bands from `k` that one gutter runs down (each band's
    lines lie wholly on either side of it, the gutter narrowed to each band's whitespace),
    if the run's bands form stacked columns; else k + 1. One pass down the bands per band of
    several pieces, not `_order_bands`' search over every run length (a page has many rows
    of several fragments that open no run)."""
    cols = _split_x(bands[k], p.min_gap, p)
    if len(cols) < 2 or k + 2 >= len(bands):
        return k + 1
    a = max(it.x1 for it in cols[0])
    b = min(it.x0 for it in cols[1])
    need = min(p.min_gap, p.narrow_gap or p.min_gap)
    j = k + 1
    while j < len(bands):
        mid = (a + b) / 2
        left = [it.x1 for it in bands[j] if it.x1 <= mid]
        right = [it.x0 for it in bands[j] if it.x0 >= mid]
        if len(left) + len(right) < len(bands[j]):
            break  # a line crosses the gutter: the columns end here
        a2, b2 = max([a, *left]), min([b, *right])
        if b2 - a2 < need:
            break
        a, b = a2, b2
        j += 1
    if j - k < 3 or (k == 0 and j == len(bands)):  # the whole region was cut already
        return k + 1
    region = [it for band in bands[k:j] for it in band]
    return j if _stacked_columns(region, p) else k + 1


def _columns_at_top(items: list[_It], p: OrderParams) -> list[_It] | None:
    """The boxes of the columns at the run's top, cleanly or in the first zone around blockers,
    if at least two of them are stacks of three boxes or more: a row of buttons over a caption
    over a list item, or a dialog's Cancel button over the next dialog's close box, splits at
    gaps, but is no pair of columns to read one after the other."""
    zones = _split_blocked(items, p) or []
    return next((region for region in [items, *zones[:1]] if _stacked_columns(region, p)), None)


def _stacked_columns(items: list[_It], p: OrderParams) -> bool:
    cols = _split_x(items, p.min_gap, None if p.blocks else p)
    return len(cols) > 1 and not _is_form(cols, p) and sum(len(_split_y(c)) > 2 for c in cols) >= 2


def _is_row(items: list[_It]) -> bool:
    """One level crosses every box (intervals that pairwise overlap share a point)."""
    spans = [_shrunk(it) for it in items]
    return max(a for a, _b in spans) <= min(b for _a, b in spans)


def _height(it: _It) -> float:
    top, bot = _shrunk(it)
    return bot - top


def _container(items: list[_It]) -> _It | None:
    """The tallest box that holds two boxes stacked one above the other inside its area (a
    picture under the text, a region drawn around other regions), if any.

    Only boxes inside it count (most of their width within its width): a tall paragraph of one
    column beside stacked paragraphs of the next is no container; the columns cut those."""
    n = len(items)
    if n < 3:
        return None
    x0 = np.array([it.x0 for it in items])
    x1 = np.array([it.x1 for it in items])
    spans = np.array([_shrunk(it) for it in items])
    top, bot = spans[:, 0], spans[:, 1]
    # inside[c, i]: box i lies in the height of box c and mostly within its width
    overlap = np.minimum(x1[None, :], x1[:, None]) - np.maximum(x0[None, :], x0[:, None])
    inside = (top[None, :] >= np.array([it.y0 for it in items])[:, None]) & (
        bot[None, :] <= np.array([it.y1 for it in items])[:, None]) & (overlap >= 0.8 * (x1 - x0)[None, :])
    np.fill_diagonal(inside, False)
    counts = inside.sum(axis=1)
    for c in sorted(range(n), key=lambda i: bot[i] - top[i], reverse=True):
        if counts[c] < 2:
            continue
        idx = np.flatnonzero(inside[c])
        srt = np.lexsort((bot[idx], top[idx]))  # by top, then bottom
        tops, reach = top[idx][srt], np.maximum.accumulate(bot[idx][srt])
        if np.any(tops[1:] > reach[:-1]):  # one starts below all before it: stacked
            return items[c]
    return None


def _peel(items: list[_It], tall: _It, key: Key, out: list[tuple[_It, Key]], p: OrderParams, depth: int) -> None:
    """Blocks only. A tall box (a figure beside a column, a picture under the text, a region
    the layout model drew twice) beside boxes stacked in its height chains them into one band:
    no horizontal cut passes it, and reading the band as a row, left to right, would interleave
    the stacked boxes by a point of x (OCR left edges wobble). Take the tall box out, order the
    rest (which may now cut into columns and bands) and put it back where its top is."""
    sub: list[tuple[_It, Key]] = []
    _order([it for it in items if it is not tall], key, sub, p, depth + 1)
    at = next((k for k, (it, _key) in enumerate(sub) if it.y0 > tall.y0), len(sub))
    out.extend(sub[:at])
    out.append((tall, key))
    out.extend(sub[at:])


def _split_x(items: list[_It], min_gap: float, p: OrderParams | None = None) -> list[list[_It]]:
    """Columns at clean gutters. With `p` (text lines), a gutter down to `p.narrow_gap` counts
    when at least `p.narrow_lines` lines lie on each side of it: no line crosses it, so it
    runs through every one of them, which word spaces never do (a prose line always crosses
    the strip), while two columns set 5 pt apart do. The OCR route's blocks leave this off."""
    srt = sorted(items, key=lambda it: it.x0)
    narrow = p.narrow_gap if p is not None and p.narrow_lines else min_gap
    groups: list[list[_It]] = [[srt[0]]]
    right = srt[0].x1
    n = len(srt)
    for k, it in enumerate(srt[1:], start=1):
        gap = it.x0 - right
        if gap >= min_gap or (
            gap >= narrow and len(groups[-1]) >= p.narrow_lines and n - k >= p.narrow_lines  # type: ignore[union-attr]
        ):
            groups.append([it])
        else:
            groups[-1].append(it)
        right = max(right, it.x1)
    return groups


def _shrunk(it: _It) -> tuple[float, float]:
    # lines of one paragraph may overlap by their ascenders/descenders: ignore a sliver
    pad = 0.2 * (it.y1 - it.y0)
    return it.y0 + pad, it.y1 - pad


def _split_y(items: list[_It]) -> list[list[_It]]:
    srt = sorted(items, key=lambda it: _shrunk(it)[0])
    bands: list[list[_It]] = [[srt[0]]]
    bottom = _shrunk(srt[0])[1]
    for it in srt[1:]:
        top, bot = _shrunk(it)
        if top > bottom:
            bands.append([it])
        else:
            bands[-1].append(it)
        bottom = max(bottom, bot)
    return bands


def _rows(items: list[_It]) -> list[_It]:
    """Top to bottom; items overlapping vertically form a row read left to right."""
    out: list[_It] = []
    for band in _split_y(items) if items else []:
        out.extend(sorted(band, key=lambda it: (it.x0, it.y0)))
    return out


def _overlap_y(a: _It, b: _It) -> float:
    return min(a.y1, b.y1) - max(a.y0, b.y0)


def _is_form(cols: list[list[_It]], p: OrderParams) -> bool:
    """Short items left of a gutter paired row by row with items on its right: a form/table."""
    for left, right in zip(cols, cols[1:]):
        if len(left) < 2 or len(right) < 2:
            # a single label beside a single value is a row, but a single tall item (figure)
            # beside a column of text is not: only items with words count
            if len(left) == 1 and len(right) == 1 and left[0].n and right[0].n:
                if _overlap_y(left[0], right[0]) > 0.5 * min(left[0].y1 - left[0].y0, right[0].y1 - right[0].y0):
                    return True
            continue
        # counted per text line, as the text layer's lines are: a block weighs its lines and
        # brings its words per line (a paragraph beside short items is not a label)
        weights = {id(it): _weight(it, p) for it in left + right}
        words = [it.n / weights[id(it)] for it in left + right for _ in range(weights[id(it)])]
        if not all(words) or statistics.median(words) > p.form_max_words:
            continue
        paired = sum(
            weights[id(a)] for a in left if any(_overlap_y(a, b) > 0.5 * min(a.y1 - a.y0, b.y1 - b.y0) for b in right)
        )
        if paired >= p.form_pair_share * sum(weights[id(a)] for a in left):
            return True
    return False


def _weight(it: _It, p: OrderParams) -> int:
    """Text lines a box counts for (blocker share, form rule): one, or a text block's height in lines."""
    if not p.blocks or not p.line or not it.n:
        return 1
    return max(1, round((it.y1 - it.y0) / p.line))


def _wide_enough(items: list[_It], g0: float, g1: float, p: OrderParams) -> bool:
    """A strip is a gutter at `min_gap`, or at `narrow_gap` with `narrow_lines` lines wholly on
    each side (see `_split_x`)."""
    if g1 - g0 >= p.min_gap:
        return True
    if not p.narrow_lines or g1 - g0 < p.narrow_gap:
        return False
    left = sum(1 for it in items if it.x1 <= g0 + 1)
    right = sum(1 for it in items if it.x0 >= g1 - 1)
    return left >= p.narrow_lines and right >= p.narrow_lines


def _split_blocked(items: list[_It], p: OrderParams) -> list[list[_It]] | None:
    """Bands cut around the few boxes crossing the least-crossed gutter, or None."""
    min_gap = p.min_gap
    n = len(items)
    if n < 4:
        return None
    x0 = min(it.x0 for it in items)
    x1 = max(it.x1 for it in items)
    # coverage at unit resolution: a point for the text layer, a pixel for the OCR route
    width = int(x1 - x0) + 2
    if width < 3 * min(min_gap, p.narrow_gap or min_gap):
        return None
    # text lines weigh one each (the text layer's hot path: no per-item call); OCR blocks their lines
    weights = [_weight(it, p) for it in items] if p.blocks else [1] * n
    cov = [0] * (width + 1)
    for it, w in zip(items, weights):
        cov[int(it.x0 - x0)] += w
        cov[int(it.x1 - x0 + 0.999)] -= w
    cov = list(accumulate(cov[:width]))
    allowed = max(1, int(p.max_blockers * sum(weights)))
    # the least-crossed gutter wins: try at most 1, 2, ... crossings and take the widest strip at
    # the first level that has one (a wider strip at a higher level would make ordinary
    # lines that poke into the gutter into blockers); levels between two coverage values
    # find the same strips, so only the values that occur are tried. Plain Python: a region
    # is a few hundred units wide, where numpy's per-call cost outweighs the loop.
    levels = [1] + sorted(v for v in set(cov) if 1 < v <= allowed)
    best: tuple[int, int] | None = None  # (start, width)
    for level in levels:
        i = 0
        while i < width:
            if cov[i] > level:
                i += 1
                continue
            j = i
            while j < width and cov[j] <= level:
                j += 1
            if i > 0 and j < width and _wide_enough(items, x0 + i, x0 + j, p) and (best is None or j - i > best[1]):
                best = (i, j - i)  # the widest; the first of equals, left to right
            i = j
        if best is not None:
            break
    if best is None:
        return None
    g0 = x0 + best[0]
    g1 = g0 + best[1]
    blockers = [it for it in items if it.x0 < g1 - 1 and it.x1 > g0 + 1]
    if not blockers:
        return None
    left = sum(1 for it in items if it.x1 <= g0 + 1)
    right = sum(1 for it in items if it.x0 >= g1 - 1)
    if left < 2 or right < 2:
        return None
    wrapped = _wrapped_columns(items, blockers, (g0 + g1) / 2, p)
    if wrapped is not None:
        return wrapped
    # merge the blockers' vertical extents into bands and cut the region around them
    spans = sorted((b.y0, b.y1) for b in blockers)
    merged: list[list[float]] = [list(spans[0])]
    for a, b in spans[1:]:
        if a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    cuts: list[float] = []
    for a, b in merged:
        cuts += [a, b]
    zones: list[list[_It]] = [[] for _ in range(len(cuts) + 1)]
    for it in items:
        yc = (it.y0 + it.y1) / 2
        k = 0
        while k < len(cuts) and yc >= cuts[k]:
            k += 1
        # an item whose centre falls exactly between blocker bands goes with the bands
        zones[k].append(it)
    zones = [z for z in zones if z]
    if len(zones) <= 1:
        return None
    return zones


def _wrapped_columns(items: list[_It], blockers: list[_It], mid: float, p: OrderParams) -> list[list[_It]] | None:
    """The two columns, if every blocker is a wide box of one column that the other column's
    text wraps around (a journal table reaching into the gutter, the next column's lines
    set narrower beside it), else None.

    A blocker spanning the columns (a title, a figure over both) has nothing beside it; one
    that only pokes into the gutter has the other column's lines beside it, wholly beyond its
    far edge. Cut into bands around it, the other column's lines above its top would be read
    before it and those beside it after it, splitting that column's text around the box; it
    belongs to the column its centre lies in, read with that column."""
    crossing = {id(b) for b in blockers}
    sides: list[list[_It]] = [[], []]
    for it in items:
        if id(it) not in crossing:
            sides[0 if (it.x0 + it.x1) / 2 < mid else 1].append(it)
    lines_beside = 0
    wrap: list[_It] = []
    for b in blockers:
        side = 0 if (b.x0 + b.x1) / 2 < mid else 1
        other = sides[1 - side]
        beside = [it for it in other if min(_shrunk(it)[1], b.y1) > max(_shrunk(it)[0], b.y0)]
        clear = all(it.x0 >= b.x1 + p.min_gap / 2 for it in beside) if side == 0 else all(
            it.x1 <= b.x0 - p.min_gap / 2 for it in beside)
        if not beside or not clear:
            return None
        lines_beside += sum(_weight(it, p) for it in beside)
        wrap.extend(beside)
    # the lines beside are a column's prose, set to one edge: not the fragments of an equation
    # or of a diagram's labels scattered beside a wide box
    edges = [it.x0 for it in wrap if (it.x0 + it.x1) / 2 >= mid] + [-it.x1 for it in wrap if (it.x0 + it.x1) / 2 < mid]
    per_line = [it.n / _weight(it, p) for it in wrap]
    if lines_beside < 2 or not all(per_line) or statistics.median(per_line) < WRAP_MIN_WORDS or (
            max(edges) - min(edges) > 2 * p.min_gap):
        return None
    for b in blockers:
        sides[0 if (b.x0 + b.x1) / 2 < mid else 1].append(b)
    return sides
