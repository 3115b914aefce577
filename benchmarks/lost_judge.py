"""Judging a reading against a page's known truth (`lost_cases.PageTruth`): what was lost, what
was invented, what hidden text came out. Used by `bench_lost.py` and tests/test_nothing_lost.py."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

import numpy as np

from lost_cases import PageTruth

_MARKS = str.maketrans({c: " " for c in "#*|_`>[]()"})


def norm_text(text: str) -> str:
    """What a reader's Markdown says, for comparison: NFKC, no Markdown marks, escapes or HTML comments,
    no table separator rows, whitespace collapsed; case and punctuation kept."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)  # backslash escapes: `\#` reads as `#`
    text = re.sub(r"</?(sup|sub|b|i|br)\s*/?>", "", text)
    text = re.sub(r"(?m)^\s*\|?\s*:?-{3,}.*$", " ", text)
    text = unicodedata.normalize("NFKC", text).translate(_MARKS)
    return " ".join(text.replace(" - ", " ").split())


def cer(ref: str, hyp: str) -> float:
    """Levenshtein distance / len(ref) (row-wise numpy: pages of thousands of characters)."""
    ref, hyp = " ".join(ref.split()), " ".join(hyp.split())
    if not ref:
        return 0.0 if not hyp else 1.0
    h = np.frombuffer(hyp.encode("utf-32-le"), dtype=np.uint32)
    prev = np.arange(len(h) + 1, dtype=np.int32)
    idx = np.arange(len(h) + 1, dtype=np.int32)
    for i, rc in enumerate(np.frombuffer(ref.encode("utf-32-le"), dtype=np.uint32), 1):
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (h != rc))
        cur = np.minimum.accumulate(cur - idx) + idx  # insertions: cur[j] <= cur[j-1] + 1
        prev = cur
    return float(prev[-1]) / len(ref)


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in re.findall(r"\w+(?:[.,]\d+)*", text)]


def _near(a: str, b: str) -> bool:
    """One edit apart, for words of 5+ letters without digits (an OCR slip, not other content)."""
    if any(c.isdigit() for c in a + b) or min(len(a), len(b)) < 5 or abs(len(a) - len(b)) > 1:
        return False
    return cer(a, b) * len(a) <= 1


def word_diff(truth: str, output: str) -> tuple[list[str], list[str]]:
    """(truth words missing from the output, output words not in the truth), as multisets; a word
    one letter off counts as read (OCR slips), numbers must match exactly."""
    t, o = Counter(_tokens(truth)), Counter(_tokens(output))
    lost = list((t - o).elements())
    extra = list((o - t).elements())
    still_lost = []
    for w in lost:
        k = next((i for i, x in enumerate(extra) if _near(w, x)), None)
        if k is None:
            still_lost.append(w)
        else:
            extra.pop(k)
    return still_lost, extra


@dataclass
class Verdict:
    cer: float
    lost: list[str]
    invented: list[str]
    forbidden_out: list[str]  # hidden text that came out

    @property
    def wrong(self) -> bool:
        """Content lost or invented: hidden text out, any number lost or made up, or more than a
        couple of words (OCR slips aside). Order is not judged here (CER shows it)."""
        digits = any(any(c.isdigit() for c in w) for w in self.lost + self.invented)
        return bool(self.forbidden_out) or digits or len(self.lost) > 2 or len(self.invented) > 2


def judge(page: PageTruth, markdown: str) -> Verdict:
    out = norm_text(markdown)
    for opt in page.optional:
        o = norm_text(opt)
        if o and o in out:
            out = out.replace(o, " ", 1)
    out = " ".join(out.split())
    truth = norm_text(page.truth)
    lost, invented = word_diff(truth, out)
    # hidden text is out when it occurs more often than the page shows it: a hidden word may also
    # be shown elsewhere on the page ("stone." under a box and in a visible line)
    forbidden = [f for f in page.forbidden if norm_text(f) and out.count(norm_text(f)) > truth.count(norm_text(f))]
    return Verdict(cer(truth, out), lost, invented, forbidden)
