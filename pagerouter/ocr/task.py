"""Creating OCR work: a page that needs OCR becomes an `OcrTask` (its render plus the page
alone as bytes, so any tier in any process can re-render it). Running the tasks is the
orchestration's job (`pagerouter.flow.pipeline.ocr_flow`), not this module's."""

from __future__ import annotations

import pymupdf

from ..config.ocr import OcrConfig
from ..model import Block, TriageDecision
from ..common.stages import OcrTask
from .raster import ink_share, render_page


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
        if decision.route == "ocr" and decision.hidden_text:
            # what triage found not shown is not drawn for OCR either (issue 34: paper-coloured
            # text over a scan cuts through the scan's letters)
            from ..layout.glyph_renders import render_without_text

            clean = render_without_text(page, [h.bbox for h in decision.hidden_text], scale)
            if clean is not None and clean.shape == image.shape:
                image = clean
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
