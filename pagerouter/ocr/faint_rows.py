"""Rows of print too faint, blurred or noisy to make letters: the page's last witness of text.

A heavily degraded scan (a fax of a photocopy, print a tenth of its contrast under grain) has
no letter-sized marks that stand out from the paper (`layout.ink.content_marks` sees specks),
and the OCR engine's detector finds no line either; a person still sees rows of grey print.
Blurred to the size of a letter, the grain averages out and each line of print becomes one long
low bar a little darker than the paper: that is what is looked for here.

`faint_rows` renders nothing itself: it takes a grayscale render. Measured on the bench's
cases at 72 dpi: ~0.05 s a page; degraded scans give 2-11 bars, clean paper, photos and
grain give none (clean print gives big merged blobs, which are not bars, and is seen by the
other witnesses anyway). Used only where the page would otherwise be called blank or its
reading came out (nearly) empty.

At the weakest contrast the bar of a line breaks where its print is lightest, into word-sized
pieces (20-70 pt wide, each shorter than a bar) at one height: pieces closer than `_WORD_GAP_PT`
along a row are joined before the bar tests, so a row of words counts as the line it is. Found
on dev scans (bench_lost scan_rows degraded, seed 5): 1 bar found of 5-6 lines, the page called
blank and `ok`; joined, 5-9 bars. Grain and speckle pages still give none: their blobs are too
rare at the noise threshold to chain into a 60 pt row.
"""

from __future__ import annotations

import numpy as np

_BLUR_PT = 2.5  # letters and grain merge into one bar per line at this blur (points)
_NOISE_K = 3.0  # a pixel of a bar is this many noise deviations darker than the paper
_MIN_H_PT, _MAX_H_PT = 3.0, 30.0  # a line of print, blurred: from small print to a headline
_MIN_W_PT = 60.0  # a few words at least
_MIN_ELONGATION = 6.0  # a line is much wider than tall (a blot, a photo's edge are not)
_MIN_FILL = 0.3  # the bar fills its box (a curved scratch does not)
_WORD_GAP_PT = 6.0  # pieces of one line's bar this close along the row are one bar (a word gap, blurred)


def faint_rows(gray: np.ndarray, scale: float, edge_pt: float = 12.0) -> list[tuple[float, float, float, float]]:
    """Boxes (points, in the render's frame) of long low bars of faint print; see the module doc."""
    import cv2

    if gray.size == 0 or scale <= 0:
        return []
    g = gray.astype(np.float32)
    b = cv2.GaussianBlur(g, (0, 0), _BLUR_PT * scale)
    paper = float(np.median(b))
    d = paper - b
    noise = float(np.median(np.abs(d - np.median(d)))) * 1.4826 + 0.5
    mask = (d > _NOISE_K * noise).astype(np.uint8)
    gap = int(round(_WORD_GAP_PT * scale))
    if gap > 1:  # join along the row only: lines above and below stay apart
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (gap, 1)))
    _n, _lab, stats, _c = cv2.connectedComponentsWithStats(mask, connectivity=8)
    h, w = gray.shape
    edge = edge_pt * scale
    out = []
    for x, y, bw, bh, area in stats[1:]:
        if not (_MIN_H_PT * scale <= bh <= _MAX_H_PT * scale and bw >= _MIN_W_PT * scale):
            continue
        if bw < _MIN_ELONGATION * bh or area < _MIN_FILL * bw * bh:
            continue
        if x < edge or y < edge or x + bw > w - edge or y + bh > h - edge:
            continue  # a scanner's shadow along the edge
        out.append((x / scale, y / scale, (x + bw) / scale, (y + bh) / scale))
    return out
