"""One text extraction per page, shared by triage and the text-layer reader.

`page.get_text("dict")` is the single most expensive call on a born-digital page; triage and
text-layer reading both need it, so the pipeline extracts it once and passes it to both.
Images are not preserved (their bytes would be copied for nothing); image placement comes
from `page.get_image_info()`, which is cheap.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import pymupdf

from .ligature_maps import page_ligatures, restore_dict, restore_words, restored_spots

MUPDF_LOCK = threading.RLock()
"""PyMuPDF is not thread-safe, and its warning store is process-global: every MuPDF call that
can run while another thread works (triage, renders for OCR and escalation, saving figures,
emptying the store) holds this lock, so pages never interleave and each page's warnings are
its own. The engines' inference (onnxruntime, tesseract) runs outside it."""

# MuPDF's own messages (e.g. "missing IEND chunk in png image") would otherwise go to stdout
# and corrupt Markdown/JSON written there: route them to Python logging (stderr, warnings up).
pymupdf.set_messages(pylogging=True, pylogging_name="pymupdf", pylogging_level=30)

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


_LAST_TEXTPAGE: tuple[pymupdf.Page, pymupdf.TextPage, list] | None = None


def extract_textdict(page: pymupdf.Page) -> dict[str, Any]:
    """The page's text as PyMuPDF's `dict` (blocks -> lines -> spans), coordinates top-left,
    with the ligatures a font's Unicode map gives as one letter restored (`ligature_maps`).

    The TextPage behind it is kept for this page object, so a later `words_in` (table cells)
    does not parse the page again: building a TextPage is most of an extraction's cost."""
    global _LAST_TEXTPAGE
    tp = page.get_textpage(flags=TEXT_FLAGS)
    _LAST_TEXTPAGE = (page, tp, [])
    return _textdict(page, tp)


def read_textdict(page: pymupdf.Page) -> dict[str, Any]:
    """`extract_textdict` for a page read only for evidence (a neighbour of the page being
    read): the same text, and the kept TextPage is left alone."""
    return _textdict(page, page.get_textpage(flags=TEXT_FLAGS))


def _textdict(page: pymupdf.Page, tp: pymupdf.TextPage) -> dict[str, Any]:
    table = text_ligatures(page)
    if not table:
        return tp.extractDICT()
    return restore_dict(tp.extractRAWDICT(), table)  # the characters' widths tell the ligatures


def words_in(page: pymupdf.Page, clip: tuple[float, float, float, float]) -> list[tuple]:
    """`page.get_text("words", clip=clip)` from the page's kept TextPage: words (unrotated page
    space) at least half inside `clip`, as PyMuPDF itself selects them from a given TextPage."""
    global _LAST_TEXTPAGE
    cached = _LAST_TEXTPAGE
    if cached is None or cached[0] is not page:
        # the page's dict came from elsewhere (the furniture pre-scan): one TextPage for this page
        # now, kept, rather than a whole extraction per clip
        cached = _LAST_TEXTPAGE = (page, page.get_textpage(flags=TEXT_FLAGS), [])
    if not cached[2]:
        words = cached[1].extractWORDS()
        table = text_ligatures(page)
        if table:  # the words as the page's dict reads them
            words = restore_words(words, restored_spots(cached[1].extractRAWDICT(), table))
        # the word list, then its boxes as an array: callers ask for many clips on one page
        cached[2].extend([words, np.array([w[:4] for w in words], dtype=np.float64).reshape(-1, 4)])
    words, b = cached[2]
    if not words:
        return []
    x0, y0, x1, y1 = clip
    ix = np.minimum(b[:, 2], x1) - np.maximum(b[:, 0], x0)
    iy = np.minimum(b[:, 3], y1) - np.maximum(b[:, 1], y0)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    hit = (ix > 0) & (iy > 0) & (ix * iy >= 0.5 * area)
    return [words[i] for i in np.flatnonzero(hit)]


class _LastPage:
    """A value computed once per page object, kept for the last page asked: triage and the
    text-layer reader ask about the same page one after the other."""

    def __init__(self) -> None:
        self._page: pymupdf.Page | None = None
        self._value: Any = None

    def get(self, page: pymupdf.Page, make: Callable[[], Any]) -> Any:
        if self._page is not page:
            self._value = make()  # (made before it is kept: a call that raises keeps nothing)
            self._page = page
        return self._value


_IMAGES = _LastPage()
_FONTS = _LastPage()


def page_images(page: pymupdf.Page) -> list:
    """`page.get_images()`, computed once per page object: it rescans the page's resources on
    every call (tens of ms on pages with hundreds of images), and triage and the text-layer
    reader both ask."""
    return _IMAGES.get(page, page.get_images)


def page_fonts(page: pymupdf.Page) -> list:
    """`page.get_fonts()`, computed once per page object (triage's font check and the ligature
    look-up both ask; it walks the page's resources each time)."""
    return _FONTS.get(page, page.get_fonts)


def text_ligatures(page: pymupdf.Page) -> dict:
    """The page's ligature table (`ligature_maps.page_ligatures`): what its text is read with
    ({} where MuPDF cannot list the page's fonts: the text is then read as MuPDF reads it)."""
    try:
        return page_ligatures(page, page_fonts)
    except Exception:  # noqa: BLE001 - damaged resources
        return {}
