"""Reading order by a recursive XY cut that knows about columns.

At each region, in this order:

1. **Clean gutter**: a vertical strip of whitespace at least `min_column_gap` wide that no
   item crosses splits the region into columns, read left to right, unless the two sides are
   short items paired row by row (labels and values of a form: read row by row instead).
2. **Blocked gutter**: a strip crossed only by a few items (a full-width title, a figure or a
   footer spanning both columns: at most `gutter_max_blockers` of the region's items). The
   crossing items cut the region into horizontal bands (above, the blockers, below) and each
   band is ordered on its own. Doing this *before* any horizontal cut matters: two columns
   whose baselines line up have whitespace between every row, and cutting there first would
   read the page row by row across both columns.
3. **Horizontal cut** at every vertical whitespace gap.
4. Otherwise: rows top to bottom, left to right within a row.

Each item comes back with a *column key*: the path of column/band choices that led to it.
Paragraphs never continue across a change of column key.
"""

from __future__ import annotations

import statistics
from typing import Protocol, Sequence

import numpy as np

from ..config.textlayer import TextLayerConfig


class Box(Protocol):
    x0: float
    y0: float
    x1: float
    y1: float

    def words(self) -> int: ...


Key = tuple[int, ...]


def reading_order(items: Sequence[Box], cfg: TextLayerConfig, em: float) -> list[tuple[Box, Key]]:
    """Items in reading order with their column keys."""
    out: list[tuple[Box, Key]] = []
    min_gap = max(cfg.min_column_gap_pt, cfg.min_column_gap_em * em)
    _order(list(items), (), out, cfg, min_gap, 0)
    return out


def _order(items: list[Box], key: Key, out: list[tuple[Box, Key]], cfg: TextLayerConfig, min_gap: float, depth: int) -> None:
    if len(items) <= 1 or depth > 60:
        out.extend((it, key) for it in _rows(items))
        return
    cols = _split_x(items, min_gap)
    if len(cols) > 1 and not _is_form(cols, cfg):
        for i, col in enumerate(cols):
            _order(col, key + (i,), out, cfg, min_gap, depth + 1)
        return
    zones = _split_blocked(items, cfg, min_gap)
    if zones is not None:
        for i, zone in enumerate(zones):
            _order(zone, key + (100 + i,), out, cfg, min_gap, depth + 1)
        return
    bands = _split_y(items)
    if len(bands) > 1:
        for band in bands:
            _order(band, key, out, cfg, min_gap, depth + 1)
        return
    out.extend((it, key) for it in _rows(items))


def _split_x(items: list[Box], min_gap: float) -> list[list[Box]]:
    srt = sorted(items, key=lambda it: it.x0)
    groups: list[list[Box]] = [[srt[0]]]
    right = srt[0].x1
    for it in srt[1:]:
        if it.x0 - right >= min_gap:
            groups.append([it])
        else:
            groups[-1].append(it)
        right = max(right, it.x1)
    return groups


def _shrunk(it: Box) -> tuple[float, float]:
    # lines of one paragraph may overlap by their ascenders/descenders: ignore a sliver
    pad = 0.2 * (it.y1 - it.y0)
    return it.y0 + pad, it.y1 - pad


def _split_y(items: list[Box]) -> list[list[Box]]:
    srt = sorted(items, key=lambda it: _shrunk(it)[0])
    bands: list[list[Box]] = [[srt[0]]]
    bottom = _shrunk(srt[0])[1]
    for it in srt[1:]:
        top, bot = _shrunk(it)
        if top > bottom:
            bands.append([it])
        else:
            bands[-1].append(it)
        bottom = max(bottom, bot)
    return bands


def _rows(items: list[Box]) -> list[Box]:
    """Top to bottom; items overlapping vertically form a row read left to right."""
    out: list[Box] = []
    for band in _split_y(items) if items else []:
        out.extend(sorted(band, key=lambda it: (it.x0, it.y0)))
    return out


def _overlap_y(a: Box, b: Box) -> float:
    return min(a.y1, b.y1) - max(a.y0, b.y0)


def _is_form(cols: list[list[Box]], cfg: TextLayerConfig) -> bool:
    """Short items left of a gutter paired row by row with items on its right: a form/table."""
    for left, right in zip(cols, cols[1:]):
        if len(left) < 2 or len(right) < 2:
            # a single label beside a single value is a row, but a single tall item (figure)
            # beside a column of text is not: only lines with words count
            if len(left) == 1 and len(right) == 1 and left[0].words() and right[0].words():
                if _overlap_y(left[0], right[0]) > 0.5 * min(left[0].y1 - left[0].y0, right[0].y1 - right[0].y0):
                    return True
            continue
        words = [it.words() for it in left + right]
        if not all(words) or statistics.median(words) > cfg.form_max_words:
            continue
        paired = sum(
            1 for a in left if any(_overlap_y(a, b) > 0.5 * min(a.y1 - a.y0, b.y1 - b.y0) for b in right)
        )
        if paired >= cfg.form_pair_share * len(left):
            return True
    return False


def _split_blocked(items: list[Box], cfg: TextLayerConfig, min_gap: float) -> list[list[Box]] | None:
    n = len(items)
    if n < 4:
        return None
    x0 = min(it.x0 for it in items)
    x1 = max(it.x1 for it in items)
    width = int(x1 - x0) + 2
    if width < 3 * min_gap:
        return None
    cov = np.zeros(width + 1, dtype=np.int32)
    for it in items:
        a, b = int(it.x0 - x0), int(it.x1 - x0 + 0.999)
        cov[a] += 1
        cov[b] -= 1
    cov = np.cumsum(cov)[:width]
    allowed = max(1, int(cfg.gutter_max_blockers * n))
    # the least-crossed gutter wins: try 0, 1, 2, ... crossings and take the widest strip at
    # the first level that has one (a wider strip at a higher level would make ordinary
    # lines that poke into the gutter into blockers)
    best: tuple[int, int] | None = None  # (start, width)
    for level in range(1, allowed + 1):
        low = cov <= level
        i = 0
        while i < width:
            if not low[i]:
                i += 1
                continue
            j = i
            while j < width and low[j]:
                j += 1
            if i > 0 and j < width and j - i >= min_gap and (best is None or j - i > best[1]):
                best = (i, j - i)
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
    zones: list[list[Box]] = [[] for _ in range(len(cuts) + 1)]
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
