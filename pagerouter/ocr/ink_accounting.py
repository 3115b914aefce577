"""Ink accounting on the text-layer route: does what was read account for the page's text-like ink?

A healthy text layer can still leave text out of the page's output: a line of text that is a
picture too small for triage's picture check (an email address or a signature as an image), a
heading drawn as vector outlines, a stamp. After the layer is read, the page is rendered small
and its rows of letter-like blobs (`layout.ink.text_line_boxes`) are compared with the blocks the
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
from ..common.pagetext import page_images

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


_LOGO_MAX_SHARE = 0.05  # a picture this small (share of the page) in a page band is a logo


def account_for_ink(page: pymupdf.Page, blocks: list[Block], cfg: ChecksConfig, dpi: float,
                    max_pixels: int, band_share: float) -> CheckResult:
    """`unread_ink` of a text-layer reading: the page's rows of letters against its blocks. Rows in
    a small picture inside the top/bottom `band_share` of the page (a logo, a letterhead's
    emblem) are branding, like the running heads beside them: not asked to be read."""
    from .checks import unread_ink
    from ..layout.ink import render_gray, text_line_boxes

    rnd = render_gray(page, dpi, max_pixels)
    rows = text_line_boxes(rnd.gray, rnd.scale, cfg.unread_ink_min_letter_pt, cfg.unread_ink_max_letter_pt,
                           cfg.unread_ink_min_blobs, cfg.unread_ink_edge_margin_pt)
    logos = _logos(page, band_share)
    rows = [r for r in rows if not any(_centre_in(r, lg) for lg in logos)]
    return unread_ink(rows, blocks, cfg)


def _logos(page: pymupdf.Page, band_share: float) -> list:
    """Small pictures (any size up to `_LOGO_MAX_SHARE` of the page) inside the page bands, displayed
    page points (the paint log triage already took for this page)."""
    from ..layout.paints import IMAGE_PAINTS, paint_log, to_display

    if not page_images(page):
        return []
    w, h = page.rect.width, page.rect.height
    band = band_share * h
    rotm = page.rotation_matrix if page.rotation else None
    out = []
    for kind, box in paint_log(page):
        if kind not in IMAGE_PAINTS:
            continue
        b = to_display(page, box, rotm) if rotm is not None else tuple(box)
        if (b[3] <= band or b[1] >= h - band) and (b[2] - b[0]) * (b[3] - b[1]) <= _LOGO_MAX_SHARE * w * h:
            out.append(b)
    return out


def _centre_in(r, box) -> bool:
    cx, cy = (r[0] + r[2]) / 2, (r[1] + r[3]) / 2
    return box[0] - 1 <= cx <= box[2] + 1 and box[1] - 1 <= cy <= box[3] + 1
