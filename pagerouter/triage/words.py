"""Does a text layer read like language? Script-aware measurements of one page's text.

The failures to catch: fonts without a Unicode map (glyph ids `/31 /8`, `(cid:12)`, control
codes, U+FFFD, private-use characters), broken maps that still produce valid Unicode
(UTF-8 read as Latin-1 `Ã¼`, shifted or scrambled letter maps `7KH FRPPLWWHH`), and
nothing else: German, Czech, Russian, Greek, Chinese or Arabic text must score as healthy.
So every word test is a property all scripts' real words share (one script per word, few
case switches, vowels and bounded consonant runs for alphabets that write vowels), never a
dictionary of one language.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from ..config.triage import TriageConfig
from ..common.unicode_scripts import CJK_SCRIPTS, SCRIPT_NAMES, dominant_script, script_of
from .char_model import CharScore, char_model_scores
from .letter_frequency import letter_cross_entropy

_BAD_CHARS = re.compile(
    "[\ufffd\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"  # replacement, private use
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"  # control codes (tab/newline/CR are whitespace)
)
_CID = re.compile(r"\(cid:\d+\)")
# a token made only of glyph-id names: /31, /g12, /G7/G8 (not dates or fractions: `12/05`)
_GLYPH_IDS = re.compile(r"(?:^|(?<=\s))(?:/[A-Za-z]{0,3}\d{1,5})+(?=\s|$)")
# UTF-8 bytes decoded as Latin-1 / CP1252: a lead byte (Â-ß for 2-byte sequences, à-ï for
# 3-byte ones) followed by continuation bytes (0x80-0xBF, or their CP1252 glyphs € ‚ ƒ „ … ™ ...).
_CONT = "\u0080-\u00bf\u20ac\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u017d\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u017e\u0178"
_MOJIBAKE = re.compile(f"[\u00c2-\u00df][{_CONT}]|[\u00e0-\u00ef][{_CONT}]{{2}}")
_TOKEN = re.compile(r"\w+")
_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")

# Vowels of alphabets that write them (Latin incl. accented forms, Greek, Cyrillic); y counts.
_VOWELS = (
    "aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœāăąēĕėęěīĭįıōŏőūŭůűųǎǐǒǔạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹơư"
    "αεηιουωάέήίόύώϊϋΐΰ"
    "аеёиоуыэюяіїєў"
)
_NON_VOWEL_RUN = re.compile(f"[^{_VOWELS}]+")
_HAS_VOWEL = re.compile(f"[{_VOWELS}]")
_SYLLABIC = re.compile("[rlŕĺ]")  # Czech/Slovak/Serbo-Croatian words like `krk`, `smrt`, `vlk`
_ALPHABETS = frozenset({"Latin", "Cyrillic", "Greek"})
_ABJADS_ETC = SCRIPT_NAMES - _ALPHABETS  # scripts where these vowel tests do not apply


@dataclass
class TextQuality:
    """Measurements of one text; shares are of the counts named in their docstrings."""

    nonspace: int = 0
    bad_chars: int = 0  # replacement, private-use, control, (cid:N) and glyph-id characters
    words: int = 0  # letter words judged
    plausible_words: int = 0
    letters: int = 0
    mojibake: int = 0  # UTF-8-as-Latin-1 sequences
    cross_entropy: float = math.nan  # bits/letter of the dominant alphabet's letters
    entropy_letters: int = 0
    script: str | None = None
    scripts: dict[str, int] = field(default_factory=dict)
    implausible_examples: list[str] = field(default_factory=list)
    mixed_script_words: int = 0  # words mixing a non-Latin script's letters with another script's
    mixed_examples: list[str] = field(default_factory=list)
    # an ASCII digit, hyphen or other ASCII mark between two letters of a script that writes no
    # such thing inside its words (Thai, Devanagari, Arabic...): a font map gone wrong
    broken_joins: int = 0
    join_examples: list[str] = field(default_factory=list)
    # per character script with enough letters: its letters under the script's character model
    # (`modeled=False` for scripts without one)
    char_scores: dict[str, CharScore] = field(default_factory=dict)

    @property
    def bad_char_share(self) -> float:
        return self.bad_chars / self.nonspace if self.nonspace else 0.0

    @property
    def plausible_word_share(self) -> float:
        return self.plausible_words / self.words if self.words else 1.0

    @property
    def mixed_script_share(self) -> float:
        return self.mixed_script_words / self.words if self.words else 0.0

    @property
    def mojibake_share(self) -> float:
        return self.mojibake / self.letters if self.letters else 0.0


_PLAIN = re.compile(r"[A-Za-z][a-z]*|[A-Z]+")  # ASCII word: lower, Capitalised or ALL CAPS
_ASCII_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_ASCII_RUNS: dict[int, re.Pattern] = {}


def word_is_plausible(tok: str, max_consonant_run: int, max_case_switches: int) -> bool | None:
    """True/False for a letter word; None for tokens that say nothing (numbers, codes like A4)."""
    if _PLAIN.fullmatch(tok):  # fast path for the commonest case; same rules as below
        run = _ASCII_RUNS.get(max_consonant_run)
        if run is None:
            run = _ASCII_RUNS[max_consonant_run] = re.compile(f"[b-df-hj-np-tv-xz]{{{max_consonant_run + 1},}}", re.I)
        if len(tok) < 2:
            return True
        if not _ASCII_VOWEL.search(tok):
            if (tok.isupper() and len(tok) <= 6) or len(tok) <= 3:
                return True
            return bool(_SYLLABIC.search(tok.lower())) and len(tok) <= 6
        return run.search(tok) is None
    letters = _LETTER.findall(tok)
    if not letters:
        return None
    if len(letters) != len(tok):
        # letters mixed with digits/underscores: only many alternations are suspicious (`a1b2c3`)
        kinds = ["L" if _LETTER.match(c) else "D" for c in tok]
        switches = sum(1 for a, b in zip(kinds, kinds[1:]) if a != b)
        return False if switches >= 3 else None
        # (codes like H2O, A4, 10th, mp3 stay neutral)
    scripts = {script_of(c) for c in tok}
    if None in scripts:  # letters of no known script (symbols fonts, rare scripts): neutral
        return None
    if len(scripts) > 1 and not scripts <= CJK_SCRIPTS:
        return False  # Latin and Cyrillic letters in one word: homoglyph garbage or mojibake
    script = next(iter(scripts))
    if script in _ABJADS_ETC:
        return True  # Han, Arabic, Hebrew, Indic...: the script check above is what we can afford
    if not tok.isascii():
        # compatibility forms (full-width Ｗｏｒｄ, math italic 𝑤𝑜𝑟𝑑, ligatures ﬁ) are judged as the
        # letters they stand for; NFKC leaves real accented letters (and Latin-1 mojibake) alone
        tok = unicodedata.normalize("NFKC", tok)
    # lower->upper switches: Hello 0, McDonald 1, iPhone 1, rIEnD 2, tHiS 2
    switches = sum(1 for a, b in zip(tok, tok[1:]) if a.islower() and b.isupper())
    if switches > max_case_switches:
        return False
    if len(tok) < 2:
        return True
    low = tok.lower()
    if not _HAS_VOWEL.search(low):
        if tok.isupper() and len(tok) <= 6:
            return True  # acronyms: HTML, PDF, NYC
        if len(tok) <= 3:
            return True  # km, mg, bzw, Nr
        return bool(_SYLLABIC.search(low)) and len(tok) <= 6
    if script == "Latin" and len(tok) >= 4:
        non_ascii = sum(1 for c in tok if ord(c) > 127)
        if non_ascii >= 0.6 * len(tok):
            return False  # `Ïðèâåò`: a Cyrillic code page read as Latin-1
    longest = max((len(r) for r in _NON_VOWEL_RUN.findall(low)), default=0)
    return longest <= max_consonant_run


def measure_text(
    text: str, *, max_words: int, max_consonant_run: int, max_case_switches: int, min_char_model_letters: int = 1
) -> TextQuality:
    """All text-only measurements of one page's text.

    Character classes are counted once over the distinct characters of a Counter (built in C),
    not with one regex pass per class: a dense page has 8k characters but ~100 distinct ones.
    """
    q = TextQuality()
    cid = _CID.findall(text) if "(cid:" in text else []
    if cid:
        text = _CID.sub(" ", text)
    counts = Counter(text)
    q.nonspace = len(text) - sum(counts.get(c, 0) for c in " \n\t\r\u00a0")
    bad = sum(n for ch, n in counts.items() if _BAD_CHARS.match(ch))
    gid = _GLYPH_IDS.findall(text) if "/" in counts else []
    q.bad_chars = bad + sum(map(len, cid)) + sum(len(g) for g in gid)
    q.nonspace += sum(map(len, cid))  # the markers stood for characters
    if any("\u00c2" <= ch <= "\u00ef" for ch in counts):
        q.mojibake = _MOJIBAKE.subn("", text)[1]
    scripts: dict[str, int] = {}
    for ch, n in counts.items():
        sc = script_of(ch)
        if sc is not None:
            scripts[sc] = scripts.get(sc, 0) + n
    q.scripts = scripts
    q.letters = sum(scripts.values())
    q.script = dominant_script(scripts).script
    alph = max((s for s in scripts if s in ("Latin", "Cyrillic")), key=lambda s: scripts[s], default=None)
    if alph is not None:
        q.cross_entropy, q.entropy_letters = letter_cross_entropy(counts, alph)
    q.char_scores = char_model_scores(text, scripts, min_char_model_letters)
    if any(sc in _NO_INNER_ASCII for sc in scripts):
        _count_broken_joins(text, q)
    tokens = _TOKEN.findall(text)
    if len(tokens) > max_words:
        step = len(tokens) / max_words
        tokens = [tokens[int(i * step)] for i in range(max_words)]
    seen: dict[str, bool | None] = {}
    for tok in tokens:
        verdict = seen.get(tok, 0)
        if verdict == 0:
            verdict = seen[tok] = word_is_plausible(tok, max_consonant_run, max_case_switches)
        if verdict is None:
            continue
        q.words += 1
        if verdict:
            q.plausible_words += 1
            continue
        if len(q.implausible_examples) < 5:
            q.implausible_examples.append(tok)
        if _mixes_scripts(tok):
            q.mixed_script_words += 1
            if len(q.mixed_examples) < 3:
                q.mixed_examples.append(tok)
    return q


_NO_INNER_ASCII = frozenset({
    "Thai", "Lao", "Khmer", "Myanmar", "Tibetan", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil",
    "Telugu", "Kannada", "Malayalam", "Sinhala", "Arabic",
})
"""Scripts whose words never hold an ASCII digit or hyphen between two of their own letters (their
compounds are written apart or with their own marks; numbers stand apart from words)."""
_INNER_ASCII = re.compile(r"(\S)([0-9\-_/:;=+*#@&|\\^~`<>]+)(\S)")


def _count_broken_joins(text: str, q: TextQuality) -> None:
    """`broken_joins`: ASCII digits or marks squeezed between two letters (or marks) of one
    `_NO_INNER_ASCII` script, no space on either side (`ก--มกา`, `ส3บ`). Not '.' or ',':
    abbreviations (Thai `พ.ศ.`) use them."""
    for m in _INNER_ASCII.finditer(text):
        a, b = script_of(m.group(1)), script_of(m.group(3))
        if a is not None and a == b and a in _NO_INNER_ASCII:
            q.broken_joins += 1
            if len(q.join_examples) < 3:
                lo, hi = max(0, m.start() - 3), min(len(text), m.end() + 3)
                q.join_examples.append(text[lo:hi])


_LATIN_EXTENDED = re.compile("[\u0100-\u02af\u1e00-\u1eff]")
"""Latin Extended-A/B, IPA extensions and Latin Extended Additional: letters a broken font map
lands on (`ǉ`, `ƛ`, `ɲ`) far more often than any text uses them inside another script's word."""


def _mixes_scripts(tok: str) -> bool:
    """A word of a non-Latin script with a letter of another script inside it: `поljитика`, an
    Arabic word with a `Ǆ` in it, a Han word with a Latin-extended letter. Not mathematics
    (`λx`, `TΣthe`: Greek letters beside Latin ones, at the word's edge or in a Latin word) and
    not CJK words with plain Latin in them (`使用PDF`)."""
    letters = [c for c in tok if _LETTER.match(c)]
    scripts = [script_of(c) or ("Latin" if _LATIN_EXTENDED.match(c) else None) for c in letters]
    kinds = set(scripts) - {None}
    if len(kinds) < 2:
        return False
    if kinds <= CJK_SCRIPTS | {"Latin"}:
        return any(_LATIN_EXTENDED.match(c) for c in letters)
    # a tie (a two-letter word, one letter broken) goes to the non-Latin script: a broken map
    # lands on Latin-extended letters, a word of another script does not
    main = max(kinds, key=lambda k: (scripts.count(k), k != "Latin"))
    if main == "Latin":
        return False  # Latin words with a foreign letter are left to the plausible-word share
    # a letter of another script with the word's own script on both sides of it
    inside = [i for i, sc in enumerate(scripts) if sc != main and sc is not None]
    return any(main in scripts[:i] and main in scripts[i + 1:] for i in inside) or any(
        _LATIN_EXTENDED.match(letters[i]) for i in inside)


def measure(text: str, cfg: TriageConfig):
    """`measure_text` with the configured limits (every text of a page is measured the same way)."""
    return measure_text(
        text,
        max_words=cfg.max_words_checked,
        max_consonant_run=cfg.max_consonant_run,
        max_case_switches=cfg.max_case_switches,
        min_char_model_letters=cfg.min_letters_for_char_model,
    )


_MIN_BROKEN_JOINS = 2  # one could be a stray typo; two inside words of such a script is a broken map


def quality_failures(q: TextQuality, unmapped_share: float, cfg: TriageConfig) -> list[str]:
    """Sentences for every text-quality measurement of `q` that crossed its threshold (triage's reasons)."""
    out: list[str] = []
    if q.bad_char_share > cfg.max_bad_char_share:
        out.append(
            f"{_pct(q.bad_char_share)} of the visible characters are replacement, private-use, control, "
            f"(cid:N) or glyph-id characters (bad_char_share > max_bad_char_share={cfg.max_bad_char_share}): "
            "a font without a Unicode map"
        )
    if q.words >= cfg.min_words_for_word_check and q.plausible_word_share < cfg.min_plausible_word_share:
        ex = ", ".join(repr(w) for w in q.implausible_examples[:3])
        out.append(
            f"only {_pct(q.plausible_word_share)} of {q.words} words look like {q.script or 'any script'} words "
            f"(plausible_word_share < min_plausible_word_share={cfg.min_plausible_word_share}; e.g. {ex})"
        )
    elif cfg.min_words_for_near_zero <= q.words and q.plausible_word_share <= cfg.near_zero_plausible_word_share:
        ex = ", ".join(repr(w) for w in q.implausible_examples[:3])
        out.append(
            f"only {_pct(q.plausible_word_share)} of {q.words} words look like {q.script or 'any script'} words "
            f"(<= near_zero_plausible_word_share={cfg.near_zero_plausible_word_share}; e.g. {ex})"
        )
    few = q.words < cfg.min_words_for_word_check
    if (q.mixed_script_words >= cfg.min_mixed_script_words and q.mixed_script_share > cfg.max_mixed_script_word_share) \
            or (few and q.mixed_script_words):
        # with too few words for a share, one word with another script's letter inside it is the
        # only evidence there is, and it says the map is broken
        ex = ", ".join(repr(w) for w in q.mixed_examples[:3])
        out.append(
            f"{q.mixed_script_words} of {q.words} words ({_pct(q.mixed_script_share)}) mix letters of two scripts "
            f"(> max_mixed_script_word_share={cfg.max_mixed_script_word_share}; e.g. {ex}): a font whose map turns "
            "one letter into another script's"
        )
    if q.broken_joins >= _MIN_BROKEN_JOINS:
        ex = ", ".join(repr(w) for w in q.join_examples[:3])
        out.append(
            f"{q.broken_joins} ASCII digits or marks sit inside words of {q.script or 'a'} script (e.g. {ex}; its words "
            "never hold them): a font whose map turns letters or marks into digits and hyphens"
        )
    if q.entropy_letters >= cfg.min_letters_for_frequency_check and q.cross_entropy > cfg.max_letter_cross_entropy:
        out.append(
            f"letter frequencies are untypical of any language: {q.cross_entropy:.2f} bits/letter over "
            f"{q.entropy_letters} letters (letter_cross_entropy > max_letter_cross_entropy="
            f"{cfg.max_letter_cross_entropy}): a shifted or scrambled letter map"
        )
    for script, cs in q.char_scores.items():
        # the verdict rests on the letters of prose words actually scored (an all-caps page has few)
        if not cs.modeled or cs.scored < (cfg.min_han_for_char_model if script == "Han" else cfg.min_letters_for_char_model):
            continue
        max_bits = cfg.char_model_max_bits.get(script)
        min_gain = cfg.char_model_min_context_gain.get(script)
        if max_bits is not None and cs.bits > max_bits:
            out.append(
                f"{script} letters are untypical of {script} writing: {cs.bits:.2f} bits/letter over {cs.scored} "
                f"letters under the {script} character model (> char_model_max_bits[{script!r}]={max_bits}): "
                "a shifted letter map (rare characters where common ones belong)"
            )
        elif min_gain is not None and cs.context_gain < min_gain:
            out.append(
                f"{script} letters do not follow each other the way {script} writing does: the letter context saves "
                f"{cs.context_gain:+.2f} bits/letter over {cs.scored} letters (< char_model_min_context_gain"
                f"[{script!r}]={min_gain}): a substituted letter map (letters swapped consistently)"
            )
    if q.mojibake >= cfg.min_mojibake_count and q.mojibake_share > cfg.max_mojibake_share:
        out.append(
            f"{q.mojibake} UTF-8-read-as-Latin-1 sequences like 'Ã©' ({_pct(q.mojibake_share)} of letters; "
            f"mojibake_share > max_mojibake_share={cfg.max_mojibake_share})"
        )
    if unmapped_share > cfg.max_unmapped_font_share and q.plausible_word_share < cfg.strict_plausible_word_share:
        out.append(
            f"{_pct(unmapped_share)} of the text is in fonts without a Unicode map (unmapped_font_share > "
            f"max_unmapped_font_share={cfg.max_unmapped_font_share}) and only {_pct(q.plausible_word_share)} of "
            f"words are plausible (< strict_plausible_word_share={cfg.strict_plausible_word_share})"
        )
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"
