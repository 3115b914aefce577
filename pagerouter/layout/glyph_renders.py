"""Page renders that leave glyphs out or keep only them (MuPDF devices), for the visibility
proof of triage (`triage/visibility.py`) and for OCR of a page whose hidden text must not be read
(`ocr/task.py`): below both stages, so neither imports the other."""

from __future__ import annotations

import numpy as np
import pymupdf

from ..common.geometry import BBox

_GRAY = None
_CP = None


def _glyph_device(target):
    """A device that draws only text, in black, onto `target`: the glyphs' own pixels."""
    m = pymupdf.mupdf
    global _GRAY, _CP
    if _GRAY is None:
        _GRAY = m.fz_device_gray()
        _CP = m.fz_default_color_params.internal() if hasattr(m.fz_default_color_params, "internal") \
            else m.fz_default_color_params

    class _TextOnly(m.FzDevice2):
        def __init__(self):
            super().__init__()
            self.use_virtual_fill_text()
            self.use_virtual_stroke_text()
            self.use_virtual_clip_text()
            self.use_virtual_pop_clip()

        def fill_text(self, ctx, text, ctm, cs, color, alpha, cp):
            m.ll_fz_fill_text(target.m_internal, text, ctm, _GRAY.m_internal, (0.0,), 1.0, cp)

        def stroke_text(self, ctx, text, stroke, ctm, cs, color, alpha, cp):
            # (the glyphs filled: the mask marks where outlined text is, close enough)
            m.ll_fz_fill_text(target.m_internal, text, ctm, _GRAY.m_internal, (0.0,), 1.0, cp)

        def clip_text(self, ctx, text, ctm, scissor):
            # text that clips (render modes 4-7) marks its glyphs too; whether anything fills them
            # is for the page's own pixels to say
            m.ll_fz_fill_text(target.m_internal, text, ctm, _GRAY.m_internal, (0.0,), 1.0, _CP)

        def pop_clip(self, ctx):
            pass

    return _TextOnly()


def render_clip(page: pymupdf.Page, clip: BBox, zoom: float, cull: list[BBox] | None = None, glyphs: bool = False) -> np.ndarray:
    """RGB (or, with `glyphs`, gray glyph-mask) pixels of `clip` (unrotated page space) at `zoom`:
    the whole page, the page with the glyphs over `cull` boxes dropped, or the glyphs alone."""
    m = pymupdf.mupdf
    r = pymupdf.Rect(clip) * zoom
    ir = m.FzIrect(int(np.floor(r.x0)), int(np.floor(r.y0)), int(np.ceil(r.x1)), int(np.ceil(r.y1)))
    cs = m.fz_device_gray() if glyphs else m.fz_device_rgb()
    pix = m.fz_new_pixmap_with_bbox(cs, ir, m.FzSeparations(), 0)
    m.fz_clear_pixmap_with_value(pix, 255)
    draw = m.fz_new_draw_device(m.FzMatrix(), pix)
    chain = [draw]
    if glyphs:
        chain.append(_glyph_device(draw))
    for box in cull or ():  # one culling device per box: MuPDF's list form takes a C array
        chain.append(m.fz_new_culling_device_with_rects(chain[-1], 1, m.FzRect(*(pymupdf.Rect(box) * zoom))))
    fzpage = page.this if isinstance(page.this, m.FzPage) else m.FzPage(page.this)
    try:
        m.fz_run_page(fzpage, chain[-1], m.FzMatrix(zoom, 0, 0, zoom, 0, 0), m.FzCookie())
    finally:
        for dev in reversed(chain):
            m.fz_close_device(dev)
    a = np.frombuffer(m.fz_pixmap_samples_memoryview(pix), dtype=np.uint8)
    n = pix.n()
    return a.reshape(pix.h(), pix.stride())[:, : pix.w() * n].reshape(pix.h(), pix.w(), n).copy()


_MAX_CULLS = 24  # MuPDF's device stack is shallow: chain at most this many culling devices


def cull_boxes(boxes: list[BBox], clip: BBox) -> list[BBox]:
    """Few boxes covering `boxes`: each as it is, else merged per text row, else the whole clip
    (other glyphs culled with them change pixels only outside the suspects' own glyphs)."""
    if len(boxes) <= _MAX_CULLS:
        return boxes
    rows: list[list[float]] = []
    for b in sorted(boxes, key=lambda b: (b[1], b[0])):
        r = rows[-1] if rows else None
        if r is not None and b[1] < r[3] - 0.3 * (b[3] - b[1]):
            r[0], r[1], r[2], r[3] = min(r[0], b[0]), min(r[1], b[1]), max(r[2], b[2]), max(r[3], b[3])
        else:
            rows.append(list(b))
    return [tuple(r) for r in rows] if len(rows) <= _MAX_CULLS else [clip]


def render_without_text(page: pymupdf.Page, boxes: list[BBox], zoom: float) -> np.ndarray | None:
    """The whole page as RGB at `zoom` with the glyphs inside `boxes` (page points; the spans
    triage/visibility.py found not visible) left out, or None for a rotated page. Text in the paper's colour laid
    over a scan cuts pale strokes through the scan's letters; what the page shows is the scan, so
    OCR reads it without them."""
    if page.rotation or not boxes:
        return None
    r = page.rect
    img = render_clip(page, (r.x0, r.y0, r.x1, r.y1), zoom, cull=cull_boxes(list(boxes), (r.x0, r.y0, r.x1, r.y1)))
    return np.ascontiguousarray(img[:, :, :3])
