"""What the page paints where: its pictures, the paint-order log, and how opaque each image
paint is, so a later picture that covers text is known to hide it. Shared by triage (hidden text,
pictures over text), the text-layer reader (images placed on a born-digital page) and ink
accounting.

Coordinates: PyMuPDF reports image and paint-log boxes in the *unrotated* page; renders and our
outputs are in the page as displayed, so boxes are moved with `page.rotation_matrix`
(`to_display`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pymupdf

from ..common.geometry import BBox, area, intersection_area
from ..common.pagetext import page_images

def to_display(page: pymupdf.Page, box: Any, matrix: pymupdf.Matrix | None = None) -> BBox:
    """A box from PyMuPDF's unrotated page space into the displayed page (top-left origin).
    Pass `matrix` (page.rotation_matrix, or None for an unrotated page) when converting many
    boxes: asking the page for its rotation costs ~10 us a time."""
    if matrix is None:
        if not page.rotation:
            return tuple(box)  # type: ignore[return-value]
        matrix = page.rotation_matrix
    r = pymupdf.Rect(box) * matrix
    r.normalize()
    return (r.x0, r.y0, r.x1, r.y1)


IMAGE_PAINTS = frozenset({"fill-image", "fill-imgmask"})
"""Paint-log kinds that place a raster image (an image mask is a stencil: bitonal scans use them)."""


@dataclass
class Picture:
    bbox: BBox  # displayed-page points, clipped to the page
    area_share: float


def pictures(page: pymupdf.Page, min_area_share: float, min_side: float) -> tuple[list[Picture], float]:
    """Sizeable raster images (clipped to the page) and the share of the page that images cover
    (union, measured on a coarse grid so overlapping images are not counted twice)."""
    prect = page.rect
    parea = prect.width * prect.height or 1.0
    out: list[Picture] = []
    # The resource list is nearly free; pages without images stop here.
    # (Inline images are not in the resources; a page of only inline images has no text and is
    # caught by the ink render instead.)
    if not page_images(page):
        return out, 0.0
    rotm = page.rotation_matrix if page.rotation else None
    # Image placements from the paint log (shared with the hidden-text check and the text-layer
    # reader): `get_image_info()` re-walks every image and cost ~90 ms on image-heavy pages.
    for kind, box in paint_log(page):
        if kind not in IMAGE_PAINTS:
            continue
        r = pymupdf.Rect(box if rotm is None else to_display(page, box, rotm)) & prect
        if r.is_empty:
            continue
        share = r.width * r.height / parea
        if share >= min_area_share and min(r.width, r.height) >= min_side:
            out.append(Picture((r.x0, r.y0, r.x1, r.y1), share))
    out.sort(key=lambda p: -p.area_share)
    return out, union_share([p.bbox for p in out], prect)


def union_share(boxes: list[BBox], prect: pymupdf.Rect, grid: int = 64) -> float:
    """Share of the page covered by the union of `boxes` (coarse grid: overlaps count once)."""
    if not boxes:
        return 0.0
    parea = prect.width * prect.height or 1.0
    if len(boxes) == 1:
        b = boxes[0]
        return max(0.0, (b[2] - b[0]) * (b[3] - b[1])) / parea
    g = np.zeros((grid, grid), dtype=bool)
    sx, sy = grid / (prect.width or 1.0), grid / (prect.height or 1.0)
    for x0, y0, x1, y1 in boxes:
        g[int(y0 * sy) : int(np.ceil(y1 * sy)), int(x0 * sx) : int(np.ceil(x1 * sx))] = True
    return float(g.mean())


# The paint-order log runs the whole page through MuPDF (as costly as a text extraction), and
# both triage and the text-layer reader want it on pages with pictures: keep the last page's.
_LAST_LOG: tuple[Any, list] | None = None


def paint_log(page: pymupdf.Page) -> list:
    """`page.get_bboxlog()` (paint order, unrotated page space), computed once per page object."""
    global _LAST_LOG
    if _LAST_LOG is not None and _LAST_LOG[0] is page:
        return _LAST_LOG[1]
    log = page.get_bboxlog()
    _LAST_LOG = (page, log)
    return log


# --- how opaque each image paint is -----------------------------------------------------------
#
# The paint-order log (`get_bboxlog`) says *where* and *in which order* images are painted, not
# *how*: a translucent "DRAFT" watermark over a born-digital page looks exactly like a scan
# painted over its hidden OCR layer. An image hides what is under it only where it is opaque, so
# for the pages where the log finds text under a later image, the page is run once more through
# a small MuPDF device that sees what the log does not:
#
# - constant alpha (`/ca` in the ExtGState, and transparency-group alpha): below
#   `OPAQUE_MIN_ALPHA` the text shows through;
# - blend modes under which dark text under the image stays dark (Multiply, Darken, Colour
#   burn, Overlay, Soft light): nothing is hidden whatever the image;
# - an ExtGState soft mask (`/SMask` in the graphics state) in force: the image is masked,
#   not a plain opaque picture;
# - the image's own mask (an `/SMask` alpha channel, a PNG with alpha, a stencil `/Mask`, or a
#   colour-key mask): the mask is decoded and the text box is hidden only if the mask is opaque
#   over most of it;
# - paints inside a soft-mask definition are not painted at all.
#
# Stencil masks (`fill-imgmask`, bitonal scans) keep their old meaning (they cover their box)
# unless alpha, blend mode or a soft mask say otherwise.

OPAQUE_MIN_ALPHA = 0.9
"""Constant (or group) alpha from which an image paint is taken to hide what is under it."""
_MASK_OPAQUE_LEVEL = 230  # a mask sample this high (of 255) is opaque
_HIDING_BLENDS = frozenset({0, 2, 5, 6, 8, 10, 11, 12, 13, 14, 15})
"""MuPDF blend modes that can hide dark text: Normal, Screen, Lighten, Colour dodge, Hard light,
Difference, Exclusion and the non-separable ones. Multiply, Darken, Colour burn, Overlay and Soft
light keep black under-paint black (the image only darkens the paper around it)."""


@dataclass
class ImagePaint:
    """How one image paint of the page (in paint order) is composited."""

    alpha: float = 1.0  # constant alpha times the alpha of enclosing groups
    hiding_blend: bool = True  # every enclosing group uses a blend mode that can hide text
    soft_masked: bool = False  # an ExtGState soft mask is in force
    in_mask_definition: bool = False  # painted into a soft mask, not onto the page
    image: Any = None  # the fz_image (only when it carries its own mask), to read the mask
    ctm: Any = None  # image space (unit square) -> unrotated page

    @property
    def plain_opaque(self) -> bool:
        """Covers its whole box: opaque, normal compositing, no mask of any kind."""
        return (
            self.alpha >= OPAQUE_MIN_ALPHA
            and self.hiding_blend
            and not self.soft_masked
            and not self.in_mask_definition
            and self.image is None
        )

    @property
    def can_hide(self) -> bool:
        return self.alpha >= OPAQUE_MIN_ALPHA and self.hiding_blend and not self.soft_masked and not self.in_mask_definition


def _image_paint_device():
    m = pymupdf.mupdf

    class _Dev(m.FzDevice2):
        def __init__(self):
            super().__init__()
            for n in (
                "fill_image", "fill_image_mask", "begin_group", "end_group", "begin_mask", "end_mask",
                "clip_path", "clip_stroke_path", "clip_text", "clip_stroke_text", "clip_image_mask", "pop_clip",
            ):  # fmt: skip
                getattr(self, "use_virtual_" + n)()
            self.paints: list[ImagePaint] = []
            self.groups: list[tuple[bool, float]] = []
            self.clips: list[bool] = []  # True: a soft mask
            self.in_mask = 0

        def _paint(self, alpha: float) -> ImagePaint:
            a = alpha
            for _hide, ga in self.groups:
                a *= ga
            return ImagePaint(
                alpha=a,
                hiding_blend=all(h for h, _ in self.groups),
                soft_masked=any(self.clips),
                in_mask_definition=self.in_mask > 0,
            )

        def fill_image(self, ctx, image, ctm, alpha, cp):
            p = self._paint(alpha)
            if image.mask or image.use_colorkey:
                p.image = m.FzImage(m.ll_fz_keep_image(image))
                p.ctm = m.FzMatrix(ctm)
            self.paints.append(p)

        def fill_image_mask(self, ctx, image, ctm, cs, color, alpha, cp):
            self.paints.append(self._paint(alpha))

        def begin_group(self, ctx, area, cs, isolated, knockout, blendmode, alpha):
            self.groups.append(((blendmode & 15) in _HIDING_BLENDS, alpha))

        def end_group(self, ctx):
            if self.groups:
                self.groups.pop()

        def begin_mask(self, ctx, *a):
            self.in_mask += 1

        def end_mask(self, ctx, *a):
            self.in_mask = max(0, self.in_mask - 1)
            self.clips.append(True)

        def _clip(self, ctx, *a):
            self.clips.append(False)

        clip_path = clip_stroke_path = clip_text = clip_stroke_text = clip_image_mask = _clip

        def pop_clip(self, ctx):
            if self.clips:
                self.clips.pop()

    return _Dev()


def image_paints(page: pymupdf.Page) -> list[ImagePaint]:
    """How each image paint of the page is composited, in paint order (the order of the image
    entries of `paint_log`). Unrotated page space, like the paint log."""
    m = pymupdf.mupdf
    dev = _image_paint_device()
    fzpage = page.this if isinstance(page.this, m.FzPage) else m.FzPage(page.this)
    rotation = page.rotation
    if rotation:  # the paint log is taken at rotation 0: image geometry must be in the same space
        page.set_rotation(0)
    try:
        m.fz_run_page(fzpage, dev, m.FzMatrix(), m.FzCookie())
        m.fz_close_device(dev)
    finally:
        if rotation:
            page.set_rotation(rotation)
    return dev.paints


def _samples(pix) -> np.ndarray:
    m = pymupdf.mupdf
    a = np.frombuffer(m.fz_pixmap_samples_memoryview(pix), dtype=np.uint8)
    n = pix.n()
    return a.reshape(pix.h(), pix.stride())[:, : pix.w() * n].reshape(pix.h(), pix.w(), n)


def _mask_alpha(p: ImagePaint) -> np.ndarray | None:
    """The opacity of an image with its own mask (H x W uint8, 255 = opaque), or None if it
    cannot be read (then the image counts as opaque, the old behaviour)."""
    m = pymupdf.mupdf
    try:
        img = p.image.m_internal
        if img.mask:  # /SMask, a PNG's alpha, a stencil /Mask: MuPDF decodes all as opacity
            return _samples(m.fz_get_unscaled_pixmap_from_image(m.FzImage(m.ll_fz_keep_image(img.mask))))[:, :, 0]
        pix = m.fz_get_unscaled_pixmap_from_image(p.image)  # a colour key comes back as alpha
        if not pix.alpha():
            return None
        return _samples(pix)[:, :, -1]
    except Exception:
        return None


def _opaque_share(p: ImagePaint, alpha: np.ndarray, box: BBox) -> float:
    """Share of `box` (unrotated page) where the image's mask is opaque."""
    m = pymupdf.mupdf
    inv = m.fz_invert_matrix(p.ctm)
    r = m.fz_transform_rect(m.FzRect(*box), inv)  # unit square of the image
    h, w = alpha.shape
    # image space: (0,0) is the top-left sample row for MuPDF's image matrix convention
    x0, x1 = max(0, int(np.floor(r.x0 * w))), min(w, int(np.ceil(r.x1 * w)))
    y0, y1 = max(0, int(np.floor(r.y0 * h))), min(h, int(np.ceil(r.y1 * h)))
    if x1 <= x0 or y1 <= y0:
        return 0.0
    return float((alpha[y0:y1, x0:x1] >= _MASK_OPAQUE_LEVEL).mean())


def hidden_text_boxes(page: pymupdf.Page, min_area_share: float) -> tuple[list[BBox], float]:
    """Boxes (unrotated page space, as in the text dict) of text that a *later*, opaque image of
    at least `min_area_share` of the page covers (>= 80% of the text box), and the total text area.

    Only pages that list images pay for the paint log; only pages where the log finds text under
    a later image pay for the compositing trace (`image_paints`): translucent, blended, soft-masked
    or alpha-masked images (watermarks) hide text only where they are opaque.
    """
    if not page_images(page):
        return [], 0.0
    prect = page.rect
    parea = prect.width * prect.height or 1.0
    # plain tuples: a pymupdf.Rect per paint operation cost more than the whole triage
    texts: list[tuple[int, BBox]] = []
    images: list[tuple[int, int, BBox]] = []  # (log index, image paint index, box)
    k = 0
    for i, (kind, box) in enumerate(paint_log(page)):
        if kind in ("fill-text", "stroke-text"):
            texts.append((i, tuple(box)))
        elif kind in IMAGE_PAINTS:
            if area(box) / parea >= min_area_share:
                images.append((i, k, tuple(box)))
            k += 1
    total = sum(area(tb) for _, tb in texts)
    if not texts or not images:
        return [], total
    candidates: list[tuple[BBox, list[tuple[int, BBox]]]] = []
    for i, tb in texts:
        a = area(tb)
        over = [(kk, ib) for j, kk, ib in images if j > i and intersection_area(tb, ib) >= 0.8 * a]
        if over:
            candidates.append((tb, over))
    if not candidates:
        return [], total
    paints = image_paints(page)
    if len(paints) != k:  # the two runs disagree: keep the paint log's word (every image opaque)
        return [tb for tb, _ in candidates], total
    alphas: dict[int, np.ndarray | None] = {}
    hidden: list[BBox] = []
    for tb, over in candidates:
        for kk, _ib in over:
            p = paints[kk]
            if p.plain_opaque:
                hidden.append(tb)
                break
            if not p.can_hide:
                continue
            if p.image is None:  # a stencil mask at full opacity: covers its box as before
                hidden.append(tb)
                break
            if kk not in alphas:
                alphas[kk] = _mask_alpha(p)
            al = alphas[kk]
            if al is None or _opaque_share(p, al, tb) >= 0.8:
                hidden.append(tb)
                break
    return hidden, total


def text_under_images_share(page: pymupdf.Page, min_area_share: float) -> float:
    """Share of visible text area that a later-painted image covers (MuPDF's paint-order log).

    Scanners and some converters put the OCR text *under* the scan instead of making it
    invisible: the dict then calls it visible, but nobody can see it."""
    hidden, total = hidden_text_boxes(page, min_area_share)
    if not hidden or not total:
        return 0.0
    return sum((b[2] - b[0]) * (b[3] - b[1]) for b in hidden) / total
