"""Ink a word reader read around but left out: Tesseract's silent drops.

Tesseract keeps no record of what it would not read: a smudged, faint or blurred stretch of a
line is not in its output at all (no word, no confidence: its TSV holds no row for it), while
the words on either side are read. The line's box, and the block built from it, then span the
stretch, so ink accounting by blocks counts those words as read (`unread_ink` passes) and the
page says `ok` with words missing from the middle of a line.

This looks where the words of one line leave a gap much wider than a word space and asks the
image whether that gap holds ink: a few percent of its pixels darker than the paper around the
line, after a median filter that takes out scan noise. Such a gap is a stretch of the line the
reader dropped; it goes into the reading's `below_cut` lines as a `dropped` line (no text,
score 0), and the `unread_lines` net (`unread_lines.py`) flags the page with its box unless a
later reading covers it. Nothing is guessed into the text.
"""

from __future__ import annotations

import numpy as np

from .lines import OcrLine

DROPPED = "dropped"  # `OcrLine.extra` key of such a stretch

_MIN_GAP_HEIGHTS = 2.0  # a gap between two words wider than this many word heights may hold words
_MEDIAN_PX = 5  # median filter size (px) against scan noise before ink is counted
_INK_DELTA = 24  # a pixel this much darker than the line's paper is ink
_MIN_INK_SHARE = 0.04  # ...and a gap with this share of ink pixels holds print
_MIN_INK_HEIGHT = 0.5  # ...spread over this share of a word's height at least (not leaders, not a rule)


def _gray(image: np.ndarray) -> np.ndarray:
    return image.mean(axis=2).astype(np.uint8) if image.ndim == 3 else image


def dropped_stretches(image: np.ndarray, lines: list[OcrLine]) -> list[OcrLine]:
    """The gaps between the words of each line (`line.extra["words"]`, boxes in the image's
    pixels) that hold ink (see the module doc), as `dropped` lines in the same pixels."""
    import cv2

    gray = _gray(image)
    h_img, w_img = gray.shape[:2]
    out: list[OcrLine] = []
    for ln in lines:
        words = sorted((ln.extra or {}).get("words") or [], key=lambda wd: wd["bbox"][0])
        if len(words) < 2:
            continue
        hs = sorted(wd["bbox"][3] - wd["bbox"][1] for wd in words)
        h = hs[len(hs) // 2]
        if h <= 2:
            continue
        y0, y1 = int(max(0, ln.bbox[1])), int(min(h_img, ln.bbox[3]))
        if y1 - y0 < 3:
            continue
        # the paper of this line: the brightest part of its band (a wide percentile, not the max: noise)
        band = cv2.medianBlur(np.ascontiguousarray(gray[y0:y1]), _MEDIAN_PX)
        paper = float(np.percentile(band, 90))
        for a, b in zip(words, words[1:]):
            gx0, gx1 = int(a["bbox"][2] + 0.3 * h), int(b["bbox"][0] - 0.3 * h)
            if gx1 - gx0 < _MIN_GAP_HEIGHTS * h or gx0 < 0 or gx1 > w_img:
                continue
            dark = band[:, gx0:gx1] < paper - _INK_DELTA
            ink = float(dark.mean())
            rows = np.flatnonzero(dark.any(axis=1))
            # letters are tall: dot leaders and underlines in a gap sit in a thin strip of the line
            if ink >= _MIN_INK_SHARE and rows.size and rows[-1] - rows[0] + 1 >= _MIN_INK_HEIGHT * h:
                out.append(OcrLine((float(gx0), float(y0), float(gx1), float(y1)), "", 0.0,
                                   extra={DROPPED: True, "ink_share": round(ink, 3)}))
    return out
