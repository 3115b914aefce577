"""How typical a text's letters are for its script: cross-entropy against letter frequencies.

Triage uses it to catch text layers whose font maps shift or scramble the alphabet: every
character is a real letter of the right script, so script and bad-character counts look
healthy, but rare letters turn common and the bits per letter climb. Characters are
classified by `pagerouter.common.unicode_scripts` (the one script table).
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter

from ..common.unicode_scripts import script_of

__all__ = ["letter_cross_entropy"]


# Approximate letter frequencies (percent), averaged by hand over the big languages that write
# the script (Latin: English, German, French, Spanish, Italian, Portuguese, Dutch, Polish,
# Czech, Scandinavian; Cyrillic: Russian, Ukrainian, Bulgarian, Serbian). Accented letters
# count as their base letter (NFD). The table only has to separate real text from letter
# maps that shift or scramble the alphabet, where rare letters (q, x, j, z, w, k, v; щ, ъ,
# ф, э) become common: a pan-language table keeps German or Polish well below the bar.
_LATIN_FREQ = {
    "e": 13.5, "a": 8.3, "i": 7.4, "n": 7.6, "o": 6.6, "r": 6.8, "s": 6.6, "t": 6.4, "l": 4.4, "d": 4.4,
    "u": 3.8, "c": 3.2, "m": 2.8, "h": 3.0, "g": 2.1, "p": 2.3, "b": 1.5, "v": 1.4, "f": 1.3, "k": 1.5,
    "w": 1.2, "z": 1.2, "y": 1.1, "j": 0.6, "q": 0.4, "x": 0.3, "ß": 0.3, "æ": 0.2, "ø": 0.3, "œ": 0.1,
    "ł": 0.6, "đ": 0.1, "þ": 0.1, "ð": 0.1, "ı": 0.5,
}
_CYRILLIC_FREQ = {
    "о": 10.5, "е": 8.3, "а": 8.0, "и": 7.0, "н": 6.6, "т": 6.1, "с": 5.3, "р": 4.7, "в": 4.4, "л": 4.3,
    "к": 3.5, "м": 3.2, "д": 3.0, "п": 2.8, "у": 2.6, "я": 2.0, "ы": 1.7, "ь": 1.7, "г": 1.7, "з": 1.7,
    "б": 1.6, "ч": 1.4, "й": 1.2, "х": 0.9, "ж": 0.9, "ш": 0.7, "ю": 0.6, "ц": 0.5, "щ": 0.3, "э": 0.3,
    "ф": 0.3, "ъ": 0.1, "ё": 0.2, "і": 2.5, "ї": 0.5, "є": 0.4, "ґ": 0.1, "ј": 0.8, "љ": 0.3, "њ": 0.4,
    "ћ": 0.3, "џ": 0.1, "ђ": 0.1, "ў": 0.3, "ѕ": 0.05, "ѓ": 0.05, "ќ": 0.05,
}
_FLOOR = 0.02  # percent given to letters missing from a table


def _bits(freq: dict[str, float]) -> dict[str, float]:
    total = sum(freq.values())
    return {k: -math.log2(v / total) for k, v in freq.items()}


_TABLES = {"Latin": _bits(_LATIN_FREQ), "Cyrillic": _bits(_CYRILLIC_FREQ)}
_FLOOR_BITS = {name: -math.log2(_FLOOR / 100.0) for name in _TABLES}
_BASE_CACHE: dict[str, str] = {}


def _base_letter(ch: str) -> str:
    b = _BASE_CACHE.get(ch)
    if b is None:
        low = ch.lower()
        dec = unicodedata.normalize("NFD", low)
        b = dec[0] if dec and dec[0] != low and unicodedata.category(dec[0]).startswith("L") else low
        # keep letters that are their own letter in a table (й, ё, ї decompose to и, е, і)
        if low in _CYRILLIC_FREQ or low in _LATIN_FREQ:
            b = low
        _BASE_CACHE[ch] = b
    return b


def letter_cross_entropy(letters: Counter, script: str) -> tuple[float, int]:
    """Bits per letter of the `script` letters in `letters` (a Counter of characters) under the
    script's frequency table, and how many letters were scored. (nan, 0) for other scripts."""
    table = _TABLES.get(script)
    if table is None:
        return math.nan, 0
    floor = _FLOOR_BITS[script]
    bits = 0.0
    n = 0
    for ch, c in letters.items():
        if script_of(ch) != script:
            continue
        bits += c * table.get(_base_letter(ch), floor)
        n += c
    return (bits / n if n else math.nan), n
