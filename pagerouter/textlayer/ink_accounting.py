"""Ink accounting on the text-layer route: does what was read account for the page's text-like ink?

A healthy text layer can still leave text out of the page's output: a line of text that is a
picture too small for triage's picture check (an email address or a signature as an image), a
heading drawn as vector outlines, a stamp. After the layer is read, the page is rendered small
and its rows of letter-like blobs (`triage.ink.text_line_boxes`) are compared with the blocks the
reading produced (`ocr.checks.unread_ink`, the same test the OCR route runs). Rows no block
covers are the page's unread text: the pipeline reads them by OCR (the page becomes `mixed`,
one region per row) or, where OCR is off, flags the page with their boxes.

Cost: only pages that can hold ink the layer does not explain are rendered: pages that place a
raster image, or that draw many filled non-rectangular shapes (outlined glyphs). A page of text,
rules and table shading has no such ink and is not rendered (the cheap path stays cheap).
"""

from __future__ import annotations

import pymupdf

from ..config.checks import ChecksConfig
from ..model import Block, CheckResult
from ..pagetext import page_images

_OUTLINE_SHAPES = 20  # filled non-rectangular shapes from which a page may hold outlined text


def may_hold_unread_ink(page: pymupdf.Page, textdict: dict) -> bool:
    """Whether the page paints anything but text, rules and boxes (see the module doc)."""
    if page_images(page):
        return True
    shapes = 0
    for b in textdict.get("blocks", ()):
        if b.get("type") == 3 and not b.get("stroked") and not b.get("isrect"):
            shapes += 1
            if shapes >= _OUTLINE_SHAPES:
                return True
    return False


def account_for_ink(page: pymupdf.Page, blocks: list[Block], cfg: ChecksConfig, dpi: float,
                    max_pixels: int) -> CheckResult:
    """`unread_ink` of a text-layer reading: the page's rows of letters against its blocks."""
    from ..ocr.checks import unread_ink
    from ..triage.ink import render_gray, text_line_boxes

    rnd = render_gray(page, dpi, max_pixels)
    rows = text_line_boxes(rnd.gray, rnd.scale, cfg.unread_ink_min_letter_pt, cfg.unread_ink_max_letter_pt,
                           cfg.unread_ink_min_blobs, cfg.unread_ink_edge_margin_pt)
    return unread_ink(rows, blocks, cfg)
