"""What the page shows: a small grayscale render, its ink, and whether a picture holds text.

The render is small on purpose (36 DPI for pages without pictures, 72 DPI with them, and a
pixel cap): it only has to show where ink is, and, inside pictures, whether the dark strokes
are letter-sized blobs sitting in rows (printed text) or something else (photos, gradients,
charts drawn as one big shape).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import pymupdf

from ..common.geometry import BBox


@dataclass
class Span:
    bbox: BBox  # displayed-page points
    chars: int  # non-space characters
    light: bool  # colour near white: may be invisible on a white page



@dataclass
class Render:
    gray: np.ndarray  # uint8 H x W, displayed page (or a clip of it)
    scale: float  # pixels per point
    origin: tuple[float, float] = (0.0, 0.0)  # page point at pixel (0, 0)

    def px(self, box: BBox, pad: int = 0) -> tuple[int, int, int, int]:
        """Pixel box (clamped to the render) of a page-point box."""
        h, w = self.gray.shape
        s = self.scale
        ox, oy = self.origin
        return (
            max(0, int((box[0] - ox) * s) - pad),
            max(0, int((box[1] - oy) * s) - pad),
            min(w, int(np.ceil((box[2] - ox) * s)) + pad),
            min(h, int(np.ceil((box[3] - oy) * s)) + pad),
        )


def render_gray(page: pymupdf.Page, dpi: float, max_pixels: int) -> Render:
    r = page.rect
    scale = dpi / 72.0
    px = r.width * scale * r.height * scale
    if px > max_pixels:
        scale *= (max_pixels / px) ** 0.5
    pix = page.get_pixmap(matrix=pymupdf.Matrix(scale, scale), colorspace=pymupdf.csGRAY, alpha=False)
    gray = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)[:, :, 0]
    return Render(gray, pix.width / r.width if r.width else scale)


def render_clip_gray(page: pymupdf.Page, box: BBox, dpi: float, max_pixels: int) -> Render:
    """Render only `box` (unrotated page, points); `Render.px` then takes boxes relative to the
    page as usual because the render remembers its origin."""
    w, h = box[2] - box[0], box[3] - box[1]
    scale = dpi / 72.0
    if w * h * scale * scale > max_pixels:
        scale *= (max_pixels / (w * h * scale * scale)) ** 0.5
    pix = page.get_pixmap(
        matrix=pymupdf.Matrix(scale, scale), clip=pymupdf.Rect(box), colorspace=pymupdf.csGRAY, alpha=False
    )
    gray = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)[:, :, 0]
    return Render(gray, pix.width / w if w else scale, (box[0], box[1]))


def ink_share(rnd: Render, level: int) -> float:
    return float((rnd.gray < level).mean()) if rnd.gray.size else 0.0


@dataclass
class Marks:
    """Ink structure that could be content on a page without text: dark strokes that stand out
    from their surroundings, are not specks, and are not the page's edge (scanner shadow)."""

    count: int  # marks at least letter-height
    largest_pt: float  # longer side of the biggest mark, points
    speckles: int  # dark specks too small to be a mark (noise), for the reasons
    rows: int = 0  # rows of letter-like blobs (`text_line_boxes`), filled in by the caller

    def is_content(self, max_marks: int, max_mark_pt: float, max_rows: int = 0) -> bool:
        return self.count > max_marks or self.largest_pt >= max_mark_pt or self.rows > max_rows


def content_marks(
    rnd: Render, level: int, contrast: int, min_h_pt: float, max_elongation: float, edge_margin_pt: float
) -> Marks:
    """Connected dark strokes that could be content (a line of text, a stamp, a signature).

    A pixel is ink when it is darker than `level` *and* at least `contrast` gray levels darker
    than its ~12 pt neighbourhood: so a uniform grey or dark page (lid open, tinted paper)
    shows nothing, while letters on it do. Components reaching into the outer `edge_margin_pt`
    of the page (scanner shadows, black borders, where printers never print) and long thin lines (a fold, a shadow's inner edge) are not
    counted; specks smaller than `min_h_pt` in both directions are noise.
    """
    g = rnd.gray
    h, w = g.shape
    if h < 8 or w < 8:
        return Marks(0, 0.0, 0)
    s = rnd.scale
    block = max(3, int(round(12 * s / 2)) * 2 + 1)
    local = cv2.adaptiveThreshold(g, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, block, contrast)
    mask = (local.astype(bool) & (g < level)).astype(np.uint8)
    if not mask.any():
        return Marks(0, 0.0, 0)
    n, _labels, stats, _c = cv2.connectedComponentsWithStats(mask, connectivity=8)
    st = stats[1:]
    x, y, cw, ch, area = st[:, 0], st[:, 1], st[:, 2], st[:, 3], st[:, 4]
    m = int(edge_margin_pt * s)
    edge = (x <= m) | (y <= m) | (x + cw >= w - m) | (y + ch >= h - m)
    long_side = np.maximum(cw, ch)
    short_side = np.maximum(np.minimum(cw, ch), 1)
    thin_line = long_side >= max_elongation * short_side
    min_px = max(2.0, min_h_pt * s)
    big_enough = (long_side >= min_px) & (area >= max(3.0, 0.5 * min_px * min_px))
    ok = big_enough & ~edge & ~thin_line
    specks = int((~big_enough).sum())
    if not ok.any():
        return Marks(0, 0.0, specks)
    return Marks(int(ok.sum()), float(long_side[ok].max() / s), specks)


def inkless_text_share(rnd: Render, spans: list[Span], level: int) -> float:
    """Share of visible characters whose span box shows no ink at all (white, clipped or
    covered text: the layer says something the page does not show)."""
    total = empty = 0
    g = rnd.gray
    for sp in spans:
        x0, y0, x1, y1 = rnd.px(sp.bbox)
        total += sp.chars
        if x1 <= x0 or y1 <= y0:
            empty += sp.chars  # outside the page
            continue
        if not (g[y0:y1, x0:x1] < level).any():
            empty += sp.chars
    return empty / total if total else 0.0


def blank_out_text(rnd: Render, spans: list[Span]) -> np.ndarray:
    """A copy of the render with the visible text spans painted white: what is left in a
    picture is what the text layer does not already say."""
    g = rnd.gray.copy()
    for sp in spans:
        x0, y0, x1, y1 = rnd.px(sp.bbox, pad=1)
        if x1 > x0 and y1 > y0:
            g[y0:y1, x0:x1] = 255
    return g


@dataclass
class TextLikeness:
    components: int  # letter-sized dark blobs
    aligned: int  # of those, blobs with a row neighbour of similar height
    ink: float  # share of the region that thresholds as dark
    _rows: tuple | None = None  # (nb, has_nb, heights, x0, x1, cy, min_line_blobs): lines are found on demand
    _lines: list | None = None

    @property
    def line_boxes(self) -> list[tuple[float, float, float, float, int]]:
        """Rows of text, (x0, y0, x1, y1, blobs) in pixels of the region: chains of at least
        `min_line_blobs` similar-height blobs (found once, when asked)."""
        if self._lines is None:
            self._lines = _find_lines(*self._rows) if self._rows is not None else []
        return self._lines

    @property
    def lines(self) -> int:
        return len(self.line_boxes)

    @property
    def aligned_share(self) -> float:
        return self.aligned / self.components if self.components else 0.0


def text_likeness(
    gray: np.ndarray, scale: float, min_h_pt: float, max_h_pt: float, min_line_blobs: int = 5
) -> TextLikeness:
    """Letter-like components of a picture region, how many of them sit in text rows, and how
    many whole lines of text they make.

    Adaptive thresholding keeps dark strokes relative to their surroundings (so a grey scan
    background or a coloured slide still shows its letters) and leaves smooth areas empty.

    What counts as text-like ink, and what does not:

    - a *blob* is letter-like when it is letter-sized (`min_h_pt`..`max_h_pt` tall), not a long
      bar (width <= 12 heights: a word that merged at low resolution still passes, a rule or
      an axis does not), and neither a hairline outline nor a solid block (fill 10-95%);
    - a blob is *aligned* when a neighbour of similar height (within 2x) sits on the same row
      (centres within 35% of the height) less than 2.5 heights away: letters and words;
    - a *line* is a chain of at least `min_line_blobs` aligned blobs whose heights mostly (70%)
      stay within 0.6-1.6x the chain's median and which runs at least 4 heights wide.

    A stamp or a logo is one blob, or one short word (a few blobs: no line, or at most one or
    two); a photo is texture (blobs of every height, fill and spacing, few chains, and much ink,
    which `max_component_ink_share` rejects); line art is long thin strokes (rejected as bars)
    and sparse labels. Several lines of similar-height blobs is what printed or typed text
    looks like, whatever the density of the page around it.
    """
    h, w = gray.shape
    if h < 8 or w < 8:
        return TextLikeness(0, 0, 0.0)
    block = max(3, int(round(12 * scale / 2)) * 2 + 1)  # ~12 pt neighbourhood, odd
    binimg = cv2.adaptiveThreshold(gray, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, block, 12)
    ink = float(binimg.mean())
    n, _labels, stats, cents = cv2.connectedComponentsWithStats(binimg, connectivity=8)
    if n <= 1:
        return TextLikeness(0, 0, ink)
    st = stats[1:]
    cw, ch, area = st[:, 2], st[:, 3], st[:, 4]
    hmin, hmax = max(2.0, min_h_pt * scale), max_h_pt * scale
    fill = area / np.maximum(cw * ch, 1)
    ok = (ch >= hmin) & (ch <= hmax) & (cw <= 12 * ch) & (cw >= 1) & (fill > 0.1) & (fill < 0.95) & (area >= 3)
    idx = np.nonzero(ok)[0]
    if idx.size == 0:
        return TextLikeness(0, 0, ink)
    if idx.size > 1500:  # bound the pairwise test; a sample says as much
        idx = idx[np.linspace(0, idx.size - 1, 1500).astype(int)]
    cy = cents[1:][idx, 1]
    x0 = st[idx, 0].astype(np.float64)
    x1 = x0 + cw[idx]
    hh = ch[idx].astype(np.float64)
    nb = _row_neighbours(cy, x0, x1, hh)
    total = int(ok.sum())
    has_nb = np.bincount(nb[0], minlength=idx.size) >= 1
    aligned = int(round(has_nb.sum() * total / idx.size))  # scaled up from the sample
    return TextLikeness(total, aligned, ink, (nb, has_nb, hh, x0, x1, cy, min_line_blobs))


def _row_neighbours(cy: np.ndarray, x0: np.ndarray, x1: np.ndarray, hh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Directed pairs (i, j), i != j, of blobs that are row neighbours: centres within 35% of
    the larger height, heights within 2x (j's to i's), horizontal gap under 2.5 of the smaller
    height (letters and words of one line). Only pairs whose centres lie within 35% of the
    tallest blob's height are tested, found by sorting on the centre: the same pairs as a full
    n x n comparison at a fraction of its cost (a page of text: 1,500 blobs, ~100 per row)."""
    n = cy.size
    order = np.argsort(cy, kind="stable")
    cs = cy[order]
    reach = 0.35 * float(hh.max())
    hi = np.searchsorted(cs, cs + reach, side="right")  # first blob past each one's window
    counts = np.maximum(hi - np.arange(n) - 1, 0)
    if not counts.sum():
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    first = np.repeat(np.arange(n), counts)
    starts = np.cumsum(counts) - counts
    second = first + 1 + (np.arange(int(counts.sum())) - np.repeat(starts, counts))
    a, b = order[first], order[second]
    ha, hb = hh[a], hh[b]
    dy = np.abs(cy[a] - cy[b]) <= 0.35 * np.maximum(ha, hb)
    gap = np.maximum(x0[b] - x1[a], x0[a] - x1[b])
    both = dy & (gap <= 2.5 * np.minimum(ha, hb))
    r_ab, r_ba = ha / hb, hb / ha  # each direction as the full comparison has it
    ab = both & (r_ab <= 2.0) & (r_ab >= 0.5)
    ba = both & (r_ba <= 2.0) & (r_ba >= 0.5)
    return np.concatenate([a[ab], b[ba]]), np.concatenate([b[ab], a[ba]])


def _find_lines(
    nb: tuple[np.ndarray, np.ndarray], has_nb: np.ndarray, hh: np.ndarray, x0: np.ndarray, x1: np.ndarray,
    cy: np.ndarray, min_blobs: int,
) -> list[tuple[float, float, float, float, int]]:
    """Rows of text among the aligned blobs: connected chains of row neighbours (see
    `text_likeness`) of at least `min_blobs` blobs, of consistent height, at least 4 heights wide,
    and not mostly of one size (a dashed rule)."""
    if int(has_nb.sum()) < min_blobs:
        return []
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    keep = np.nonzero(has_nb)[0]
    # the neighbour pairs (`_row_neighbours`) as a graph over the blobs that have one
    pos = np.full(has_nb.size, -1)
    pos[keep] = np.arange(keep.size)
    src, dst = pos[nb[0]], pos[nb[1]]
    inside = (src >= 0) & (dst >= 0)  # a neighbour without one of its own is left out, as before
    src, dst = src[inside], dst[inside]
    graph = csr_matrix((np.ones(src.size, dtype=bool), (src, dst)), shape=(keep.size, keep.size))
    n, lab = connected_components(graph, directed=False)
    sizes = np.bincount(lab, minlength=n)
    lines: list[tuple[float, float, float, float, int]] = []
    for c in np.nonzero(sizes >= min_blobs)[0]:
        members = keep[lab == c]
        h = hh[members]
        med = float(np.median(h))
        if ((h >= 0.6 * med) & (h <= 1.6 * med)).mean() < 0.7:
            continue
        if x1[members].max() - x0[members].min() < 4 * med:
            continue
        sizes = np.round(x1[members] - x0[members]).astype(int) * 1000 + np.round(h).astype(int)
        if np.bincount(np.unique(sizes, return_inverse=True)[1]).max() >= 0.6 * members.size:
            continue  # most blobs of one size: a dashed or hatched rule, a dotted leader; letters vary
        yc = float(np.median(cy[members]))
        lines.append((float(x0[members].min()), yc - 0.6 * med, float(x1[members].max()), yc + 0.6 * med, int(members.size)))
    return lines


def text_line_boxes(
    gray: np.ndarray, scale: float, min_h_pt: float, max_h_pt: float, min_line_blobs: int, edge_margin_pt: float,
    origin: tuple[float, float] = (0.0, 0.0),
) -> list[tuple[float, float, float, float]]:
    """Rows of letter-like ink (`text_likeness` lines) as page-point boxes, leaving out rows that
    reach into the outer `edge_margin_pt` of the render (scanner shadows and punched edges form
    rows of blobs too). `origin`: the page point at pixel (0, 0)."""
    tl = text_likeness(gray, scale, min_h_pt, max_h_pt, min_line_blobs)
    h, w = gray.shape
    m = edge_margin_pt * scale
    out = []
    for x0, y0, x1, y1, _n in tl.line_boxes:
        if x0 <= m or y0 <= m or x1 >= w - m or y1 >= h - m:
            continue
        out.append((origin[0] + x0 / scale, origin[1] + y0 / scale, origin[0] + x1 / scale, origin[1] + y1 / scale))
    return out
