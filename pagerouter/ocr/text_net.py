"""The safety net: the OCR engine's own text detector, asked where the page shows lines of text.

Rows of letter-like blobs (`layout.ink.text_line_boxes`) miss what a learned detector sees:
white words on a dark banner, a screenshot of a paragraph with its own background, a scan
blurred until its letters run together into smudges. The detector that ships with the OCR
engine (PP-OCR det, RapidOCR's model from its wheel) was trained on exactly such pictures of
text, so it is asked, alone (no recognition, no layout), where the lines are, and its boxes are
compared with the blocks a reading produced (`unread_lines`): a detected line that no text
block covers is text the reading left out. A figure block never covers a line: text inside
a picture is content.

Where it runs (callers decide, so that a born-digital page without pictures never pays for
it): over the pictures of a text-layer page (`pictures_text_lines`, from `ocr.ink_accounting`).
An OCR page needs no second run: its reader's detector is this same model and has already
boxed every line; the lines it read but did not output (under its score cut, or inside a
region kept as a figure) are judged by `ocr.unread_lines`.

Laziness: RapidOCR is imported and the detector built on the first page that needs the net,
once per process, shared (`detector`), as the hidden-layer proof's recogniser is.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pymupdf

from ..common.geometry import BBox
from ..common.load_once import LoadOnce
from ..config.ocr import OcrConfig

_MIN_SIDE_PX = 32  # a picture smaller than this on the detector's scale holds no line to find
_MAX_SLOPE = 0.18  # tan(~10 degrees): a detected line tilted more is a diagonal watermark or art
_MAX_LINE_PT = 90.0  # a detected "line" taller than this (points) is a picture's shape, not a line of text


@dataclass
class NetLine:
    bbox: BBox  # displayed page points
    score: float


class _Detector:
    """RapidOCR's detection model alone, with the reader's session options."""

    def __init__(self, ocr: OcrConfig):
        import logging

        from rapidocr import RapidOCR

        from .onnx_sessions import use_our_options

        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        # `max`: the picture is seen at the size it was rendered, never blown up to a minimum side
        params: dict = {"Global.log_level": "warning", "Det.limit_type": "max"}
        if ocr.small_reader.threads > 0:
            params["EngineConfig.onnxruntime.intra_op_num_threads"] = ocr.small_reader.threads
        engine = RapidOCR(params=params)
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        self.det = engine._load_det_model()
        use_our_options(ocr, self.det)
        self.lock = threading.Lock()

    def boxes(self, rgb: np.ndarray, side: int) -> list[tuple[float, float, float, float, float]]:
        """(x0, y0, x1, y1, score) of every line the detector finds, in `rgb`'s pixels."""
        with self.lock:
            self.det.limit_type = "max"
            self.det.limit_side_len = side
            out = self.det(np.ascontiguousarray(rgb))
        if out.boxes is None or not len(out.boxes):
            return []
        scores = list(out.scores) if out.scores is not None else [1.0] * len(out.boxes)
        res = []
        for poly, sc in zip(out.boxes, scores):
            p = np.asarray(poly, dtype=float)
            # the top edge's slope: a line of a page's text runs across; a diagonal watermark does not
            dx, dy = p[1, 0] - p[0, 0], p[1, 1] - p[0, 1]
            if dx <= 0 or abs(dy) > _MAX_SLOPE * dx:
                continue
            res.append((float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()), float(p[:, 1].max()),
                        float(sc)))
        return res


_DET: LoadOnce[_Detector] = LoadOnce()


def detector(ocr: OcrConfig) -> _Detector:
    """The process's shared detector, built on the first page that needs the net."""
    return _DET.get(lambda: _Detector(ocr))


def lines_in_image(rgb: np.ndarray, scale: float, origin: tuple[float, float], ocr: OcrConfig,
                   min_height_pt: float) -> list[NetLine]:
    """Detected lines of an RGB render (`scale` pixels per point, its top-left at `origin` in
    displayed page points), as page boxes; lines lower than `min_height_pt` (specks, rules) are
    dropped."""
    h, w = rgb.shape[:2]
    if min(h, w) < _MIN_SIDE_PX:
        return []
    side = min(ocr.small_reader.det_limit_side_len, max(h, w))
    out = []
    for x0, y0, x1, y1, sc in detector(ocr).boxes(rgb, side):
        box = (origin[0] + x0 / scale, origin[1] + y0 / scale, origin[0] + x1 / scale, origin[1] + y1 / scale)
        if min_height_pt <= box[3] - box[1] <= _MAX_LINE_PT:
            out.append(NetLine(tuple(round(v, 2) for v in box), sc))
    return out


def render_rgb(page: pymupdf.Page, clip: BBox | None, dpi: float, max_pixels: int) -> tuple[np.ndarray, float, tuple[float, float]]:
    """An RGB render of the displayed page (or of `clip`, displayed page points) for the detector:
    (pixels, pixels per point, top-left in page points)."""
    rect = pymupdf.Rect(clip) & page.rect if clip is not None else page.rect
    zoom = dpi / 72.0
    area = max(1.0, rect.width * rect.height)
    if area * zoom * zoom > max_pixels:
        zoom = (max_pixels / area) ** 0.5
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=rect, colorspace=pymupdf.csRGB, alpha=False)
    img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
    return img, zoom, (rect.x0, rect.y0)


def pictures_text_lines(page: pymupdf.Page, pictures: list[BBox], ocr: OcrConfig, dpi: float, max_pixels: int,
                        min_height_pt: float) -> list[NetLine]:
    """Detected lines inside each picture (displayed page boxes)."""
    out: list[NetLine] = []
    for box in pictures:
        img, s, origin = render_rgb(page, box, dpi, max_pixels)
        out += lines_in_image(img, s, origin, ocr, min_height_pt)
    return out


def unread_lines(lines: list[NetLine], blocks, min_cover: float) -> list[NetLine]:
    """Detected lines that no text block covers (at least `min_cover` of the line inside text
    blocks). Figures and empty blocks cover nothing: a picture does not account for its text."""
    from .checks import _covered_rows

    boxes = [b.bbox for b in blocks if b.role != "figure" and b.text.strip()]
    cover = _covered_rows([ln.bbox for ln in lines], boxes)
    return [ln for ln, c in zip(lines, cover) if c < min_cover]
