"""Language-neutral statistics of a text: scripts, tokens, repetition, variety, garbage.

Used by the checks (is this reading plausible?) and the vote (how to tokenise). Nothing here
assumes English: words are whitespace-separated tokens, except in scripts written without
spaces (Han, Kana, Thai), where each character is a token.
"""

from __future__ import annotations

import unicodedata
import zlib
from collections import Counter

from ..common.unicode_scripts import JAPANESE, KANA, NO_SPACE_SCRIPTS, letter_script

COMPANION_SCRIPTS: dict[str, frozenset[str]] = {
    "Latin": frozenset({"Latin", "Greek"}),  # Greek letters are normal in Latin science text (μm, α)
    "Greek": frozenset({"Greek", "Latin"}),
    "Cyrillic": frozenset({"Cyrillic"}),
    "Han": frozenset({"Han", KANA, "Hangul"}),
    KANA: frozenset({KANA, "Han"}),  # no page script given and kana are the most common letters
    JAPANESE: frozenset({KANA, "Han"}),  # the page script of Kana+Han pages (triage and OCR)
    "Hangul": frozenset({"Hangul", "Han"}),
    "Arabic": frozenset({"Arabic"}),
    "Hebrew": frozenset({"Hebrew"}),
    "Devanagari": frozenset({"Devanagari"}),
    "Thai": frozenset({"Thai"}),
}
"""Scripts that normally appear together with a page's main script."""


def alnum_count(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


def _is_no_space(ch: str) -> bool:
    return letter_script(ch) in NO_SPACE_SCRIPTS


def tokens(text: str, keep_newlines: bool = False) -> list[str]:
    """Whitespace tokens; characters of no-space scripts become one token each.

    With `keep_newlines`, each line break is a "\\n" token (the vote keeps line structure).
    """
    out: list[str] = []
    lines = text.split("\n") if keep_newlines else [text]
    for li, line in enumerate(lines):
        if keep_newlines and li and out and out[-1] != "\n":
            out.append("\n")
        for word in line.split():
            if not any(_is_no_space(c) for c in word):
                out.append(word)
                continue
            buf = ""
            for c in word:
                if _is_no_space(c):
                    if buf:
                        out.append(buf)
                        buf = ""
                    out.append(c)
                else:
                    buf += c
            if buf:
                out.append(buf)
    while out and out[-1] == "\n":
        out.pop()
    return out


def join_tokens(toks: list[str]) -> str:
    """Inverse of `tokens`: spaces between tokens except between no-space-script characters."""
    parts: list[str] = []
    prev = ""
    for t in toks:
        if t == "\n":
            parts.append("\n")
            prev = ""
            continue
        if prev and not (_is_no_space(prev[-1]) and _is_no_space(t[0])):
            parts.append(" ")
        parts.append(t)
        prev = t
    return "".join(parts).strip()


def longest_char_run(text: str, ignore: str = "") -> tuple[str, int]:
    """The longest run of one repeated character (ignoring characters in `ignore`)."""
    best, best_len, prev, run = "", 0, "", 0
    for ch in text:
        run = run + 1 if ch == prev else 1
        prev = ch
        if run > best_len and ch not in ignore:
            best, best_len = ch, run
    return best, best_len


def tandem_repeat(toks: list[str], min_period: int, max_period: int) -> tuple[int, int, int]:
    """Longest back-to-back repetition of a unit of `min_period..max_period` tokens.

    Returns (period, repeats, start index): `repeats` copies of toks[start:start+period] in a
    row. O(len * max_period): for each period p count positions where toks[i] == toks[i-p].
    """
    best = (0, 1, 0)
    n = len(toks)
    for p in range(min_period, max_period + 1):
        run = 0
        for i in range(p, n):
            if toks[i] == toks[i - p]:
                run += 1
                reps = run // p + 1
                if reps > best[1]:
                    best = (p, reps, i - run - p + 1)
            else:
                run = 0
    return best


def most_repeated_line(text: str, min_chars: int) -> tuple[str, int, float]:
    """The most frequent line (normalised spacing) with at least `min_chars` letters/digits,
    its count, and the share of the text's letters/digits its copies hold."""
    counts = Counter(
        " ".join(line.split()) for line in text.splitlines() if alnum_count(line) >= min_chars
    )
    if not counts:
        return "", 0, 0.0
    line, n = counts.most_common(1)[0]
    return line, n, n * alnum_count(line) / max(1, alnum_count(text))


def unique_ngram_rate(toks: list[str], n: int = 3) -> float:
    """Distinct n-grams / all n-grams (1.0 for text too short to have any)."""
    grams = [tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 1.0


def compression_ratio(text: str) -> float:
    """zlib size / raw size of the whitespace-normalised text (low = repetitive)."""
    raw = " ".join(text.split()).encode("utf-8")
    if not raw:
        return 1.0
    return len(zlib.compress(raw, 9)) / len(raw)


ODD_SYMBOLS = set("~^`\\{}|¤¦¨©®™¬¯´¸¶§¢µ¿¡÷×±¹²³¼½¾□■◆◇○●�")
"""Symbols that are rare in running text of any language but common in OCR garbage.
(`|` is here: Markdown table pipes are removed before the language checks.)"""


def _is_punct(c: str) -> bool:
    return unicodedata.category(c).startswith("P")


def _core(token: str) -> str:
    """The token without leading/trailing punctuation (any script's: "，" "。" "؟" too)."""
    i, j = 0, len(token)
    while i < j and _is_punct(token[i]):
        i += 1
    while j > i and _is_punct(token[j - 1]):
        j -= 1
    return token[i:j]


def is_wordlike(token: str) -> bool:
    """A word (letters of one script, with combining marks and inner ' - . ·) or a number."""
    core = _core(token)
    if not core:
        return False
    if all(c.isdigit() or c in ".,:/-%" for c in core):
        return any(c.isdigit() for c in core)
    scripts = {letter_script(c) for c in core if c.isalpha()}
    if len(scripts) != 1:
        return False
    inner_ok = all(
        c.isalpha() or c.isdigit() or unicodedata.category(c).startswith("M") or c in "'’-.·" for c in core
    )
    # Letters with a few digits are normal (H2O, A4, 3rd, COVID-19); digits must not dominate.
    digits = sum(c.isdigit() for c in core)
    letters = sum(c.isalpha() for c in core)
    return inner_ok and letters > 0 and digits <= letters + 1


def strip_table_syntax(text: str) -> str:
    """Text without Markdown table pipes and separator rows (they are layout, not language)."""
    lines = [ln for ln in text.splitlines() if not (ln.strip() and set(ln.strip()) <= set("|-: "))]
    return "\n".join(lines).replace("|", " ")


def wordlike_share(text: str) -> tuple[float, int]:
    """Share of tokens holding a letter or digit that look like words/numbers; and that count.

    Tokens come from `tokens` (one per character in Han/Kana/Thai), so unspaced scripts are
    judged per character, not as one giant "word"."""
    toks = [t for t in tokens(text) if any(c.isalnum() for c in t)]
    if not toks:
        return 1.0, 0
    good = sum(is_wordlike(t) for t in toks)
    return good / len(toks), len(toks)


def symbol_share(text: str) -> float:
    """Share of non-space characters that are odd symbols (ODD_SYMBOLS, private-use, control)."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    odd = sum(c in ODD_SYMBOLS or unicodedata.category(c) in ("Co", "Cc", "Cn", "So") for c in chars)
    return odd / len(chars)


def char_error_rate(reference: str, hypothesis: str) -> float:
    """Levenshtein distance / reference length on whitespace-normalised text (for tests, benchmarks)."""
    ref = " ".join(reference.split())
    hyp = " ".join(hypothesis.split())
    if not ref:
        return 0.0 if not hyp else 1.0
    prev = list(range(len(hyp) + 1))
    for i, rc in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, hc in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (rc != hc))
        prev = cur
    return prev[-1] / len(ref)
