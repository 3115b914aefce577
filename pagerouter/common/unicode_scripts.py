"""Which Unicode script a character belongs to, and which script a text is written in.

The one script helper: the block table, the character classifiers and the one dominant-script
decision. Triage (is a text layer language? which script is the page in?), the OCR checks and
vote (tokenising, script shares) and the OCR reader (which script a first reading is in, which
characters a page's script allows) all classify here and only add their own policy on top
(thresholds, which engine options a script calls for). Pure stdlib.

Names. A *character* script is Unicode's name for the block's script: Latin, Greek,
Cyrillic, ..., Han, Hangul, and `Kana` for hiragana + katakana. A *page* script is what
`dominant_script` decides and what the OCR script table (`config/ocr.py`, `ocr.scripts.table`)
is keyed by: the character script that dominates, except that Japanese text (Han mixed with
kana) is `Japanese`. Triage and OCR use that one name, so a page script is never `Kana`.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

KANA = "Kana"
"""Character script of hiragana and katakana."""
JAPANESE = "Japanese"
"""Page script of Japanese text (Han + kana), in triage's decisions and the OCR script table."""

# (first code point, last code point, script), sorted, non-overlapping: the union of the
# ranges the four former copies (triage, triage words, OCR scripts, OCR text stats) used.
# Whole blocks, so a block's digits, punctuation and marks map to its script too (triage counts
# Arabic or Devanagari text by block); callers that want letters only filter with isalpha().
SCRIPT_BLOCKS: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x005A, "Latin"),
    (0x0061, 0x007A, "Latin"),
    (0x00AA, 0x00AA, "Latin"),  # ª
    (0x00B5, 0x00B5, "Latin"),  # µ micro sign: a unit letter of Latin-script text (µm), never foreign there
    (0x00BA, 0x00BA, "Latin"),  # º
    (0x00C0, 0x00D6, "Latin"),  # (× and ÷ are symbols)
    (0x00D8, 0x00F6, "Latin"),
    (0x00F8, 0x024F, "Latin"),
    (0x0370, 0x03FF, "Greek"),
    (0x0400, 0x052F, "Cyrillic"),
    (0x0530, 0x058F, "Armenian"),
    (0x0590, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"),
    (0x0750, 0x077F, "Arabic"),
    (0x08A0, 0x08FF, "Arabic"),
    (0x0900, 0x097F, "Devanagari"),
    (0x0980, 0x09FF, "Bengali"),
    (0x0B80, 0x0BFF, "Tamil"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x10A0, 0x10FF, "Georgian"),
    (0x1100, 0x11FF, "Hangul"),
    (0x1E00, 0x1EFF, "Latin"),
    (0x1F00, 0x1FFF, "Greek"),
    (0x2071, 0x2071, "Latin"),  # superscript i
    (0x207F, 0x207F, "Latin"),  # superscript n
    (0x2090, 0x209C, "Latin"),  # subscript letters (the digits around them are not Latin)
    (0x3040, 0x30FF, KANA),
    (0x3130, 0x318F, "Hangul"),  # compatibility jamo
    (0x31F0, 0x31FF, KANA),
    (0x3400, 0x4DBF, "Han"),
    (0x4E00, 0x9FFF, "Han"),
    (0xAC00, 0xD7AF, "Hangul"),
    (0xF900, 0xFAFF, "Han"),
    (0xFB00, 0xFB06, "Latin"),  # ligatures ff fi fl (common in PDF text and OCR output)
    (0xFB50, 0xFDFF, "Arabic"),  # presentation forms A (PDF text layers often hold these)
    (0xFE70, 0xFEFC, "Arabic"),  # presentation forms B (U+FEFF is the byte-order mark, not Arabic)
    (0xFF21, 0xFF3A, "Latin"),  # full-width A-Z
    (0xFF41, 0xFF5A, "Latin"),  # full-width a-z
    (0x1D400, 0x1D6A5, "Latin"),  # mathematical alphanumerics (italic x, bold A)
    (0x1D6A8, 0x1D7CB, "Greek"),  # mathematical Greek (the digits after them are not Greek)
    (0x20000, 0x2FA1F, "Han"),  # CJK extensions B-F and compatibility supplement
)

SCRIPT_NAMES: frozenset[str] = frozenset(name for _, _, name in SCRIPT_BLOCKS)
"""Every character script the table knows."""

NO_SPACE_SCRIPTS = frozenset({"Han", KANA, "Thai"})
"""Scripts written without spaces between words (tokenised per character)."""

CJK_SCRIPTS = frozenset({"Han", KANA, "Hangul"})
"""Scripts that legitimately mix inside one word (Japanese kanji + kana, Korean hanja)."""


@lru_cache(maxsize=8192)
def script_of(ch: str) -> str | None:
    """Script of one character by its Unicode block, or None outside every block in the table
    (digits and punctuation of the shared repertoire, symbols, unlisted scripts)."""
    cp = ord(ch)
    lo_i, hi_i = 0, len(SCRIPT_BLOCKS)
    while lo_i < hi_i:  # binary search over the sorted blocks
        mid = (lo_i + hi_i) // 2
        lo, hi, name = SCRIPT_BLOCKS[mid]
        if cp < lo:
            hi_i = mid
        elif cp > hi:
            lo_i = mid + 1
        else:
            return name
    return None


@lru_cache(maxsize=4096)
def letter_script(ch: str) -> str | None:
    """Script of a letter (`Other` for letters of scripts outside the table), or None for
    digits, punctuation, symbols, combining marks and spaces: what the OCR checks and vote
    count and tokenise by, where a block's digits or marks must not count as its script."""
    if not ch.isalpha():
        return None
    return script_of(ch) or "Other"


def letter_script_counts(text: str) -> Counter:
    """Letters per `letter_script` (`Other` included)."""
    out: Counter = Counter()
    for ch, n in Counter(text).items():
        s = letter_script(ch)
        if s:
            out[s] += n
    return out


def script_counts(text: str) -> Counter:
    """Characters per script (only scripts that occur). Counts distinct characters first (in C):
    a dense page holds thousands of characters but ~100 distinct ones."""
    out: Counter = Counter()
    for ch, n in Counter(text).items():
        s = script_of(ch)
        if s is not None:
            out[s] += n
    return out


# --------------------------------------------------------------------------- engine classes

# Characters outside every script block that still belong to the shared repertoire.
_COMMON_EXTRA = set("€£¥°§©®±µ·×÷–—‘’“”„•…‰′″№")


@lru_cache(maxsize=8192)
def char_script(ch: str) -> str:
    """Script of one character for engine decisions: a character script of `script_of`
    (`Kana` for kana), `Common` (digits, punctuation, ASCII symbols and spaces), `Fullwidth`
    (full-width forms and CJK punctuation: the Chinese model's output, unwanted in Latin text)
    or `Other`. `rapidocr_allowed` lists in the OCR script table use these names."""
    cp = ord(ch)
    if cp < 0x80 and not ch.isalpha():
        return "Common"
    cat = unicodedata.category(ch)
    if 0xFF00 <= cp <= 0xFFEF:  # full-/half-width forms: letters and punctuation, not Latin text
        return "Fullwidth" if script_of(ch) is not None or cat[0] in "PSZN" else "Other"
    name = script_of(ch)
    if name is not None:
        return name
    if ch in _COMMON_EXTRA or (0x2000 <= cp <= 0x206F) or (0x00A0 <= cp <= 0x00BF):
        return "Common"
    if cat[0] in "PSZN":
        # CJK punctuation belongs to CJK text, not to the shared repertoire.
        return "Fullwidth" if 0x3000 <= cp <= 0x303F else "Common"
    return "Other"


def engine_script_counts(text: str) -> Counter:
    """Characters per `char_script` class, without `Common` and `Other`: what the OCR route
    decides a reading's script from. Unlike `script_counts`, full-width forms and CJK
    punctuation count as `Fullwidth` (full-width Latin letters included): a first reading full
    of the Chinese model's full-width output is not confidently Latin."""
    out: Counter = Counter()
    for ch, n in Counter(text).items():
        s = char_script(ch)
        if s not in ("Common", "Other"):
            out[s] += n
    return out


# --------------------------------------------------------------------------- page script

JAPANESE_MIN_KANA_SHARE = 0.15
"""Kana share of kana + Han from which Han-and-kana text is Japanese (triage's rule, now the
only one). Japanese prose writes much of every sentence in kana; Chinese text quoting a
Japanese name, or a reading with a stray kana, has a few at most and stays `Han`."""


@dataclass(frozen=True)
class ScriptDecision:
    """Which page script a text is in, and why (the reason goes into check evidence)."""

    script: str | None  # page script, or None when there are too few letters or none dominates
    share: float  # share of the counted characters in that script (0.0 when too few letters)
    letters: int  # characters counted
    reason: str


def dominant_script(counts: Mapping[str, int], *, min_letters: int = 1, min_share: float = 0.0) -> ScriptDecision:
    """The page script most of the counted characters are in (`counts`: script -> characters,
    from `script_counts` or `engine_script_counts`).

    Japanese: kana make up at least `JAPANESE_MIN_KANA_SHARE` of kana + Han and kana + Han
    together are at least as many as any other script's; the page script is then `Japanese`,
    counting kana and Han together. Otherwise the script with most characters (first counted
    wins a tie). It must reach `min_letters` counted characters and a `min_share` share, else
    the decision is None. The defaults (any letter, any share) are triage's; the OCR route
    passes its config's `ocr.scripts.min_letters` / `min_share`."""
    letters = sum(counts.values())
    if not letters or letters < min_letters:
        return ScriptDecision(None, 0.0, letters, f"{letters} letters < min_letters {min_letters}")
    kana, han = counts.get(KANA, 0), counts.get("Han", 0)
    others = max((v for k, v in counts.items() if k not in (KANA, "Han")), default=0)
    if kana and kana >= JAPANESE_MIN_KANA_SHARE * (kana + han) and kana + han >= others:
        script, n = JAPANESE, kana + han
    else:
        script, n = max(counts.items(), key=lambda kv: kv[1])
    share = n / letters
    if share < min_share:
        return ScriptDecision(None, share, letters, f"no script dominates ({script} {share:.2f} < {min_share})")
    return ScriptDecision(script, share, letters, f"{script}: {share:.2f} of {letters} letters")


def detect_script(text: str) -> str | None:
    """Page script of `text` by character blocks with triage's thresholds ("Latin", "Cyrillic",
    "Han", "Arabic", "Greek", "Devanagari", "Hangul", "Japanese", ...), or None when it holds
    no character of a known script."""
    return dominant_script(script_counts(text)).script
