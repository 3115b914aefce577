"""Ink accounting on the text-layer route: does what was read account for the page's text-like ink?

A healthy text layer can still leave text out of the page's output: a line of text that is a
picture too small for triage's picture check (an email address or a signature as an image), a
heading drawn as vector outlines, a stamp. After the layer is read, the page is rendered small
and its rows of letter-like blobs (`layout.ink.text_line_boxes`) are compared with the blocks the
reading produced (`ocr.checks.unread_ink`, the same test the OCR route runs). Rows no block
covers are the page's unread text: the pipeline reads them by OCR (the page becomes `mixed`,
one region per row) or, where OCR is off, flags the page with their boxes.

Pictures get a second, learned witness (`ocr.text_net`): the OCR engine's own text detector
runs over each sizeable picture and each picture shaped as one line of text (`net_pictures`),
and every line it finds that no text block covers is unread text too, whatever picture holds
it. A figure box never accounts for the text inside it: white
words on a dark banner, a screenshot of a paragraph with its own grey background are rows the
blob test cannot see, and a screenshot is content, not an empty placeholder.

Cost: only pages that can hold ink the layer does not explain are rendered: pages that place a
raster image, or that draw many filled non-rectangular shapes (outlined glyphs). A page of text,
rules and table shading has no such ink and is not rendered (the cheap path stays cheap); the
detector runs only on pages with such pictures, over the pictures alone.
"""

from __future__ import annotations

import pymupdf

from ..config.checks import ChecksConfig
from ..config.ocr import OcrConfig
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


_NET_DPI = 110.0  # the detector's render of a picture: body text 10-15 px high, as it was trained on
# Besides triage's sizeable pictures (`triage.min_image_area_share`, `min_image_side_pt`), the
# detector looks into a horizontal strip that can hold one line: a sentence or an address set as
# a picture is 15-40 pt high and many times as wide, and its figure box accounted for its words.
# Narrow pictures of other shapes (a binder's rings down a slide's edge, icons) stay out: the
# detector finds "lines" in such patterns, and the OCR that follows reads nothing there.
_STRIP_MIN_HEIGHT_PT = 8.0  # a line of text, with its picture's margin
_STRIP_MIN_ASPECT = 4.0  # width over height: a few words at least
_NET_MAX_COVER = 0.1  # a detected line this much inside text blocks is read, or a watermark over them
_NET_MIN_LINE_PT = 4.0  # a detected "line" lower than this is a speck or a rule


def account_for_ink(page: pymupdf.Page, blocks: list[Block], cfg: ChecksConfig, dpi: float,
                    max_pixels: int, band_share: float, ocr: OcrConfig | None = None,
                    pictures: list | None = None) -> CheckResult:
    """`unread_ink` of a text-layer reading: the page's rows of letters against its blocks. Rows in
    a small picture inside the top/bottom `band_share` of the page (a logo, a letterhead's
    emblem) are branding, like the running heads beside them: not asked to be read.

    With `ocr` (its reader's detector) and the page's `pictures` (`net_pictures`, displayed page boxes),
    the detector's lines in those pictures that no text block covers are added (see the module
    doc); a detector that cannot load is said in the reason, and the blob rows decide alone."""
    from .checks import unread_ink
    from ..layout.ink import render_gray, text_line_boxes

    rnd = render_gray(page, dpi, max_pixels)
    rows = text_line_boxes(rnd.gray, rnd.scale, cfg.unread_ink_min_letter_pt, cfg.unread_ink_max_letter_pt,
                           cfg.unread_ink_min_blobs, cfg.unread_ink_edge_margin_pt)
    logos = _logos(page, band_share)
    rows = [r for r in rows if not any(_centre_in(r, lg) for lg in logos)]
    check = unread_ink(rows, blocks, cfg)
    if not ocr or not pictures:
        return check
    from .text_net import pictures_text_lines, unread_lines

    try:
        found = pictures_text_lines(page, pictures, ocr, _NET_DPI, max_pixels, _NET_MIN_LINE_PT)
    except Exception as exc:  # noqa: BLE001 - the net is a second witness: the blob rows still decide
        return check.model_copy(update={"reason": f"{check.reason}; the text detector could not run over the "
                                        f"pictures ({type(exc).__name__}: {exc})"[:300]})
    found = [ln for ln in found if not any(_centre_in(ln.bbox, lg) for lg in logos)]
    # a detected line counts as unread only where no text block reaches into it: a translucent
    # watermark's big letters cross the text lines they lie over (the layer's text shows through
    # them, so blocks cover part of every such line); a banner or a screenshot stands clear
    missed = [ln.bbox for ln in unread_lines(found, blocks, _NET_MAX_COVER)
              if not any(_centre_in(ln.bbox, r) for r in check.regions)]
    if not missed:
        return check.model_copy(update={"reason": f"{check.reason}; the text detector found {len(found)} line(s) in "
                                        f"{len(pictures)} picture(s), all in blocks of the reading"})
    regions = [*check.regions, *(tuple(round(v, 1) for v in b) for b in missed)][:50]
    n = int(check.score or 0) + len(missed)
    return check.model_copy(update={
        "passed": False, "score": float(n), "regions": regions,
        "reason": (f"{check.reason if not check.passed else 'the rows of letter-like ink lie in blocks of the reading'}; "
                   f"the text detector found {len(missed)} line(s) of text inside {len(pictures)} picture(s) that no "
                   "text block covers (a picture does not account for the text it shows)"),
    })


def net_pictures(page: pymupdf.Page, min_area_share: float, min_side_pt: float) -> list:
    """The pictures the text detector reads for `account_for_ink`, displayed page boxes: the
    sizeable ones (triage's thresholds) and horizontal strips of one line (see `_STRIP_MIN_*`)."""
    from ..layout.paints import pictures

    out = []
    for p in pictures(page, 0.0, _STRIP_MIN_HEIGHT_PT)[0]:
        w, h = p.bbox[2] - p.bbox[0], p.bbox[3] - p.bbox[1]
        if (p.area_share >= min_area_share and min(w, h) >= min_side_pt) or w >= _STRIP_MIN_ASPECT * h:
            out.append(p.bbox)
    return out


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
