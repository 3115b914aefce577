"""Reading order over boxes: column-aware recursive XY-cut.

Vertical cuts (gaps running the full height of a group) are tried before horizontal ones, so
two columns are read column by column; a full-width title or table blocks the vertical cut
and is peeled off by a horizontal cut first (one band at a time, then the rest is cut again).
A full-width element below aligned columns is peeled from the bottom. Known limit: full-width
elements both above-between and below aligned columns can still make them read band by band. Page headers come first and footers last.
"""

from __future__ import annotations

Box = tuple[float, float, float, float]


def _split(idx: list[int], boxes: list[Box], axis: int, min_gap: float) -> list[list[int]]:
    """Groups of `idx` separated by empty bands along an axis (0 = x, 1 = y)."""
    lo, hi = axis, axis + 2
    order = sorted(idx, key=lambda i: boxes[i][lo])
    groups = [[order[0]]]
    reach = boxes[order[0]][hi]
    for i in order[1:]:
        if boxes[i][lo] - reach > min_gap:
            groups.append([i])
        else:
            groups[-1].append(i)
        reach = max(reach, boxes[i][hi])
    return groups


def xycut(idx: list[int], boxes: list[Box], min_gap: float = 1.0, depth: int = 0) -> list[int]:
    if len(idx) <= 1 or depth > 400:
        return sorted(idx, key=lambda i: (boxes[i][1], boxes[i][0]))
    cols = _split(idx, boxes, 0, min_gap)
    if len(cols) > 1:
        return [i for g in cols for i in xycut(g, boxes, min_gap, depth + 1)]
    rows = _split(idx, boxes, 1, min_gap)
    if len(rows) > 1:
        # Peel off only the top band and re-cut the rest: two columns whose paragraph gaps
        # happen to line up would otherwise be read band by band, across the columns.
        # If the top band holds columns but the bottom band is one full-width piece (a wide
        # table or footnote under aligned columns), peel the bottom instead.
        if len(rows) > 2 and len(_split(rows[0], boxes, 0, min_gap)) > 1 and len(_split(rows[-1], boxes, 0, min_gap)) == 1:
            rest = [i for g in rows[:-1] for i in g]
            return xycut(rest, boxes, min_gap, depth + 1) + xycut(rows[-1], boxes, min_gap, depth + 1)
        rest = [i for g in rows[1:] for i in g]
        return xycut(rows[0], boxes, min_gap, depth + 1) + xycut(rest, boxes, min_gap, depth + 1)
    # Overlapping boxes with no clean cut: top-to-bottom, then left-to-right.
    return sorted(idx, key=lambda i: (boxes[i][1], boxes[i][0]))


def order_boxes(boxes: list[Box], kinds: list[str] | None = None, min_gap: float = 1.0) -> list[int]:
    """Indices of `boxes` in reading order; `kinds` puts header first and footer last."""
    kinds = kinds or ["text"] * len(boxes)
    head = [i for i, k in enumerate(kinds) if k == "header"]
    foot = [i for i, k in enumerate(kinds) if k in ("footer", "page_number")]
    body = [i for i in range(len(boxes)) if i not in head and i not in foot]
    out: list[int] = []
    for group in (head, body, foot):
        if group:
            out.extend(xycut(group, boxes, min_gap))
    return out
