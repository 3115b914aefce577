"""Which Unicode script a character belongs to: the one table and the one classifier.

Triage (is a text layer language?), the OCR checks and vote (tokenising, script shares) and
the OCR reader (which characters a page's script allows) all classify characters here and
only add their own policy on top (letters only, `Common`/`Fullwidth`, ...). Pure stdlib.

Names. A *character* script is Unicode's name for the block's script: Latin, Greek,
Cyrillic, ..., Han, Hangul, and `Kana` for hiragana + katakana. A *page* script is a key of
the OCR script table (`config/ocr.py`, `ocr.scripts.table`), where Japanese text (Han mixed
with kana) is `Japanese`. Triage's `detect_script` still reports such a page as `Kana` (its
tests pin that name); `page_script_name` is the one place that maps it to `Japanese`, and
the checks' companion table accepts both names.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

KANA = "Kana"
"""Character script of hiragana and katakana."""
JAPANESE = "Japanese"
"""Page script of Japanese text (Han + kana), as the OCR script table names it."""

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

_PAGE_NAMES = {KANA: JAPANESE}


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


def script_counts(text: str) -> Counter:
    """Characters per script (only scripts that occur). Counts distinct characters first (in C):
    a dense page holds thousands of characters but ~100 distinct ones."""
    out: Counter = Counter()
    for ch, n in Counter(text).items():
        s = script_of(ch)
        if s is not None:
            out[s] += n
    return out


def page_script_name(script: str | None) -> str | None:
    """The OCR script table's name for a detected page script (`Kana` -> `Japanese`)."""
    return _PAGE_NAMES.get(script, script) if script is not None else None
