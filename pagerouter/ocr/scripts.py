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
from ..unicode_scripts import JAPANESE, page_script_name, script_of

# Characters outside every script block that still belong to the shared repertoire.
_COMMON_EXTRA = set("€£¥°§©®±µ·×÷–—‘’“”„•…‰′″№")


@lru_cache(maxsize=8192)
def char_script(ch: str) -> str:
    """Script of one character for engine decisions: a character script of
    `pagerouter.unicode_scripts` (`Kana` for kana), `Common` (digits, punctuation, ASCII
    symbols and spaces), `Fullwidth` (full-width forms and CJK punctuation: the Chinese model's
    output, unwanted in Latin text) or `Other`. `rapidocr_allowed` lists use these names."""
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


@dataclass
class ScriptGuess:
    script: str | None
    share: float  # share of letters in that script
    letters: int
    reason: str


def dominant_script(text: str, cfg: ScriptConfig) -> ScriptGuess:
    """The page script (a key of the OCR script table) most letters of `text` are in, if there
    are enough letters and it dominates. Kana anywhere with Han counts as Japanese (Japanese
    text mixes both); kana alone too."""
    counts: dict[str, int] = {}
    for ch in text:
        s = char_script(ch)
        if s not in ("Common", "Other"):
            s = page_script_name(s)
            counts[s] = counts.get(s, 0) + 1
    if counts.get(JAPANESE) and counts.get("Han"):
        counts[JAPANESE] += counts.pop("Han")
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
    key = page_script_name(script or cfg.fallback)  # triage reports Japanese pages as `Kana`
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
