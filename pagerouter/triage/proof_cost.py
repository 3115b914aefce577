"""What proving a hidden layer line by line costs, against reading the page with OCR: the
per-page choice of the cheaper of the two (`layer_proof.prove_hidden_layer`).

A hidden layer is proven by cropping each of its lines from the page and reading the crop
with the small reader's recogniser alone. OCR of the page renders it, runs the line detector
over the window around its ink and reads every detected line with the same recogniser. Both
pay the recogniser per crop, and the recogniser pads every crop of a run of
`REC_BATCH` to the run's widest, and to at least `REC_MIN_RATIO` (its input is 48 x 320 px
at the least): a short line costs as much as a 320 px one. So the proof wins on a page of
some tens of long lines (no detector, no render of the page) and loses when the layer holds
many short crops for few rows of print: a price list of 80 short lines, a layer written one
word a line (each word its own padded crop, while the detector finds the page's rows).

The estimate counts, for the proof: crops, recogniser calls and runs and the padded input of
each run (the layer's line boxes give each crop's width over height, the same padding as
`layer_proof._crop`); for OCR: the page render, the detector over the window that holds the
layer's lines (at the detector's scale, `small_reader.det_limit_side_len`/`det_scale`) and
the recogniser over the rows the detector would find (the layer's lines joined along a row
when a word gap apart). OCR's layout model and checks are not counted: the estimate of OCR is
its least, so the proof runs only where it is cheaper than bare detection and recognition.

Midway, the lines read so far say how likely the layer is to fail anyway (more of its lines
disagreeing than can be replaced sends the page to OCR after the proof was paid for):
`continue_or_ocr` weighs the rest of the proof plus that chance times OCR against OCR now.
The chance is a beta-binomial tail: the lines still to read disagree at a rate learned from
those read, starting from `PRIOR_BAD`/`PRIOR_GOOD` (a layer is mostly right or one revision
behind: about one line in twenty disagreeing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# ---------------------------------------------------------------- measured constants
# Measured on the development machine (2 cores shared with other work, load 12-18 at the time;
# onnxruntime with the small reader's session options) by
# `python benchmarks/bench_lost.py --calibrate 5` (also printed by `--cost N`), 2026-12-06: the
# recogniser on calls of 1-24 crops 320-1600 px wide (least squares over call, run of 6 and
# input pixels, each the least of 5 interleaved rounds), `_crop` on the layer lines of four
# generated scans (median), the page render at the small reader's target and the detector on
# the same pages' ink windows (per megapixel, least of 5). What decides is their ratios, not the
# absolutes: a busier machine slows both sides alike. Re-measure with that command when the
# recogniser model, the render targets or the machine change.
REC_CALL_MS = 10.5  # one recogniser call (session setup, decoding)
REC_RUN_MS = 0.0  # one run of up to REC_BATCH crops, beyond its pixels (fitted: nothing measurable)
REC_MS_PER_KPX = 2.56  # per thousand pixels of recogniser input (48 px high, padded)
CROP_MS = 0.9  # one line cropped and rendered from the page (`layer_proof._crop`)
RENDER_MS_PER_MPX = 16.2  # the page rendered at the small reader's target, per megapixel
DET_MS_PER_MPX = 472.0  # the line detector, per megapixel of its input window
# the detector's crop of a row is wider for its height than the layer's box of it (its box is
# tighter around the letters): width/height of its crops over the layer rows', measured on the
# generated scans of `bench_lost --calibrate` (1.10-1.18)
DET_RATIO = 1.15

REC_BATCH = 6  # RapidOCR's rec_batch_num: crops per recogniser run
REC_HEIGHT = 48  # the recogniser's input height (px)
REC_MIN_RATIO = 320 / 48  # the recogniser's least input width over height
PROOF_CALL = 8  # lines per recogniser call once the sample agrees (`layer_proof._REST_BATCH`)

# the layer's line box over what the proof crops (`layer_proof._PAD_X`, `_PAD_Y`, `_PAD_X_WORD`)
_PAD_X, _PAD_Y, _PAD_X_WORD = 0.6, 0.2, 0.25
# rows: layer lines on one row closer than this many line heights are one detector box
_ROW_GAP = 1.5
# the prior of the midway rule: a line disagrees with mean PRIOR_BAD / (PRIOR_BAD + PRIOR_GOOD)
PRIOR_BAD, PRIOR_GOOD = 0.5, 9.5

Box = tuple[float, float, float, float]


def crop_ratio(box: Box, word: bool = False) -> float:
    """Width over height of the proof's crop of a layer line (word: a digit word's crop)."""
    h = max(1e-6, box[3] - box[1])
    pad = _PAD_X_WORD if word else _PAD_X
    return (box[2] - box[0] + 2 * pad * h) / ((1 + 2 * _PAD_Y) * h)


def rec_ms(calls: list[list[float]]) -> float:
    """The recogniser's cost for these calls, each a list of crop width/height ratios: crops
    sorted by ratio, read in runs of REC_BATCH, each run padded to its widest (and to at least
    REC_MIN_RATIO)."""
    ms = 0.0
    for ratios in calls:
        if not ratios:
            continue
        ms += REC_CALL_MS
        rs = sorted(ratios)
        for i in range(0, len(rs), REC_BATCH):
            run = rs[i:i + REC_BATCH]
            width = REC_HEIGHT * max(REC_MIN_RATIO, run[-1])
            ms += REC_RUN_MS + REC_MS_PER_KPX * len(run) * REC_HEIGHT * width / 1000.0
    return ms


def proof_ms(calls: list[list[float]]) -> float:
    """The proof's cost: one crop per ratio and the recogniser over the calls."""
    return CROP_MS * sum(len(c) for c in calls) + rec_ms(calls)


def rows(boxes: list[Box]) -> list[Box]:
    """The rows a line detector finds for these line boxes: boxes on one row (half a height of
    overlap) less than `_ROW_GAP` heights apart are one box."""
    out: list[list[float]] = []
    for b in sorted(boxes, key=lambda b: (round(b[1]), b[0])):
        h = b[3] - b[1]
        for r in reversed(out):  # rows start top down: only the last few can reach this box
            rh = r[3] - r[1]
            if r[1] + 3 * max(h, rh) < b[1]:
                out.append(list(b))
                break
            overlap = min(b[3], r[3]) - max(b[1], r[1])
            gap = max(b[0] - r[2], r[0] - b[2])
            if overlap >= 0.5 * min(h, rh) and gap <= _ROW_GAP * max(h, rh):
                r[:] = [min(r[0], b[0]), min(r[1], b[1]), max(r[2], b[2]), max(r[3], b[3])]
                break
        else:
            out.append(list(b))
    return [tuple(r) for r in out]  # type: ignore[misc]


def det_mpx(page_w_pt: float, page_h_pt: float, boxes: list[Box], zoom: float, det_side: int, det_scale: float) -> float:
    """Megapixels of the detector's input: the window holding `boxes` (plus a margin) on the
    page rendered at `zoom` px/pt, at the detector's scale (`det_side`/`det_scale` as the small
    reader sets them)."""
    w_px, h_px = page_w_pt * zoom, page_h_pt * zoom
    side = max(det_side, int(det_scale * max(w_px, h_px)))
    s = min(1.0, side / max(w_px, h_px))
    if not boxes:
        return w_px * h_px * s * s / 1e6
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
    return (min(page_w_pt, x1 - x0 + 20) * zoom * s) * (min(page_h_pt, y1 - y0 + 20) * zoom * s) / 1e6


def ocr_ms(page_w_pt: float, page_h_pt: float, boxes: list[Box], zoom: float, det_side: int, det_scale: float) -> float:
    """Bare OCR of the page: render at `zoom` px/pt, the detector over the window holding
    `boxes` (`det_mpx`), and the recogniser over the rows it would find, in one call."""
    render = RENDER_MS_PER_MPX * page_w_pt * page_h_pt * zoom * zoom / 1e6
    det = DET_MS_PER_MPX * det_mpx(page_w_pt, page_h_pt, boxes, zoom, det_side, det_scale)
    found = rows(boxes)
    rec = rec_ms([[DET_RATIO * (b[2] - b[0]) / max(1e-6, b[3] - b[1]) for b in found]])
    return render + det + rec


@dataclass
class CostEstimate:
    """The two costs of one page, in ms on the measured machine, and what they count."""

    proof_ms: float
    ocr_ms: float
    crops: int
    ocr_rows: int

    @property
    def proof_cheaper(self) -> bool:
        return self.proof_ms < self.ocr_ms

    def scores(self) -> dict[str, float]:
        return {"hidden_layer_proof_est_ms": round(self.proof_ms, 1), "hidden_layer_ocr_est_ms": round(self.ocr_ms, 1),
                "hidden_layer_proof_est_crops": float(self.crops), "hidden_layer_ocr_est_rows": float(self.ocr_rows)}

    def said(self) -> str:
        return (f"proving it line by line is estimated at {self.proof_ms:.0f} ms ({self.crops} crops through the "
                f"recogniser), OCR of the page at {self.ocr_ms:.0f} ms (render, detection, {self.ocr_rows} rows "
                "recognised; constants in triage/proof_cost.py)")


def fail_chance(bad: int, read: int, left: int, limit: int) -> float:
    """P(more than `limit` disagreeing lines in all) when `bad` of `read` lines disagree and
    `left` lines are still to read: a beta-binomial tail from the prior (PRIOR_BAD, PRIOR_GOOD)."""
    need = limit - bad + 1  # this many more disagreeing lines fail the layer
    if need <= 0:
        return 1.0
    if need > left:
        return 0.0
    a, b = PRIOR_BAD + bad, PRIOR_GOOD + read - bad

    def log_pmf(k: int) -> float:
        return (math.lgamma(left + 1) - math.lgamma(k + 1) - math.lgamma(left - k + 1)
                + math.lgamma(k + a) + math.lgamma(left - k + b) - math.lgamma(left + a + b)
                + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b))

    return min(1.0, sum(math.exp(log_pmf(k)) for k in range(need, left + 1)))


def continue_or_ocr(bad: int, read: int, left: int, limit: int, rest_ms: float, ocr: float) -> tuple[bool, str, float]:
    """Whether to go on proving: the rest of the proof plus the chance it fails anyway times
    OCR (paid after it) against OCR now. Returns (go on, why not, the expected cost of going on)."""
    p = fail_chance(bad, read, left, limit)
    going = rest_ms + p * ocr
    if going <= ocr:
        return True, "", going
    return False, (f"after {read} line(s) read, {bad} disagree: the chance that more than {limit} of the layer's "
                   f"lines do (the most that can be read from the picture instead) is {p:.2f}, so the rest of the "
                   f"proof ({rest_ms:.0f} ms) plus that chance of OCR after it ({p:.2f} x {ocr:.0f} ms) would cost "
                   f"{going:.0f} ms, more than OCR of the page now"), going
