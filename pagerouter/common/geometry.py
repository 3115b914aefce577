"""Axis-aligned boxes: the one bbox type and the few measures every stage takes of them.

Triage (paint-order boxes, pictures), the text-layer reader (lines, tables, figures) and the OCR
route (line and region boxes in pixels) all work on plain `(x0, y0, x1, y1)` tuples with
y growing downwards; only the unit differs (PDF points or pixels), which none of these helpers
care about. Plain tuples, not `pymupdf.Rect`: a Rect per box costs more than the measuring.

The numeric details (which products are clamped, the 1e-6 floor under a divisor) are the ones
the former private copies used, so moving a caller here never changes its output.
Reading order (`_overlap_y` and friends) lives with the reading-order code, not here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

BBox = tuple[float, float, float, float]
"""(x0, y0, x1, y1): left, top, right, bottom."""


def area(b: Sequence[float]) -> float:
    """Area of a box; 0 for an empty or inverted one (each side clamped at 0)."""
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def intersection_area(a: Sequence[float], b: Sequence[float]) -> float:
    """Area the two boxes share (0 when they do not overlap)."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def overlap_share(a: Sequence[float], b: Sequence[float]) -> float:
    """Share of box `a`'s area that box `b` covers (0..1). A degenerate `a` (zero width or
    height) gets a 1e-6 area floor, so the share is 0 rather than a division by zero."""
    # The raw product (not `area`): the divisor the text-layer and OCR copies used.
    return intersection_area(a, b) / max(1e-6, (a[2] - a[0]) * (a[3] - a[1]))


def union(boxes: Iterable[Sequence[float]]) -> BBox:
    """The smallest box holding all `boxes` (at least one)."""
    bs = boxes if isinstance(boxes, (list, tuple)) else list(boxes)
    return (min(b[0] for b in bs), min(b[1] for b in bs), max(b[2] for b in bs), max(b[3] for b in bs))


def merge_overlapping(boxes: Iterable[Sequence[float]]) -> list[BBox]:
    """`boxes` with every two that overlap replaced by their union, until none overlap (boxes
    that only touch stay apart); the first box of each group keeps its place."""
    out = [tuple(b) for b in boxes]
    joined = True
    while joined:
        joined = False
        for i in range(len(out)):
            a = out[i]
            for j in range(i + 1, len(out)):
                b = out[j]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    out[i] = union((a, b))
                    del out[j]
                    joined = True
                    break
            if joined:
                break
    return out


def grow(b: Sequence[float], margin: float) -> BBox:
    """The box widened by `margin` on every side (a negative margin shrinks it)."""
    return (b[0] - margin, b[1] - margin, b[2] + margin, b[3] + margin)


def center(b: Sequence[float]) -> tuple[float, float]:
    """The box's centre point."""
    return (b[0] + b[2]) / 2, (b[1] + b[3]) / 2


def center_inside(b: Sequence[float], region: Sequence[float], tol: float = 0.0) -> bool:
    """Whether the centre of `b` lies in `region` widened by `tol` (edges included): the cheap
    "does this line/word belong to that box" test, robust to boxes that stick out a little."""
    cx, cy = center(b)
    return region[0] - tol <= cx <= region[2] + tol and region[1] - tol <= cy <= region[3] + tol
