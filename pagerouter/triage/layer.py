"""What the text layer holds and how it is painted: one walk over the shared text dict plus
PyMuPDF's cheap placement calls (image info, fonts, and the paint-order log only when a
sizeable picture could hide text).

Coordinates: PyMuPDF reports text, image and paint-log boxes in the *unrotated* page; renders
and our outputs are in the page as displayed, so boxes are moved with `page.rotation_matrix`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pymupdf

Box = tuple[float, float, float, float]


@dataclass
class Span:
    bbox: Box  # displayed-page points
    chars: int  # non-space characters
    light: bool  # colour near white: may be invisible on a white page


@dataclass
class Layer:
    visible_text: str = ""
    invisible_text: str = ""
    visible_chars: int = 0
    invisible_chars: int = 0
    spans: list[Span] = field(default_factory=list)  # visible spans with text
    light_chars: int = 0
    chars_by_font: dict[str, int] = field(default_factory=dict)

    @property
    def total_chars(self) -> int:
        return self.visible_chars + self.invisible_chars

    @property
    def invisible_share(self) -> float:
        return self.invisible_chars / self.total_chars if self.total_chars else 0.0


def _nonspace(s: str) -> int:
    return len(s) - s.count(" ") - s.count("\u00a0") - s.count("\t")


def to_display(page: pymupdf.Page, box: Any) -> Box:
    """A box from PyMuPDF's unrotated page space into the displayed page (top-left origin)."""
    if not page.rotation:
        return tuple(box)  # type: ignore[return-value]
    r = pymupdf.Rect(box) * page.rotation_matrix
    r.normalize()
    return (r.x0, r.y0, r.x1, r.y1)


def read_layer(page: pymupdf.Page, textdict: dict, light_level: int) -> Layer:
    """Visible/invisible text, visible span boxes and characters per font from the text dict.

    Invisible text is render mode 3 (MuPDF reports it with alpha 0); that is what OCR tools put
    over a scan, so it is kept apart from what the page shows.
    """
    lay = Layer()
    vis: list[str] = []
    inv: list[str] = []
    light_min = light_level
    fonts = lay.chars_by_font
    for block in textdict.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", ()):
            vline: list[str] = []
            iline: list[str] = []
            for sp in line.get("spans", ()):
                t = sp.get("text", "")
                n = _nonspace(t)
                if not n:
                    continue
                if sp.get("alpha", 255) == 0:
                    iline.append(t)
                    lay.invisible_chars += n
                    continue
                vline.append(t)
                lay.visible_chars += n
                c = sp.get("color", 0)
                light = ((c >> 16) & 255) >= light_min and ((c >> 8) & 255) >= light_min and (c & 255) >= light_min
                if light:
                    lay.light_chars += n
                lay.spans.append(Span(to_display(page, sp["bbox"]), n, light))
                f = sp.get("font", "")
                fonts[f] = fonts.get(f, 0) + n
            if vline:
                vis.append("".join(vline))
            if iline:
                inv.append("".join(iline))
    lay.visible_text = "\n".join(vis)
    lay.invisible_text = "\n".join(inv)
    return lay


def unmapped_fonts(page: pymupdf.Page) -> set[str]:
    """Names (as text spans report them) of fonts whose codes have no Unicode map: composite
    (Type0) fonts with an Identity encoding, and Type3 fonts, without a ToUnicode stream. Their
    text comes out as glyph ids or control codes unless MuPDF can guess from glyph names."""
    out: set[str] = set()
    doc = page.parent
    for xref, _ext, ftype, basefont, _name, encoding, *_ in page.get_fonts():
        if ftype not in ("Type0", "Type3"):
            continue
        if ftype == "Type0" and not str(encoding).startswith("Identity"):
            continue
        try:
            kind, _val = doc.xref_get_key(xref, "ToUnicode")
        except Exception:  # a damaged font object: treat as unmapped
            kind = "null"
        if kind == "null":
            base = basefont.split("+", 1)[-1] if "+" in basefont[:8] else basefont
            out.add(base)
            out.add(basefont)
    return out


@dataclass
class Picture:
    bbox: Box  # displayed-page points, clipped to the page
    area_share: float


def pictures(page: pymupdf.Page, min_area_share: float, min_side: float) -> tuple[list[Picture], float]:
    """Sizeable raster images (clipped to the page) and the share of the page that images cover
    (union, measured on a coarse grid so overlapping images are not counted twice)."""
    prect = page.rect
    parea = prect.width * prect.height or 1.0
    out: list[Picture] = []
    for info in page.get_image_info():
        r = pymupdf.Rect(to_display(page, info["bbox"])) & prect
        if r.is_empty:
            continue
        share = r.width * r.height / parea
        if share >= min_area_share and min(r.width, r.height) >= min_side:
            out.append(Picture((r.x0, r.y0, r.x1, r.y1), share))
    out.sort(key=lambda p: -p.area_share)
    if not out:
        return out, 0.0
    if len(out) == 1:
        return out, out[0].area_share
    import numpy as np

    g = 64
    grid = np.zeros((g, g), dtype=bool)
    for p in out:
        x0, y0, x1, y1 = p.bbox
        grid[int(y0 / prect.height * g) : int(np.ceil(y1 / prect.height * g)), int(x0 / prect.width * g) : int(np.ceil(x1 / prect.width * g))] = True
    return out, float(grid.mean())


def text_under_images_share(page: pymupdf.Page, min_area_share: float) -> float:
    """Share of visible text area that a later-painted image covers (MuPDF's paint-order log).

    Scanners and some converters put the OCR text *under* the scan instead of making it
    invisible: the dict then calls it visible, but nobody can see it."""
    prect = page.rect
    parea = prect.width * prect.height or 1.0
    log = page.get_bboxlog()
    texts: list[tuple[int, pymupdf.Rect]] = []
    images: list[tuple[int, pymupdf.Rect]] = []
    for i, (kind, box) in enumerate(log):
        if kind in ("fill-text", "stroke-text"):
            texts.append((i, pymupdf.Rect(box)))
        elif kind == "fill-image":
            r = pymupdf.Rect(box)
            if r.get_area() / parea >= min_area_share:
                images.append((i, r))
    if not texts or not images:
        return 0.0
    total = hidden = 0.0
    for i, tr in texts:
        a = tr.get_area()
        total += a
        if any(j > i and (tr & ir).get_area() >= 0.8 * a for j, ir in images):
            hidden += a
    return hidden / total if total else 0.0
