"""Joining the lines of a paragraph: spaces, CJK, and hyphenation at line ends.

Rule for a line ending in a hyphen (`-`, U+2010 or the soft hyphen U+00AD) directly after
a letter, followed by a line starting with a letter:

* soft hyphen: always a line-break hyphen -> drop it and join ("inter\u00ad|national" ->
  "international");
* next line starts with an upper-case letter or a digit ("Jean-|Pierre", "COVID-|19"):
  a real hyphen -> keep it, join without space;
* the page elsewhere spells the hyphenated compound ("well-known") and never the closed
  word ("wellknown"): a real hyphen -> keep it ("well-|known" -> "well-known");
* otherwise (next line starts lower-case): a typographic hyphenation -> drop the hyphen
  ("inter-|national" -> "international"). This is the usual case in justified text; when the
  page gives no evidence either way we choose this.

Lines otherwise join with one space, except between two CJK characters (no spaces in CJK
text) and after a line that already ends in whitespace.
"""

from __future__ import annotations

import re

_HYPHENS = ("-", "\u2010", "\u00ad")
_WORD_TAIL = re.compile(r"(\w+)[-\u2010\u00ad]$")
_WORD_HEAD = re.compile(r"^(\w+)")


def is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF  # kana
        or 0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or 0xF900 <= o <= 0xFAFF
        or 0xAC00 <= o <= 0xD7AF  # hangul
        or 0x3000 <= o <= 0x303F  # CJK punctuation
        or 0xFF00 <= o <= 0xFFEF  # full-width forms
    )


def join_lines(lines: list[str], vocabulary: frozenset[str] | set[str] = frozenset()) -> str:
    """Join the lines of one paragraph into one string (see module docstring for the rule).

    `vocabulary`: lower-cased words seen on the page, hyphenated compounds included.
    """
    out = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if not out:
            out = line
            continue
        out = _join_two(out, line, vocabulary)
    return out


def _join_two(prev: str, nxt: str, vocabulary: frozenset[str] | set[str]) -> str:
    last, first = prev[-1], nxt[0]
    if last in _HYPHENS and len(prev) >= 2 and prev[-2].isalpha() and first.isalpha():
        if last == "\u00ad":
            return prev[:-1] + nxt
        if first.isupper() or first.isdigit():
            return prev + nxt
        tail = _WORD_TAIL.search(prev)
        head = _WORD_HEAD.match(nxt)
        if tail and head and vocabulary:
            compound = f"{tail.group(1)}-{head.group(1)}".lower()
            closed = f"{tail.group(1)}{head.group(1)}".lower()
            if compound in vocabulary and closed not in vocabulary:
                return prev + nxt
        return prev[:-1] + nxt
    if last == "\u00ad":
        prev = prev[:-1]
    if is_cjk(last) and is_cjk(first):
        return prev + nxt
    return prev + " " + nxt


_VOCAB_RE = re.compile(r"\w+(?:-\w+)*")


def page_vocabulary(texts: list[str]) -> frozenset[str]:
    """Lower-cased words of the page, with hyphenated compounds both whole and split."""
    words: set[str] = set()
    for t in texts:
        for w in _VOCAB_RE.findall(t.lower()):
            words.add(w)
    return frozenset(words)
