"""A text layer's word spacing on stretches OCR read with the same characters.

A page read by OCR may still carry a hidden OCR layer (text drawn invisibly over a scan): one the
cost rule chose not to prove line by line (`triage.proof_cost`: OCR of the page was the cheaper
way to read it), or one the proof refused because some of its lines disagree. OCR's
recogniser is surest of characters and least sure of the spaces between them: a narrow gap
before a number ("a 55") is read as none ("a55"), and the page says `ok` with words run together
that the page shows apart.

Where the reading and the layer hold the same characters (whitespace aside) over a stretch of at
least `_MIN_RUN` characters, the stretch takes the layer's spacing: the characters are still the
picture's reading, only which neighbouring characters a space separates comes from the layer. A
line break of the reading is kept, and nothing the reading lacks is taken from the layer, so a
layer that lies changes nothing it does not agree with to the character. Spans triage found not
shown on the page (`TriageDecision.hidden_text`) are left out of the layer.

Only pages triage judged to carry a hidden layer (its `invisible_text_share` over
`triage.max_invisible_text_share`) are respaced: an OCR engine's layer splits words where the
scan shows spaces, while a visible layer that was sent to OCR is a damaged one, and a typeset
layer may split a letter-spaced heading into one word per letter.
"""

from __future__ import annotations

from difflib import SequenceMatcher

import pymupdf

from ..common.geometry import center_inside
from ..common.stages import OcrTask, Reading
from ..model import CheckResult
from .lines import OcrLine, sort_lines

_MIN_RUN = 3  # characters (whitespace aside) two texts must share in a row to be the same stretch
_PAD_PT = 2.0  # a layer word belongs to a block when its centre is this close to the block's box
_SKIP_ROLES = {"table", "figure", "formula"}  # cells and pictures: no running text to respace


def layer_words(task: OcrTask, hidden_share: float) -> list[tuple[tuple[float, float, float, float], str]]:
    """The page's text-layer words as (box in displayed page points, text), without the spans
    triage found not shown; [] unless more than `hidden_share` of the layer is invisible (module doc)."""
    if task.page_kind != "pdf" or task.decision.scores.get("invisible_text_share", 0.0) <= hidden_share:
        return []
    hidden = [pymupdf.Rect(h.bbox) for h in task.decision.hidden_text]
    out = []
    try:
        with pymupdf.open("pdf", task.page_bytes) as doc:
            page = doc[0]
            m = page.rotation_matrix
            words = page.get_text("words", sort=False)
    except Exception:  # noqa: BLE001 - triage read this page already; without its layer the reading stands as read
        return []
    for x0, y0, x1, y1, text, *_ in words:
        r = pymupdf.Rect(x0, y0, x1, y1) * m
        centre = pymupdf.Point((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2)
        if text.strip() and not any(centre in h for h in hidden):
            out.append(((r.x0, r.y0, r.x1, r.y1), text))
    return out


def _in_rows(words: list[tuple[tuple[float, float, float, float], str]]) -> str:
    """The words as a reader would copy them: rows top to bottom, each left to right."""
    return " ".join(ln.text for ln in sort_lines([OcrLine(box, text, 1.0) for box, text in words]))


def _chars(text: str) -> tuple[str, list[int]]:
    """The text without whitespace, and where each of its characters sits in `text`."""
    pos = [i for i, c in enumerate(text) if not c.isspace()]
    return "".join(text[i] for i in pos), pos


def respace(reading: str, layer: str) -> tuple[str, int]:
    """`reading` with the layer's spacing inside the stretches both hold character for character
    (see the module doc); the new text and how many gaps changed."""
    r_chars, r_pos = _chars(reading)
    l_chars, l_pos = _chars(layer)
    if not r_chars or not l_chars:
        return reading, 0
    gaps: dict[int, str] = {}  # index in r_chars of the character after the gap -> the gap's new text
    for a, b, n in SequenceMatcher(None, r_chars, l_chars, autojunk=False).get_matching_blocks():
        if n < _MIN_RUN:
            continue
        for k in range(1, n):
            r_gap = reading[r_pos[a + k - 1] + 1:r_pos[a + k]]
            if "\n" in r_gap:
                continue  # the reading's line break stays
            want = " " if layer[l_pos[b + k - 1] + 1:l_pos[b + k]] else ""
            if r_gap != want:
                gaps[a + k] = want
    if not gaps:
        return reading, 0
    out, last = [], 0
    for k in sorted(gaps):
        out.append(reading[last:r_pos[k - 1] + 1])
        out.append(gaps[k])
        last = r_pos[k]
    out.append(reading[last:])
    return "".join(out), len(gaps)


def apply_layer_spacing(task: OcrTask, reading: Reading, hidden_share: float) -> CheckResult | None:
    """Respace the reading's OCR blocks in place after the page's hidden text layer (module doc;
    `hidden_share`: `triage.max_invisible_text_share`); a passed check that says how many gaps
    changed, or None when none did."""
    words = layer_words(task, hidden_share)
    if not words:
        return None
    changed = blocks = 0
    for block in reading.blocks:
        if block.route != "ocr" or block.role in _SKIP_ROLES or not block.text.strip():
            continue
        near = [w for w in words if center_inside(w[0], block.bbox, _PAD_PT)]
        if not near:
            continue
        block.text, n = respace(block.text, _in_rows(near))
        changed += n
        blocks += n > 0
    if not changed:
        return None
    return CheckResult(name="layer_spacing", passed=True, score=float(changed), reason=(
        f"{changed} gap(s) between characters in {blocks} block(s) follow the page's hidden text layer, whose characters "
        f"match the reading there for >= {_MIN_RUN} in a row (the characters are the reading's)"))
