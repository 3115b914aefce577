"""Page orientation: a cheap trial on a small render with RapidOCR's detector and its 0/180
direction classifier (both ship in the rapidocr wheel).

1. Detect text boxes on a ~1024 px image. If most of the (length-weighted) boxes are taller
   than wide, the page lies on its side: turn it 90 degrees clockwise.
2. Crop the longest lines of the (possibly turned) image and ask the direction classifier
   whether they are upside down; if most of them are, add 180 degrees.
The result is the clockwise rotation that makes the page upright, with the measurements.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import cv2
import numpy as np

from ..config.ocr import OcrConfig
from ..model import CheckResult
from .onnx_sessions import use_our_options


@dataclass
class Orientation:
    rotation: int  # clockwise degrees to apply to the image to read it upright
    scores: dict[str, float] = field(default_factory=dict)
    reason: str = ""


def _shrink(image: np.ndarray, longest: int | None) -> np.ndarray:
    h, w = image.shape[:2]
    if not longest or max(h, w) <= longest:
        return image
    f = longest / max(h, w)
    return cv2.resize(image, (max(1, int(w * f)), max(1, int(h * f))), interpolation=cv2.INTER_AREA)


class OrientationDetector:
    def __init__(self, cfg: OcrConfig):
        from rapidocr import RapidOCR

        self.cfg = cfg
        side = cfg.render_target(cfg.orientation.render_engine).longest_side_px or 1024
        # Detect at the trial render's own size (RapidOCR's default would upscale it to 736 px short side).
        self.engine = RapidOCR(params={"Global.log_level": "warning", "Global.use_rec": False,
                                       "Det.limit_type": "max", "Det.limit_side_len": side})
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        self._det = self.engine._load_det_model()
        self._cls = self.engine._load_cls_model()
        use_our_options(cfg, self._det, self._cls)  # our session options (onnx_sessions.py)

    def _ink_window(self, small: np.ndarray, f: float) -> tuple[np.ndarray, tuple[int, int]]:
        """The part of the trial image the detector needs (`orientation.crop_to_ink`: the box
        around its ink, as the small reader's detection does; the trial detects at the trial
        image's own scale, so the window is detected at that scale too) and its corner."""
        from .raster import ink_bbox

        sr = self.cfg.small_reader
        if not self.cfg.orientation.crop_to_ink:
            return small, (0, 0)
        box = ink_bbox(small, sr.det_crop_ink_level, max(1, int(round(sr.det_crop_margin_px / f))), pool=2)
        h, w = small.shape[:2]
        if (box is None or (box[2] - box[0]) * (box[3] - box[1]) > (1.0 - sr.det_crop_min_saving) * h * w
                or min(box[2] - box[0], box[3] - box[1]) < 32):  # the detector's smallest input
            return small, (0, 0)
        x0, y0, x1, y1 = box
        return np.ascontiguousarray(small[y0:y1, x0:x1]), (x0, y0)

    def detect(self, image: np.ndarray) -> Orientation:
        oc = self.cfg.orientation
        small = np.ascontiguousarray(_shrink(image, self.cfg.render_target(oc.render_engine).longest_side_px))
        f = image.shape[0] / small.shape[0]  # full-image pixels per trial pixel
        window, (ox, oy) = self._ink_window(small, f)
        det = self._det(window)
        polys = [] if det.boxes is None else list(det.boxes)
        boxes = []
        for p in polys:
            p = np.asarray(p)
            x0, y0, x1, y1 = p[:, 0].min() + ox, p[:, 1].min() + oy, p[:, 0].max() + ox, p[:, 1].max() + oy
            if max(x1 - x0, y1 - y0) >= 8:
                boxes.append((x0 * f, y0 * f, x1 * f, y1 * f))
        if len(boxes) < oc.min_boxes:
            return Orientation(0, {"boxes": float(len(boxes))}, f"{len(boxes)} text boxes < min_boxes {oc.min_boxes}: kept as is")
        lengths = np.array([max(b[2] - b[0], b[3] - b[1]) for b in boxes], dtype=float)
        tall = np.array([(b[3] - b[1]) > (b[2] - b[0]) for b in boxes])
        vertical = float((lengths * tall).sum() / lengths.sum())
        base = 90 if vertical >= oc.vertical_share else 0
        img = image
        if base:
            h = image.shape[0]
            img = np.rot90(image, k=-1)  # clockwise: (x, y) -> (h - y, x)
            boxes = [(h - b[3], b[0], h - b[1], b[2]) for b in boxes]
        # The classifier gets line crops from the full-resolution image: on the small trial
        # image lines are too few pixels high for a steady 0/180 call.
        longest = sorted(boxes, key=lambda b: -(b[2] - b[0]))[: oc.max_crops]
        crops = []
        for b in longest:
            line = img[int(b[1]):int(b[3]) + 1, int(b[0]):int(b[2]) + 1]
            h, w = line.shape[:2]
            if h < 4 or w < 4:
                continue
            # The classifier's input is 48x192: a long line would be squashed sideways, so it
            # gets up to three pieces of that aspect instead.
            step = 4 * h
            for x in range(0, max(1, w - step // 2), step)[:3]:
                crops.append(np.ascontiguousarray(line[:, x:x + step]))
        flipped = 0.0
        if crops:
            res = self._cls(crops).cls_res or []
            weights = np.array([c.shape[1] for c in crops], dtype=float)
            votes = np.array([s if "180" in lab else -s for lab, s in res], dtype=float)
            flipped = float((weights * (votes > 0) * np.abs(votes)).sum() / max(1e-6, (weights * np.abs(votes)).sum()))
        rotation = (base + (180 if flipped >= oc.flip_share else 0)) % 360
        scores = {"boxes": float(len(boxes)), "vertical_share": vertical, "upside_down_share": flipped}
        reason = (
            f"{vertical:.2f} of text length in tall boxes (turn 90 at >= {oc.vertical_share}); "
            f"{flipped:.2f} of lines classified upside down (turn 180 at >= {oc.flip_share}): rotate {rotation}"
        )
        return Orientation(rotation, scores, reason)


def orientation_check(o: Orientation) -> CheckResult:
    """The orientation trial as evidence on the page (passes: it records, it does not flag)."""
    return CheckResult(name="orientation", passed=True, score=float(o.rotation), reason=o.reason)
