"""One text extraction per page, shared by triage and the text-layer reader.

`page.get_text("dict")` is the single most expensive call on a born-digital page; triage and
text-layer reading both need it, so the pipeline extracts it once and passes it to both.
Images are not preserved (their bytes would be copied for nothing); image placement comes
from `page.get_image_info()`, which is cheap.
"""

from __future__ import annotations

from typing import Any

import pymupdf

TEXT_FLAGS = (
    pymupdf.TEXT_PRESERVE_WHITESPACE
    | pymupdf.TEXT_PRESERVE_LIGATURES
    | pymupdf.TEXT_MEDIABOX_CLIP
    | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE
    | pymupdf.TEXT_COLLECT_VECTORS
)
"""Keep spans as the PDF has them; unknown glyphs come out as CID markers (so triage can
see a font without a Unicode map) rather than being dropped silently. Vector graphics come
along as `type 3` blocks: the text-layer reader finds table rules and drawn figures in them,
which is cheaper than a second pass over the page's drawing commands."""


def extract_textdict(page: pymupdf.Page) -> dict[str, Any]:
    """The page's text as PyMuPDF's `dict` (blocks -> lines -> spans), coordinates top-left."""
    return page.get_text("dict", flags=TEXT_FLAGS)


_LAST_IMAGES: tuple[pymupdf.Page, list] | None = None


def page_images(page: pymupdf.Page) -> list:
    """`page.get_images()`, computed once per page object: it rescans the page's resources on
    every call (tens of ms on pages with hundreds of images), and triage and the text-layer
    reader both ask."""
    global _LAST_IMAGES
    cached = _LAST_IMAGES
    if cached is not None and cached[0] is page:
        return cached[1]
    images = page.get_images()
    _LAST_IMAGES = (page, images)
    return images
