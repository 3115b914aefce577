"""Is each span of the text layer visible on the page?

A text layer can hold text the page does not show: keyword spam in white on white paper, a
line in the colour of the box it sits on, a sentence under a black box (a redaction drawn but
never applied), a whiteout, text in the paper's colour laid over a scan that shows other words.
Render mode 3 is only the honest way to hide text; these are the others. Such text must never
come out as the page's content.

Two steps, cheapest first:

1. **Suspects, from the text dict alone** (no MuPDF call: the dict already carries the page's
   filled vector shapes in paint order, `TEXT_COLLECT_VECTORS`): a span with a later opaque
   filled shape over it, a span whose colour is close to the colour of the shape or paper under
   it, a nearly transparent span, a span over a sizeable picture (what is under it is unknown).
   A page with dark text on white paper and no boxes has no suspects and stops here.
2. **Proof, from three renders of the suspects' area** (MuPDF, ~10 ms): the page as it is, the
   page with the suspect glyphs culled (MuPDF's culling device), and the suspect glyphs alone in
   black (their pixels). A span is visible when enough of its glyph pixels change the page; a
   covered, same-coloured or fully clipped span changes nothing. Multiply-blended highlights,
   translucent boxes and white text on a dark banner keep their text: the renders show it.

A span partly shown (a box over its last words) is cut at word boundaries (MuPDF's own word
boxes). Hidden spans and hidden parts are marked invisible in the shared text dict (`alpha` 0,
as MuPDF marks render mode 3), so everything downstream treats them as it treats an invisible
OCR layer: triage proves or OCRs a page that is mostly such text, and the text-layer reader
never reads it. Each hidden piece is kept, with its reason, for the page's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pymupdf

from ..common.geometry import BBox
from ..layout.glyph_renders import cull_boxes as _cull_boxes
from ..layout.glyph_renders import render_clip as _render

_MIN_SHAPE_PT2 = 12.0  # a filled shape smaller than this (a bullet, a rule) hides no text
_COVER_SHARE = 0.05  # a later shape over this share of a span's box (and most of its height) makes it a suspect
_TRANSPARENT_ALPHA = 26  # span opacity (of 255) below which text is a suspect
_CHANGE_LEVEL = 24  # a pixel the glyphs change by more than this (any channel) shows them
_MAX_RENDER_PX = 1_500_000
_FILLED_FLAG, _CLIPPED_FLAG = 16, 64  # MuPDF char_flags: the glyph is filled / lies outside the clip
_CLIP_WHY = "invisible in the text layer (render mode 3, or a clip)"


@dataclass
class HiddenText:
    """A span (or part of one) in the text layer that the page does not show."""

    bbox: BBox  # unrotated page space, as in the text dict
    text: str
    why: str

    @property
    def chars(self) -> int:
        return len("".join(self.text.split()))


@dataclass
class _Span:
    span: dict
    line: dict  # the dict line holding it (a partly shown span is split there)
    bbox: BBox
    why: str  # what made it a suspect


def _rgb(c: int) -> tuple[int, int, int]:
    return (c >> 16) & 255, (c >> 8) & 255, c & 255


@lru_cache(maxsize=4096)  # a page has a few colours and thousands of spans
def _contrast(a: int, b: int) -> int:
    return max(abs(x - y) for x, y in zip(_rgb(a), _rgb(b)))


def _suspects(textdict: dict, pictures: list[BBox], min_contrast: int) -> list[_Span]:
    """Spans that may not show, from the dict alone (see the module doc, step 1)."""
    fills: list[tuple[int, float, float, float, float, int]] = []
    spans: list[tuple[int, dict, dict]] = []
    clips: list[_Span] = []
    for nb, block in enumerate(textdict.get("blocks", ())):
        kind = block.get("type", 0)
        if kind == 3:
            if block.get("stroked") or block.get("alpha", 255) < 230:
                continue  # outlines and translucent fills hide nothing
            x0, y0, x1, y1 = block["bbox"]
            if (x1 - x0) * (y1 - y0) >= _MIN_SHAPE_PT2 and min(x1 - x0, y1 - y0) >= 2.0:
                fills.append((nb, x0, y0, x1, y1, block.get("color", 0)))
        elif kind == 0:
            for line in block.get("lines", ()):
                for sp in line.get("spans", ()):
                    if not sp.get("text", "").strip():
                        continue
                    if sp.get("alpha", 255):
                        spans.append((nb, sp, line))
                    elif not pictures or not any(p[0] <= (sp["bbox"][0] + sp["bbox"][2]) / 2 <= p[2]
                                                 and p[1] <= (sp["bbox"][1] + sp["bbox"][3]) / 2 <= p[3]
                                                 for p in pictures):
                        # MuPDF reports text that only clips (render mode 7: the clip filled by what
                        # follows, a headline filled with colour or a picture) as it reports render
                        # mode 3; away from any picture (where OCR layers lie) its pixels decide
                        clips.append(_Span(sp, line, tuple(sp["bbox"]), _CLIP_WHY))
    if clips and spans:
        # invisible text over visible text (a duplicate layer, an OCR layer over a born-digital
        # page) is not judged by pixels: culling its box culls the visible text under it too
        vb = np.array([sp["bbox"] for _, sp, _ in spans], dtype=np.float64).reshape(-1, 4)
        keep = []
        for c in clips:
            b = c.bbox
            ix = np.clip(np.minimum(vb[:, 2], b[2]) - np.maximum(vb[:, 0], b[0]), 0, None)
            iy = np.clip(np.minimum(vb[:, 3], b[3]) - np.maximum(vb[:, 1], b[1]), 0, None)
            if not ((ix * iy) > 0.1 * max(1e-6, (b[2] - b[0]) * (b[3] - b[1]))).any():
                keep.append(c)
        clips = keep
    if not spans:
        return clips
    out: list[_Span] = []
    sb = np.array([sp["bbox"] for _, sp, _ in spans], dtype=np.float64).reshape(-1, 4)
    sn = np.array([nb for nb, _, _ in spans])
    if fills:
        fa = np.array(fills, dtype=np.float64)
        fn = fa[:, 0]
        ix = np.clip(np.minimum(sb[:, None, 2], fa[None, :, 3]) - np.maximum(sb[:, None, 0], fa[None, :, 1]), 0, None)
        iy = np.clip(np.minimum(sb[:, None, 3], fa[None, :, 4]) - np.maximum(sb[:, None, 1], fa[None, :, 2]), 0, None)
        area = np.maximum((sb[:, 2] - sb[:, 0]) * (sb[:, 3] - sb[:, 1]), 1e-6)
        over = ix * iy / area[:, None]
        tall = iy >= 0.5 * (sb[:, 3] - sb[:, 1])[:, None]  # an underline or a rule under the text hides nothing
        later = fn[None, :] > sn[:, None]
        covered = ((over >= _COVER_SHARE) & tall & later).any(axis=1)
        cx, cy = (sb[:, 0] + sb[:, 2]) / 2, (sb[:, 1] + sb[:, 3]) / 2
        inside = (fa[None, :, 1] <= cx[:, None]) & (cx[:, None] <= fa[None, :, 3]) & \
                 (fa[None, :, 2] <= cy[:, None]) & (cy[:, None] <= fa[None, :, 4]) & ~later
        under = np.where(inside.any(axis=1), np.argmax(np.where(inside, fn[None, :], -1), axis=1), -1)
    else:
        covered = np.zeros(len(spans), dtype=bool)
        under = np.full(len(spans), -1)
    for i, (_nb, sp, line) in enumerate(spans):
        box = tuple(sp["bbox"])
        colour = sp.get("color", 0)
        if covered[i]:
            out.append(_Span(sp, line, box, "a shape painted over it later"))
        elif sp.get("alpha", 255) < _TRANSPARENT_ALPHA:
            out.append(_Span(sp, line, box, f"nearly transparent (opacity {sp.get('alpha', 255) / 255:.0%})"))
        elif under[i] >= 0 and _contrast(colour, int(fills[under[i]][5])) < min_contrast:
            out.append(_Span(sp, line, box, "the colour of the shape under it"))
        elif under[i] < 0 and _contrast(colour, 0xFFFFFF) < min_contrast:
            out.append(_Span(sp, line, box, "the colour of the paper"))
        elif pictures and any(p[0] <= (box[0] + box[2]) / 2 <= p[2] and p[1] <= (box[1] + box[3]) / 2 <= p[3]
                              for p in pictures):
            out.append(_Span(sp, line, box, "over a picture"))
    return out + clips


def _shown_share(box: BBox, shown: np.ndarray, mask: np.ndarray, origin: tuple[int, int], zoom: float) -> tuple[float, int]:
    """(share of the glyph pixels inside `box` that change the page, glyph pixels there)."""
    x0, y0 = int(box[0] * zoom) - origin[0], int(box[1] * zoom) - origin[1]
    x1, y1 = int(np.ceil(box[2] * zoom)) - origin[0], int(np.ceil(box[3] * zoom)) - origin[1]
    x0, y0 = max(0, x0), max(0, y0)
    g = mask[y0:y1, x0:x1]
    n = int(g.sum())
    if not n:
        return 0.0, 0
    return float(shown[y0:y1, x0:x1][g].mean()), n


def _against_background(sus: list[_Span], shown: np.ndarray, full: np.ndarray, culled: np.ndarray,
                        origin: tuple[int, int], zoom: float, min_contrast: int) -> None:
    """A suspect's glyph pixel that changes the page shows only if it also stands out from the
    background around it (the median of the page without the suspects' glyphs in the span's box:
    paper, a scan's paper, the fill of a banner). White text laid on a scan's own black
    letters changes those letters' pixels, yet what a reader sees there is paper: the layer's
    words are not on the page, the scan's are. White text on a dark banner stands out and shows."""
    for s in sus:
        x0, y0 = max(0, int(s.bbox[0] * zoom) - origin[0]), max(0, int(s.bbox[1] * zoom) - origin[1])
        x1, y1 = int(np.ceil(s.bbox[2] * zoom)) - origin[0], int(np.ceil(s.bbox[3] * zoom)) - origin[1]
        if x1 <= x0 or y1 <= y0:
            continue
        under = culled[y0:y1, x0:x1].astype(np.int16)
        if not under.size:
            continue
        bg = np.median(under.reshape(-1, under.shape[2]), axis=0)
        if max(abs(int(c) - int(b)) for c, b in zip(_rgb(s.span.get("color", 0)), bg)) < min_contrast:
            # glyphs in the background's own colour: where they change pixels they paint paper over
            # whatever was under them (a scan's letters), and what shows is paper, not these words
            shown[y0:y1, x0:x1] = False
            continue
        stands_out = np.abs(full[y0:y1, x0:x1].astype(np.int16) - bg[None, None, :]).max(axis=2) > _CHANGE_LEVEL
        shown[y0:y1, x0:x1] &= stands_out


def hidden_text(page: pymupdf.Page, textdict: dict, pictures: list[BBox], *, min_contrast: int = 40,
                min_shown_share: float = 0.3) -> list[HiddenText]:
    """The spans (and parts of spans) the page does not show; marks them invisible in `textdict`.

    `pictures`: sizeable pictures (unrotated page space): what lies under a span there is not
    known from the dict, so such spans are checked on the render."""
    sus = _suspects(textdict, pictures, min_contrast)
    if not sus:
        return []
    x0 = min(s.bbox[0] for s in sus)
    y0 = min(s.bbox[1] for s in sus)
    x1 = max(s.bbox[2] for s in sus)
    y1 = max(s.bbox[3] for s in sus)
    unrotated = pymupdf.Rect(0, 0, page.cropbox.width, page.cropbox.height)
    clip = pymupdf.Rect(x0 - 2, y0 - 2, x1 + 2, y1 + 2) & unrotated
    if clip.is_empty:
        return []
    h = float(np.median([s.bbox[3] - s.bbox[1] for s in sus]))
    zoom = min(3.0, max(1.0, 12.0 / max(h, 1.0)))
    zoom = min(zoom, (_MAX_RENDER_PX / max(1.0, clip.width * clip.height)) ** 0.5)
    rotation = page.rotation
    if rotation:  # the dict is in the unrotated page: render it unrotated too
        page.set_rotation(0)
    try:
        full = _render(page, tuple(clip), zoom)
        culled = _render(page, tuple(clip), zoom, cull=_cull_boxes([s.bbox for s in sus], tuple(clip)))
        mask = _render(page, tuple(clip), zoom, glyphs=True)[:, :, 0] < 128
    finally:
        if rotation:
            page.set_rotation(rotation)
    shown = (np.abs(full.astype(np.int16) - culled.astype(np.int16)).max(axis=2) > _CHANGE_LEVEL)
    origin = (int(np.floor(clip.x0 * zoom)), int(np.floor(clip.y0 * zoom)))
    _against_background(sus, shown, full, culled, origin, zoom, min_contrast)
    out: list[HiddenText] = []
    for s in sus:
        share, n = _shown_share(s.bbox, shown, mask, origin, zoom)
        if s.why == _CLIP_WHY:
            if n and share >= min_shown_share:
                # a clip the page fills: the headline shows, it is text to read; marked filled in the
                # shared dict too (char_flags: the text-layer reader skips unfilled clip text)
                s.span["alpha"] = 255
                if s.span.get("char_flags") is not None:  # (MuPDF also calls clip text "clipped away")
                    s.span["char_flags"] = (s.span["char_flags"] | _FILLED_FLAG) & ~_CLIPPED_FLAG
            continue  # render mode 3 stays what it is (an OCR layer, proven or OCR'd by triage)
        if n and share >= 0.85:
            continue  # shown in full
        if n and share >= min_shown_share:
            cut = _hide_words(page, s, shown, mask, origin, zoom, min_shown_share)
            if cut is not None:
                out += cut
                continue
        why = (f"not visible on the page ({s.why}; {share:.0%} of its glyph pixels show)" if n
               else f"not visible on the page ({s.why}; its glyphs draw nothing there)")
        out.append(HiddenText(s.bbox, s.span["text"], why))
        s.span["alpha"] = 0
    return out


def _hide_words(page, s: _Span, shown, mask, origin, zoom, min_share: float) -> list[HiddenText] | None:
    """A span partly shown: its words that do not show are cut off into an invisible span. [] when
    every word shows (the span stays as it is), None when none does (the span is hidden whole)."""
    from ..common.pagetext import words_in

    words = [w for w in words_in(page, s.bbox) if w[4].strip()]
    if len(words) < 2:
        return []
    keep, gone = [], []
    for w in sorted(words, key=lambda w: w[0]):
        share, n = _shown_share(w[:4], shown, mask, origin, zoom)
        (keep if n and share >= min_share else gone).append(w)
    if not gone:
        return []
    if not keep:
        return None
    span = s.span
    vis = " ".join(w[4] for w in keep)
    hid = " ".join(w[4] for w in gone)
    hidden = dict(span, text=hid, alpha=0, bbox=(min(w[0] for w in gone), span["bbox"][1], max(w[2] for w in gone),
                                                 span["bbox"][3]))
    span["text"] = vis
    span["bbox"] = (min(w[0] for w in keep), span["bbox"][1], max(w[2] for w in keep), span["bbox"][3])
    spans = s.line["spans"]
    spans.insert(next(i for i, sp in enumerate(spans) if sp is span) + 1, hidden)
    return [HiddenText(hidden["bbox"], hid, f"not visible on the page ({s.why} covers these words)")]
