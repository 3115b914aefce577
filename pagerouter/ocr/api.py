"""Factories for the OCR engines and the in-process OCR path the pipeline calls.

    task = make_ocr_task(page, number, source, decision, text_blocks, cfg)
    ocr = LocalOcr(cfg)          # builds engines once
    reading = ocr.run(task)      # layout -> read -> checks -> escalate if flagged

Block bboxes are PDF points in the UPRIGHT page frame (after the rotation the layout stage
applied, recorded in `reading.rotation`; width/height swap for 90/270), origin top-left, y down.
"""

from __future__ import annotations


import pymupdf

from ..config.ocr import OcrConfig
from ..model import Block, TriageDecision
from ..stages import LayoutEngine, OcrTask, Reading, SmallReader
from .render import ink_share, render_page



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
            from .escalate import build_escalator

            self.escalator = build_escalator(cfg)

    @property
    def engines(self) -> list:
        return [e for e in (self.layout, self.reader, self.escalator) if e is not None]

    def calls(self):
        """The three stage calls over these engines, for `pagerouter.pipeline.ocr_flow`."""
        import asyncio

        from ..pipeline import OcrCalls

        async def layout(task):
            return await asyncio.to_thread(lambda: self.layout.detect_batch([task])[0])

        async def read(task, lay):
            return await asyncio.to_thread(lambda: self.reader.read_batch([task], [lay])[0])

        async def escalate(task, first):
            return await asyncio.to_thread(self.escalator.escalate, task, first)

        return OcrCalls(
            layout=layout,
            read=read,
            escalate=escalate if self.escalator is not None else None,
            engines={e.name: e.version for e in self.engines},
        )

    def run(self, task: OcrTask, escalation_timeout_s: float | None = None) -> Reading:
        """layout -> read -> checks -> escalate if flagged: the pipeline's own `ocr_flow`, so
        tests and benchmarks of this class exercise exactly what the CLI and server run."""
        import asyncio

        from ..config import PagerouterConfig
        from ..memory import release_free_memory
        from ..pipeline import ocr_flow

        full = PagerouterConfig(ocr=self.cfg)
        if escalation_timeout_s is not None:
            full.serve.escalation_timeout_s = escalation_timeout_s
        try:
            return asyncio.run(ocr_flow(task, self.calls(), full))
        finally:
            release_free_memory()