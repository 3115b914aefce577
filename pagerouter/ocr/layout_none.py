"""Layout engine `ocr.layout.kind: none`: no layout model; orientation only."""

from __future__ import annotations

from ..config.ocr import OcrConfig
from ..common.stages import LayoutResult, OcrTask
from .orientation import OrientationDetector, orientation_check


class NoLayoutEngine:
    """`ocr.layout.kind: none`: no regions; the reader clusters its lines itself. Orientation
    is still detected (when enabled) because reading depends on it."""

    name = "none"
    version = "0"

    def __init__(self, cfg: OcrConfig):
        self.cfg = cfg
        self.orientation = OrientationDetector(cfg) if cfg.orientation.enabled else None

    def detect_batch(self, tasks: list[OcrTask]) -> list[LayoutResult]:
        out = []
        for t in tasks:
            res = LayoutResult(0, [], self.name)
            if self.orientation is not None and t.ink >= self.cfg.blank_ink:
                o = self.orientation.detect(t.image)
                res.rotation = o.rotation
                res.evidence = [orientation_check(o)]
            out.append(res)
        return out
