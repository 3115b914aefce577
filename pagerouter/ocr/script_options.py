"""The OCR route's script policy: which script a reading is in by the OCR config's thresholds,
and which engine options and decoding mask that script calls for.

The script table itself lives in config (`ocr.scripts.table`, keyed by page script:
`Japanese` for Han + kana); classifying characters and deciding the dominant script is
`pagerouter.common.unicode_scripts`'s, shared with triage. This module builds the character masks
RapidOCR's recognition decoding uses to keep foreign scripts out of a page.
"""

from __future__ import annotations

from functools import lru_cache

from ..config.ocr import ScriptConfig, ScriptOptions
from ..common.unicode_scripts import ScriptDecision, char_script, dominant_script, engine_script_counts


def reading_script(text: str, cfg: ScriptConfig) -> ScriptDecision:
    """The page script of OCR output `text` (a first reading's lines or blocks): the one
    dominant-script decision over engine classes (`Fullwidth` counted as its own class), with
    the config's `min_letters` and `min_share`."""
    return dominant_script(engine_script_counts(text), min_letters=cfg.min_letters, min_share=cfg.min_share)


def options_for(script: str | None, cfg: ScriptConfig) -> ScriptOptions | None:
    """Engine options for a script (or the configured fallback); None when nothing is known."""
    key = script or cfg.fallback
    return cfg.table.get(key) if key is not None else None


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
