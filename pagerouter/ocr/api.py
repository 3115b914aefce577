"""Factories for the OCR engines and the in-process OCR path the pipeline calls.

    task = make_ocr_task(page, number, source, decision, text_blocks, cfg)
    ocr = LocalOcr(cfg)          # builds engines once
    reading = ocr.run(task)      # layout -> read -> checks -> escalate if flagged

Block bboxes are PDF points in the UPRIGHT page frame (after the rotation the layout stage
applied, recorded in `reading.rotation`; width/height swap for 90/270), origin top-left, y down.
"""

from __future__ import annotations

import logging
import time

import pymupdf

from ..config.ocr import OcrConfig
from ..model import Block, TriageDecision
from ..stages import LayoutEngine, OcrTask, Reading, SmallReader
from .render import ink_share, render_page

log = logging.getLogger(__name__)


def build_layout_engine(cfg: OcrConfig) -> LayoutEngine:
    if cfg.layout.kind == "rapid_layout":
        from .layout_rapid import RapidLayoutEngine

        return RapidLayoutEngine(cfg)
    if cfg.layout.kind == "none":
        from .layout_rapid import NoLayoutEngine

        return NoLayoutEngine(cfg)
    raise ValueError(f"ocr.layout.kind {cfg.layout.kind!r} is not a known layout engine")


def build_small_reader(cfg: OcrConfig) -> SmallReader:
    if cfg.small_reader.kind == "rapidocr":
        from .reader_rapidocr import RapidOcrReader

        return RapidOcrReader(cfg)
    raise ValueError(f"ocr.small_reader.kind {cfg.small_reader.kind!r} is not a known small reader")


def single_page_pdf(page: pymupdf.Page) -> bytes:
    """The page alone as a PDF (so any tier, in any process, can re-render it)."""
    out = pymupdf.open()
    out.insert_pdf(page.parent, from_page=page.number, to_page=page.number)
    try:
        # No deflate: re-compressing a scan's image stream costs ~0.5 s CPU per page, more
        # than the bytes saved are worth on the way to another process.
        return out.tobytes(garbage=1)
    finally:
        out.close()


def make_ocr_task(
    page: pymupdf.Page, number: int, source: str, decision: TriageDecision, text_blocks: list[Block], cfg: OcrConfig
) -> OcrTask:
    """Render the page at the small reader's target and package it for the OCR stages."""
    try:
        image, scale = render_page(page, cfg.render_target(cfg.small_reader.render_engine))
        if page.parent.is_pdf:
            page_bytes = single_page_pdf(page)
        else:  # an image (or XPS/EPUB...) document: its page converted to a one-page PDF
            page_bytes = page.parent.convert_to_pdf(page.number, page.number)
        ink = ink_share(page)
    except Exception as exc:  # noqa: BLE001 - name file and page, never a bare traceback
        raise ValueError(f"{source} page {number}: cannot render for OCR: {exc}") from None
    return OcrTask(
        source=source, number=number, width=page.rect.width, height=page.rect.height, decision=decision,
        image=image, scale=scale, page_bytes=page_bytes, page_kind="pdf", text_blocks=list(text_blocks), ink=ink,
    )


class LocalOcr:
    """The OCR path in one process: engines built once, `run` per task."""

    def __init__(self, cfg: OcrConfig):
        self.cfg = cfg
        self.layout = build_layout_engine(cfg)
        self.reader = build_small_reader(cfg)
        self.escalator = None
        if cfg.escalation.enabled:
            try:
                from .escalate import build_escalator  # built by the checks/escalation helper

                self.escalator = build_escalator(cfg)
            except ImportError as exc:
                log.warning("no escalator available (%s): flagged pages stay flagged", exc)
    def run(self, task: OcrTask) -> Reading:
        """layout -> read -> checks (appended to the reader's evidence) -> escalate if flagged."""
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        layout = self.layout.detect_batch([task])[0]
        timings["layout"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        reading = self.reader.read_batch([task], [layout])[0]
        timings["read"] = time.perf_counter() - t1
        try:
            from .checks import check_reading
        except ImportError:
            check_reading = None
        if check_reading is not None:
            t1 = time.perf_counter()
            reading.checks.extend(check_reading(task, reading, self.cfg.checks))
            timings["checks"] = time.perf_counter() - t1
        if reading.flagged and self.escalator is not None:
            t1 = time.perf_counter()
            escalated = self.escalator.escalate(task, reading)
            escalated.rotation = escalated.rotation or reading.rotation
            timings["escalation"] = time.perf_counter() - t1
            reading = escalated
        reading.timings.update(timings)
        return reading
