"""Lines the OCR reader saw but left out of its output: the text net on the OCR route.

On an OCR page the reader's own detector (PP-OCR det, the same model as `ocr.text_net`) has
already found every line of text the page shows. Two kinds of those lines never reach a block:
- a line whose recognition scored under the reader's cut (`small_reader.text_score`): a faint,
  blurred or stamped-over line is exactly what a user cannot afford to lose in silence;
- a line inside a layout region kept as a figure: text in a picture (a screenshot, a sign, a
  banner) is content, and a figure box accounts for none of it.
Each such line that no text block of the final reading covers is text the page shows and the
output does not hold: the page is flagged `unread_lines` with the boxes, the reader's score
of each line and what it read, instead of the line vanishing. No detector runs again, so
this net costs nothing on an OCR page.

What is not counted (a clean scan must not gain a flag): a line that read no letter or digit
run as long as `_MIN_ALNUM` (a speck, a rule, a texture), a below-cut line scoring under
`_MIN_SCORE` (the recogniser read noise: a picture's texture, a smudge), a line wholly inside
the page's top or bottom band (`small_reader.furniture_band`: a logo's lettering, a letterhead's
emblem in a script the recogniser does not read; the text-layer route's ink accounting leaves
logos in the bands alone the same way), and, in a figure, chart furniture: a figure counts only
when it holds `unread_ink_figure_lines` lines of such text, or one line that reads like words
(`_FIGURE_LINE_WORDS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config.checks import ChecksConfig
from ..model import Block, CheckResult
from .dropped_words import DROPPED
from .lines import OcrLine

NAME = "unread_lines"

_MIN_ALNUM = 3  # letters/digits a line must read to count as text (one or two are specks and marks)
_MIN_SCORE = 0.3  # a below-cut line scoring under this read noise, not a faint line of text
_FIGURE_LINE_WORDS = 3  # a figure line with this many words of 2+ letters is a sentence, not a label


_WHY = {"below_cut": "under the score cut", "figure": "in a figure",
        DROPPED: "ink between two words the reader read, with no word of its output (it dropped them)"}


class ReadLines(list):
    """A reader's kept lines of one image (a list of `OcrLine`), with the lines it read and
    dropped under its score cut (`below_cut`), so that the page's reading can account for them."""

    below_cut: list[OcrLine]

    def __init__(self, lines=(), below_cut=()):
        super().__init__(lines)
        self.below_cut = list(below_cut)


def below_cut_of(lines) -> list[OcrLine]:
    """The below-cut lines a reader attached to its lines (none from a reader that keeps no such record)."""
    return list(getattr(lines, "below_cut", ()))


@dataclass
class Unread:
    """One line left out: page points (the reading's frame), what was read, the reader's score, why."""

    bbox: tuple[float, float, float, float]
    text: str
    score: float
    why: str  # "below_cut", "figure" or "dropped" (`dropped_words`)


def _alnum_run(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


def _wordy(text: str) -> bool:
    return sum(1 for w in text.split() if sum(ch.isalpha() for ch in w) >= 2) >= _FIGURE_LINE_WORDS


def candidates(below_cut: list[OcrLine], figures: list[list[OcrLine]], text_score: float, scale: float,
               page_h: float, band_share: float, cfg: ChecksConfig) -> list[Unread]:
    """The lines that count (see the module doc), in page points (`scale` pixels per point; a
    page `page_h` points high, bands `band_share` of it). `figures`: the lines of each region
    kept as a figure."""
    band = band_share * page_h

    def pts(ln: OcrLine) -> tuple[float, float, float, float]:
        return tuple(round(v / scale, 2) for v in ln.bbox)  # type: ignore[return-value]

    def in_band(ln: OcrLine) -> bool:
        b = pts(ln)
        return b[3] <= band or b[1] >= page_h - band

    def body(ln: OcrLine) -> bool:
        return _alnum_run(ln.text) >= _MIN_ALNUM and not in_band(ln)

    out = [Unread(pts(ln), ln.text, ln.confidence, "below_cut") for ln in below_cut
           if _MIN_SCORE <= ln.confidence < text_score and body(ln)]
    # stretches of a line a word reader read around and left out (Tesseract's silent drops,
    # `dropped_words`): ink with no text at all, so no letter count or score to ask for
    out += [Unread(pts(ln), "", 0.0, DROPPED) for ln in below_cut if (ln.extra or {}).get(DROPPED) and not in_band(ln)]
    for lines in figures:
        texty = [ln for ln in lines if body(ln)]
        if len(texty) >= cfg.unread_ink_figure_lines or any(_wordy(ln.text) for ln in texty):
            out += [Unread(pts(ln), ln.text, ln.confidence, "figure") for ln in texty]
    return out


def _uncovered(boxes: list, blocks: list[Block], min_cover: float) -> list[bool]:
    from .checks import _covered_rows

    text = [b.bbox for b in blocks if b.role != "figure" and b.text.strip()]
    return [c < min_cover for c in _covered_rows(boxes, text)]


def unread_lines_check(found: list[Unread], blocks: list[Block], cfg: ChecksConfig) -> CheckResult | None:
    """`unread_lines`: failed with the lines of `found` that no text block of `blocks` covers;
    None when there is nothing to say (no candidate at all)."""
    if not found:
        return None
    # a dropped stretch lies inside the very line (and block) the reader built around it: a block's
    # box is no evidence that it was read
    left = [u for u, miss in zip(found, _uncovered([u.bbox for u in found], blocks, cfg.unread_ink_min_cover))
            if miss or u.why == DROPPED]
    if not left:
        return CheckResult(name=NAME, passed=True, score=0.0, threshold=0.0,
                           reason=f"the {len(found)} line(s) the reader detected but did not keep lie in blocks of the reading")
    said = "; ".join(f"{_WHY[u.why]}: {u.text[:40]!r} at {u.score:.2f}" if u.why != DROPPED else _WHY[u.why]
                     for u in left[:8])
    return CheckResult(
        name=NAME, passed=False, score=float(len(left)), threshold=0.0,
        reason=(f"{len(left)} line(s) of text the reader detected are in no block of the output ({said}"
                f"{'; ...' if len(left) > 8 else ''}): text the page shows that the reading left out")[:600],
        regions=[u.bbox for u in left[:50]],
    )


def still_unread(first_checks: list[CheckResult], blocks: list[Block], cfg: ChecksConfig,
                 first_blocks: list[Block] | None = None) -> CheckResult | None:
    """A first reading's failed `unread_lines`, re-judged against a later reading's `blocks` (an
    escalation re-reads the page): its lines that those blocks still do not cover, or None when
    the first reading had no such failure. The reason keeps the first reading's words.
    `first_blocks`: the first reading's; a later block that is one of them unchanged (the
    escalation kept the first reading there) read nothing new, so it covers nothing: a stretch
    the first reader dropped inside its own line stays unread."""
    first = next((c for c in first_checks if c.name == NAME and not c.passed), None)
    if first is None:
        return None
    if first_blocks:
        kept = {(b.text, tuple(b.bbox)) for b in first_blocks}
        blocks = [b for b in blocks if (b.text, tuple(b.bbox)) not in kept]
    left = [r for r, miss in zip(first.regions, _uncovered(list(first.regions), blocks, cfg.unread_ink_min_cover)) if miss]
    if not left:
        return CheckResult(name=NAME, passed=True, score=0.0, threshold=0.0,
                           reason=f"the {len(first.regions)} line(s) the first reading left out are in blocks of this one")
    return first.model_copy(update={"score": float(len(left)), "regions": left,
                                    "reason": f"after re-reading, {len(left)} of them still: {first.reason}"[:600]})
