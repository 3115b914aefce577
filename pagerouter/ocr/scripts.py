"""Which script a page is written in, and which engine options that calls for.

The table itself lives in config (`ocr.scripts.table`); this module detects the dominant
script of a text (from a healthy text layer or a first reading) and builds the character
masks RapidOCR's recognition decoding uses to keep foreign scripts out of a page.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ..config.ocr import ScriptConfig, ScriptOptions

# Unicode blocks -> script name. Coarse on purpose: enough to pick engine options.
_RANGES: list[tuple[int, int, str]] = [
    (0x0041, 0x005A, "Latin"),
    (0x0061, 0x007A, "Latin"),
    (0x00C0, 0x024F, "Latin"),
    (0x1E00, 0x1EFF, "Latin"),
    (0x0370, 0x03FF, "Greek"),
    (0x1F00, 0x1FFF, "Greek"),
    (0x0400, 0x052F, "Cyrillic"),
    (0x0590, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"),
    (0x0750, 0x077F, "Arabic"),
    (0x0900, 0x097F, "Devanagari"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x1100, 0x11FF, "Hangul"),
    (0x3040, 0x30FF, "Japanese"),  # kana
    (0x3400, 0x4DBF, "Han"),
    (0x4E00, 0x9FFF, "Han"),
    (0xF900, 0xFAFF, "Han"),
    (0xAC00, 0xD7AF, "Hangul"),
    (0xFF21, 0xFF3A, "Fullwidth"),
    (0xFF41, 0xFF5A, "Fullwidth"),
]
_COMMON_EXTRA = set("€£¥°§©®±µ·×÷–—‘’“”„•…‰′″№")


def char_script(ch: str) -> str:
    """Script of one character: a name from the table above, `Common` (digits, punctuation,
    ASCII symbols and spaces) or `Other`."""
    cp = ord(ch)
    if cp < 0x80 and not ch.isalpha():
        return "Common"
    for lo, hi, name in _RANGES:
        if lo <= cp <= hi:
            return name
    if ch in _COMMON_EXTRA or (0x2000 <= cp <= 0x206F) or (0x00A0 <= cp <= 0x00BF):
        return "Common"
    cat = unicodedata.category(ch)
    if cat[0] in "PSZN":
        # CJK/fullwidth punctuation belongs to CJK text, not to the shared repertoire.
        if 0x3000 <= cp <= 0x303F or 0xFF00 <= cp <= 0xFFEF:
            return "Fullwidth"
        return "Common"
    return "Other"


@dataclass
class ScriptGuess:
    script: str | None
    share: float  # share of letters in that script
    letters: int
    reason: str


def dominant_script(text: str, cfg: ScriptConfig) -> ScriptGuess:
    """The script most letters of `text` are in, if there are enough letters and it dominates.
    Kana anywhere with Han counts as Japanese (Japanese text mixes both)."""
    counts: dict[str, int] = {}
    for ch in text:
        s = char_script(ch)
        if s not in ("Common", "Other"):
            counts[s] = counts.get(s, 0) + 1
    if counts.get("Japanese") and counts.get("Han"):
        counts["Japanese"] += counts.pop("Han")
    letters = sum(counts.values())
    if letters < cfg.min_letters:
        return ScriptGuess(None, 0.0, letters, f"{letters} letters < min_letters {cfg.min_letters}")
    script, n = max(counts.items(), key=lambda kv: kv[1])
    share = n / letters
    if share < cfg.min_share:
        return ScriptGuess(None, share, letters, f"no script dominates ({script} {share:.2f} < {cfg.min_share})")
    return ScriptGuess(script, share, letters, f"{script}: {share:.2f} of {letters} letters")


def options_for(script: str | None, cfg: ScriptConfig) -> ScriptOptions | None:
    """Engine options for a script (or the configured fallback); None when nothing is known."""
    key = script or cfg.fallback
    if key is None:
        return None
    return cfg.table.get(key)


OSD_SCRIPT_NAMES = {"Latin": "Latin", "Cyrillic": "Cyrillic", "Greek": "Greek", "Arabic": "Arabic",
                    "Han": "Han", "Japanese": "Japanese", "Hangul": "Hangul", "Katakana": "Japanese",
                    "Hiragana": "Japanese", "Hebrew": "Hebrew", "Devanagari": "Devanagari", "Thai": "Thai"}
"""Tesseract OSD script names -> our script names."""


@lru_cache(maxsize=64)
def allowed_mask(characters: tuple[str, ...], allowed: tuple[str, ...]) -> tuple[bool, ...]:
    """For a recogniser's character list, which entries may be emitted on a page whose
    expected scripts are `allowed` (each entry may be a multi-char token; all chars must pass).
    Index 0 (CTC blank) and space always pass."""
    ok = set(allowed) | {"Common"}
    out = []
    for i, tok in enumerate(characters):
        if i == 0 or tok in (" ", "blank", ""):
            out.append(True)
        else:
            out.append(all(char_script(c) in ok for c in tok))
    return tuple(out)
