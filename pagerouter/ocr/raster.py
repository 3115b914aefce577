"""Rasterising a page at the size an engine wants, never bigger.

Each engine states a target: a longest side in pixels (olmOCR-class VLMs are trained on
1288 px longest side) or a DPI (PaddleOCR-VL-class ~150, Tesseract 300). The zoom is computed
from the page box as displayed (after /Rotate), the way olmOCR does it, and then capped so the
image has at most `max_pixels` pixels: a 200-inch poster page must not allocate gigabytes.
"""

from __future__ import annotations

import numpy as np
import pymupdf

from ..config.ocr import RenderTargetConfig
from ..common.pagetext import MUPDF_LOCK
from ..common.stages import OcrTask


def pixmap_to_rgb(pix: pymupdf.Pixmap) -> np.ndarray:
    """An RGB uint8 array (H, W, 3) copied out of a PyMuPDF pixmap."""
    if pix.n - pix.alpha != 3:
        pix = pymupdf.Pixmap(pymupdf.csRGB, pix)
    if pix.alpha:
        pix = pymupdf.Pixmap(pix, 0)
    arr = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)
    return arr.copy()


def render_page(page: pymupdf.Page, target: RenderTargetConfig) -> tuple[np.ndarray, float]:
    """Render the page as displayed; returns (RGB uint8 image, pixels per point)."""
    rect = page.rect
    zoom = target.zoom_for(rect.width, rect.height)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    return pixmap_to_rgb(pix), zoom


def open_task_page(task: OcrTask) -> tuple[pymupdf.Document, pymupdf.Page]:
    """Open the task's own page bytes (a one-page PDF or an image file) as a PyMuPDF page."""
    try:
        if task.page_kind == "pdf":
            doc = pymupdf.open(stream=task.page_bytes, filetype="pdf")
        else:
            doc = pymupdf.open(stream=task.page_bytes)
            if not doc.is_pdf:  # images open as a document; convert so pages behave like PDF pages
                doc = pymupdf.open("pdf", doc.convert_to_pdf())
    except Exception as exc:  # noqa: BLE001 - any parse failure becomes a clear message
        raise ValueError(f"{task.source} page {task.number}: cannot open page bytes: {exc}") from None
    if doc.page_count < 1:
        raise ValueError(f"{task.source} page {task.number}: page bytes hold no page")
    return doc, doc[0]


def render_task(task: OcrTask, target: RenderTargetConfig) -> tuple[np.ndarray, float]:
    """Re-render the task's page from its bytes at `target` (no rotation correction applied)."""
    with MUPDF_LOCK:
        doc, page = open_task_page(task)
        try:
            return render_page(page, target)
        finally:
            doc.close()


def ink_share(page: pymupdf.Page, dpi: float = 18.0, threshold: int = 200) -> float:
    """Share of the page that is not background, from a tiny grey render (about 1 ms)."""
    zoom = dpi / 72.0
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY, alpha=False)
    arr = np.frombuffer(pix.samples, dtype=np.uint8)
    if arr.size == 0:
        return 0.0
    return float((arr < threshold).mean())


def ink_bbox(image: np.ndarray, level: int, margin: int, pool: int = 4) -> tuple[int, int, int, int] | None:
    """The box (x0, y0, x1, y1, image pixels) around every mark of an RGB image darker than
    `level` in any channel, grown by `margin` and clipped to the image; None when there is none.

    Cheap (~5 ms on an A4 page at 170 dpi): each `pool` x `pool` cell keeps its darkest pixel,
    and a cell counts as ink only inside a 2 x 2 block of such cells, so isolated scanner
    speckles do not stretch the box while a lone page number (several cells) does."""
    import cv2

    h, w = image.shape[:2]
    if h < 2 * pool or w < 2 * pool:
        return None
    if image.ndim == 2:
        image = image[:, :, None]
    dark = cv2.erode(np.ascontiguousarray(image), np.ones((pool, pool), np.uint8), anchor=(0, 0))
    cells = np.ascontiguousarray(dark[::pool, ::pool])
    darkest = cells[:, :, 0]
    for c in range(1, cells.shape[2]):
        darkest = cv2.min(darkest, np.ascontiguousarray(cells[:, :, c]))
    # opening by a 2 x 2 block (an erosion and a dilation of opposite anchors: no shift)
    two = np.ones((2, 2), np.uint8)
    mask = cv2.dilate(cv2.erode((darkest < level).astype(np.uint8), two, anchor=(0, 0)), two, anchor=(1, 1))
    ys, xs = np.nonzero(mask)
    if len(ys) == 0:
        return None
    return (max(0, int(xs.min()) * pool - margin), max(0, int(ys.min()) * pool - margin),
            min(w, (int(xs.max()) + 1) * pool + margin), min(h, (int(ys.max()) + 1) * pool + margin))
