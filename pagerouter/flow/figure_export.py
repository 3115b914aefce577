"""Figure images for the request option `images`: each figure block's crop as a base64 PNG
(`Block.image_png_base64`).

Text-layer pages are rendered by whoever holds the document's MuPDF work (`isolation.PageWork`:
the Converter, or the Triage replica in the served graph), at `request_options.FIGURE_DPI`; OCR
pages are cut from their OCR render, already in the `OcrTask`, by `pipeline.convert_pages`, so the
ingress never runs MuPDF. The Converter and the served graph therefore return the same images.
"""

from __future__ import annotations

import asyncio

from ..intake.inputs import SourceDocument
from ..model import Block, CheckResult, Page
from .options import FIGURE_DPI
from ..common.stages import OcrTask


def figure_blocks(page: Page) -> list[Block]:
    return [b for b in page.blocks if b.role == "figure"]


def crop_figures(page: Page, task: OcrTask) -> None:
    """Each figure block of an OCR page as a base64 PNG cut from the page's OCR render (no MuPDF
    here: the render is already in the task). Blocks are in displayed-page points; the render
    is the unrotated page, so a page turned upright by the reader is rotated first."""
    from ..ocr.regions import upright

    figures = figure_blocks(page)
    if not figures:
        return
    image = upright(task.image, page.rotation) if page.rotation else task.image
    h, w = image.shape[:2]
    for b in figures:
        x0, y0, x1, y1 = (int(round(v * task.scale)) for v in b.bbox)
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
        if x1 - x0 >= 1 and y1 - y0 >= 1:
            b.image_png_base64 = png_base64(image[y0:y1, x0:x1])


def attach_figure_pngs(page: Page, pngs: list[bytes | None]) -> None:
    """Put rendered figure PNGs (one per figure block, in block order) on the page's figure blocks."""
    import base64

    for b, png in zip(figure_blocks(page), pngs):
        if png is not None:
            b.image_png_base64 = base64.b64encode(png).decode("ascii")


def png_base64(rgb) -> str:
    import base64
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


async def figures_of_text_pages(outcomes, src: SourceDocument, pages):
    # `pages` is an isolation.PageWork, not imported here: that would close an import cycle via pipeline
    """Triage outcomes with the figures of finished (text-layer) pages rendered as PNG onto
    their blocks, where MuPDF runs for this document (`pages`); OCR pages get theirs cut from
    their render in `pipeline.convert_pages`. A render that fails flags the page instead."""
    for_render = asyncio.to_thread
    async for outcome in outcomes:
        page = outcome.page
        figures = figure_blocks(page) if outcome.task is None and page.status != "failed" else []
        if figures:
            try:
                pngs = await for_render(pages.figure_pngs, src, page.number, [tuple(b.bbox) for b in figures], FIGURE_DPI)
                attach_figure_pngs(page, pngs)
            except Exception as exc:  # noqa: BLE001 - MuPDF's errors derive from Exception only: flag, never lose
                figure_problem(page, src.name, exc)
        yield outcome


def figure_problem(page: Page, name: str, exc: BaseException) -> None:
    page.status = "flagged" if page.status == "ok" else page.status
    page.flags.append("figure_not_saved")
    page.checks.append(CheckResult(name="figure_not_saved", passed=False, reason=f"{name}: page {page.number}: {exc}"[:300]))
