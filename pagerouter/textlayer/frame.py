"""The page's reading frame: coordinates in which its text runs left to right, top down.

Layout analysis (fragments on a baseline, columns, paragraphs, tables, furniture bands) is
done on horizontal lines. A page shown with /Rotate 90 whose content is drawn upright in
the unrotated page (a landscape page set by rotating the page, not the text: corpus
`edgar-rotated90.pdf`) has all its lines running vertically *as displayed*; so has an
unrotated page whose text is drawn with a rotated text matrix (a landscape table printed
sideways). Read as displayed, every line would be a one-line "vertical" paragraph.

So the frame is chosen from the text itself: the dominant writing direction of the page's
lines (MuPDF's line `dir`, in unrotated page space, weighted by characters) picks one of
the four right-angle rotations of the unrotated page that turns that direction into
left-to-right. Everything is read in that frame, and the blocks' boxes are mapped back to
the page as displayed (the model's coordinates) at the end. For an ordinary page the frame
is the displayed page and nothing changes. Only right angles are considered: text at other
angles (a diagonal watermark) never decides the frame and stays "not horizontal".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pymupdf

from ..common.geometry import BBox

_AXIS = 0.05  # a line direction within this of an axis counts for it (sin of ~3 degrees)


@dataclass(frozen=True)
class Frame:
    """`matrix`: unrotated page space (the text dict's) -> frame; `to_display`: frame ->
    the page as displayed, None where the frame is the displayed page."""

    angle: int  # rotation of the unrotated page that makes the text upright (0/90/180/270)
    matrix: pymupdf.Matrix | None  # None: the unrotated page itself (angle 0)
    inverse: pymupdf.Matrix | None
    to_display: pymupdf.Matrix | None
    from_display: pymupdf.Matrix | None
    width: float
    height: float

    def display_box(self, box: BBox) -> BBox:
        """A box in the frame as a box on the displayed page."""
        if self.to_display is None:
            return box
        r = pymupdf.Rect(box) * self.to_display
        return (r.x0, r.y0, r.x1, r.y1)

    def frame_box(self, box: BBox) -> BBox:
        """A box on the displayed page as a box in the frame."""
        if self.from_display is None:
            return box
        r = pymupdf.Rect(box) * self.from_display
        return (r.x0, r.y0, r.x1, r.y1)


def dominant_angle(textdict: dict[str, Any]) -> int:
    """Rotation (0/90/180/270) of the unrotated page under which most characters read left to
    right; 0 when no text runs along an axis. Ties go to 0, then to the first angle found."""
    weight = {0: 0, 90: 0, 180: 0, 270: 0}
    for block in textdict.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", ()):
            dx, dy = line.get("dir", (1.0, 0.0))
            n = sum(len(s.get("text", "").strip()) for s in line.get("spans", ()))
            if not n:
                continue
            # the rotation taking (dx, dy) to (1, 0) in y-down page space
            if abs(dy) < _AXIS:
                weight[0 if dx > 0 else 180] += n
            elif abs(dx) < _AXIS:
                weight[90 if dy < 0 else 270] += n
    best = max(weight, key=lambda a: (weight[a], a == 0))
    return best if weight[best] > weight[0] else 0


def _rotation(angle: int, w: float, h: float) -> pymupdf.Matrix:
    """Unrotated page (w x h, origin top left) -> the page turned clockwise by `angle` as
    displayed, origin top left: what /Rotate `angle` does (a vector going up, (0, -1), turns
    into (1, 0) at 90)."""
    m = pymupdf.Matrix(angle)
    r = pymupdf.Rect(0, 0, w, h) * m
    return m * pymupdf.Matrix(1, 0, 0, 1, -r.x0, -r.y0)


def reading_frame(page: pymupdf.Page, textdict: dict[str, Any]) -> Frame:
    """The frame to read `page` in (see the module docstring)."""
    angle = dominant_angle(textdict)
    rot = page.rotation % 360
    if angle == rot:  # the displayed page is upright: the plain case, today's coordinates
        m = page.rotation_matrix if rot else None
        inv = page.derotation_matrix if rot else None
        return Frame(angle, m, inv, None, None, page.rect.width, page.rect.height)
    un = page.rect * page.derotation_matrix if rot else page.rect
    w, h = abs(un.width), abs(un.height)
    m = _rotation(angle, w, h) if angle else pymupdf.Matrix(1, 0, 0, 1, 0, 0)
    inv = ~m
    disp = page.rotation_matrix if rot else pymupdf.Matrix(1, 0, 0, 1, 0, 0)
    to_display = inv * disp
    size = pymupdf.Rect(0, 0, w, h) * m
    return Frame(angle, m, inv, to_display, ~to_display, abs(size.width), abs(size.height))
