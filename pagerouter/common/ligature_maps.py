"""Ligatures that a font's Unicode map gives as one of their letters, restored from the widths.

Some producers write a ToUnicode map that sends each ligature glyph to one of its letters:
the "ffi" glyph to "i", "Th" to "h", "fl" to "l". The text layer then reads "coeicient",
"he number", "luctuate", and triage, search and a reader copying the text all see the wrong
word. The font itself says what happened, without a dictionary:
- two codes of the font map to the same letter, and one of them is much wider than the other
  (an "i" that is three letters wide is not an "i");
- the wide code is about as wide as the letters of one ligature together (ffi = f + f + i,
  measured with the font's own widths for those letters; a ligature is a little narrower), and
  as no other ligature;
- the letter it maps to is that ligature's last letter, or its first (the font's map tells
  which: "i", "l" and "h" end ligatures and never start one).
A glyph that is wider for another reason (a swash, a small capital, an alternate) matches no
ligature's width and keeps its letter, and one exactly as wide as the letter's other case is
that case mis-mapped (a "T" read as "t"), not a ligature.

`page_ligatures(page, fonts_of)` is the per-page look-up (fonts analysed once per document);
`restore_dict` applies it to the characters of a `rawdict`, `restore_words` to a word list.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any, Callable

import pymupdf

LIGATURES = ("ff", "fi", "fl", "ffi", "ffl", "ft", "fft", "fj", "fb", "fh", "fk", "st", "ct", "Th")
"""The Latin ligatures of text faces (the f-ligatures, the historical st/ct, and Th)."""
_LAST_ONLY = {lig[-1] for lig in LIGATURES} - {lig[0] for lig in LIGATURES}  # i, l, t, j, b, h, k
_FIRST_ONLY = {lig[0] for lig in LIGATURES} - {lig[-1] for lig in LIGATURES}  # s, c, T

_WIDER = 1.15  # a code this much wider than the narrowest code of its letter is another glyph
# A ligature glyph is narrower than its letters side by side, by up to ~12% (Times' ffi: 833
# against f + f + i = 944; Garamond's ffi 790 against 837), and hardly ever wider.
_NARROWER, _BROADER = 0.15, 0.05
_MARGIN = 0.04  # and nearer to its ligature's letters than to any other ligature's by this much
_SAME = 0.01  # a code as wide as its letter's other case is that case (a capital mapped to "t")
_CHAR_MATCH = 0.06  # a character is drawn with the ligature's code when its advance is this near

_HEX = re.compile(r"<([0-9A-Fa-f]*)>")
_SECTION = re.compile(r"begin(bfchar|bfrange)(.*?)end\1", re.S)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?|\[|\]")
_SUBSET = re.compile(r"^[A-Z]{6}\+")


@dataclass(frozen=True)
class Ligature:
    """One restored glyph: `letter` is what the font's map says, `text` what it draws, `width`
    its advance in 1/1000 em."""

    letter: str
    text: str
    width: float


def _utf16(hexstr: str) -> str:
    """A CMap's hex string as text (UTF-16BE; a short one is padded on the left)."""
    try:
        return bytes.fromhex(hexstr.zfill(-(-len(hexstr) // 4) * 4)).decode("utf-16-be")
    except ValueError:  # odd digits, a lone surrogate
        return ""


def parse_to_unicode(cmap: str) -> dict[int, str]:
    """A ToUnicode CMap's code -> text (bfchar and bfrange sections)."""
    out: dict[int, str] = {}
    for kind, body in _SECTION.findall(cmap):
        if kind == "bfchar":
            hexes = _HEX.findall(body)
            for src, dst in zip(hexes[0::2], hexes[1::2]):
                if src:
                    out[int(src, 16)] = _utf16(dst)
            continue
        for entry in re.finditer(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(\[[^\]]*\]|<[0-9A-Fa-f]*>)", body):
            lo, hi, dst = int(entry.group(1), 16), int(entry.group(2), 16), entry.group(3)
            if hi - lo > 0xFFFF:
                continue
            if dst.startswith("["):
                for i, d in enumerate(_HEX.findall(dst)):
                    if lo + i <= hi:
                        out[lo + i] = _utf16(d)
                continue
            base = _utf16(dst[1:-1])
            if not base:
                continue
            for i in range(hi - lo + 1):  # the last character counts up
                out[lo + i] = base[:-1] + chr(min(0x10FFFF, ord(base[-1]) + i))
    return out


def _numbers(doc: pymupdf.Document, xref: int, key: str) -> list:
    kind, value = doc.xref_get_key(xref, key)
    if kind == "xref":
        value = doc.xref_object(int(value.split()[0]), compressed=True)
    elif kind not in ("array", "int", "float"):
        return []
    return [t if t in "[]" else float(t) for t in _NUMBER.findall(value)]


def _cid_widths(doc: pymupdf.Document, descendant: int) -> dict[int, float]:
    """A CID font's /W array as cid -> width (`c [w1 w2 ...]` and `c_first c_last w`)."""
    toks = _numbers(doc, descendant, "W")
    out: dict[int, float] = {}
    i = 0
    while i < len(toks):
        first = toks[i]
        if isinstance(first, str):  # a bracket out of place: step over it
            i += 1
            continue
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if nxt == "[":
            j = i + 2
            while j < len(toks) and toks[j] != "]":
                out[int(first) + j - i - 2] = toks[j]
                j += 1
            i = j + 1
        elif nxt is not None and i + 2 < len(toks) and not isinstance(toks[i + 2], str):
            for c in range(int(first), min(int(nxt), int(first) + 0xFFFF) + 1):
                out[c] = toks[i + 2]
            i += 3
        else:
            break
    return out


def font_widths(doc: pymupdf.Document, xref: int) -> tuple[str, dict[int, float]] | None:
    """(the font's name as MuPDF's spans give it, code -> advance width in 1/1000 em), for a
    simple font (FirstChar/Widths) or a Type0 font over Identity-H/V (its descendant's /W);
    None for other fonts (Type3 draws in its own units, other CMaps need a second map)."""
    subtype = doc.xref_get_key(xref, "Subtype")[1]
    if subtype in ("/Type1", "/TrueType", "/MMType1"):
        first = doc.xref_get_key(xref, "FirstChar")
        if first[0] != "int":
            return None
        ws = [w for w in _numbers(doc, xref, "Widths") if not isinstance(w, str)]
        name = doc.xref_get_key(xref, "BaseFont")[1]
        return _SUBSET.sub("", name.lstrip("/")), {int(first[1]) + i: w for i, w in enumerate(ws) if w > 0}
    if subtype == "/Type0" and doc.xref_get_key(xref, "Encoding")[1] in ("/Identity-H", "/Identity-V"):
        kind, value = doc.xref_get_key(xref, "DescendantFonts")
        m = re.search(r"(\d+)\s+0\s+R", value) if kind in ("array", "xref") else None
        if m is None:
            return None
        desc = int(m.group(1))
        if kind == "xref":  # the array itself is an indirect object
            m = re.search(r"(\d+)\s+0\s+R", doc.xref_object(desc))
            if m is None:
                return None
            desc = int(m.group(1))
        name = doc.xref_get_key(desc, "BaseFont")[1]
        return _SUBSET.sub("", name.lstrip("/")), _cid_widths(doc, desc)
    return None


def _convention(targets: set[str]) -> tuple[bool, bool]:
    """(ligatures map to their last letter, to their first): what the odd codes' letters allow.
    A font whose odd codes include an "i" or "l" maps to last letters; an "s" or "T", to first;
    only "f" (it both starts and ends ligatures) allows either."""
    last = bool(targets & _LAST_ONLY)
    first = bool(targets & _FIRST_ONLY)
    if last and first:
        return False, False  # not one convention: these are no ligatures
    if not last and not first:
        return True, True
    return last, first


def ligatures_of(codes: dict[int, str], widths: dict[int, float]) -> list[Ligature]:
    """The ligature glyphs of one font (merged maps of the fonts of one name): for each letter
    mapped from two or more codes, the codes much wider than its narrowest, identified by width."""
    by_letter: dict[str, list[float]] = {}
    for code, text in codes.items():
        w = widths.get(code)
        if w and len(text) == 1 and text.isalpha():
            by_letter.setdefault(text, []).append(w)
    base = {ch: min(ws) for ch, ws in by_letter.items()}
    odd = [(ch, w) for ch, ws in by_letter.items() for w in sorted(set(ws)) if w > _WIDER * base[ch]]
    if not odd:
        return []
    last, first = _convention({ch for ch, _ in odd})
    out: list[Ligature] = []
    for ch, w in odd:
        other = ch.swapcase()
        if other != ch and any(abs(w - x) <= _SAME * w for x in by_letter.get(other, ())):
            continue
        fits = []
        for lig in LIGATURES:
            if not ((last and lig[-1] == ch) or (first and lig[0] == ch)) or any(x not in base for x in lig):
                continue
            expect = sum(base[x] for x in lig)
            fits.append((abs(w - expect) / expect, (w - expect) / expect, lig))
        fits.sort()
        if (fits and -_NARROWER <= fits[0][1] <= _BROADER
                and (len(fits) == 1 or fits[1][0] - fits[0][0] >= _MARGIN)):
            out.append(Ligature(ch, fits[0][2], w))
    return out


def _doc_cache(doc: pymupdf.Document) -> dict[str, dict]:
    """This open document's analyses: "fonts" (xref -> maps), "pages" (a page's font xrefs ->
    its table), "resources" (a resource dictionary -> its table), so each font is read once and
    pages of the same fonts share their table."""
    cache = getattr(doc, "_pagerouter_ligatures", None)
    if cache is None:
        cache = {"fonts": {}, "pages": {}, "resources": {}}
        try:
            doc._pagerouter_ligatures = cache
        except AttributeError:
            pass
    return cache


def _font_maps(doc: pymupdf.Document, xref: int) -> tuple[str, dict[int, str], dict[int, float]] | None:
    cache = _doc_cache(doc)["fonts"]
    if xref not in cache:
        got = None
        try:
            kind, value = doc.xref_get_key(xref, "ToUnicode")
            if kind == "xref":
                named = font_widths(doc, xref)
                if named is not None:
                    cmap = doc.xref_stream(int(value.split()[0])) or b""
                    got = (named[0], parse_to_unicode(cmap.decode("latin-1")), named[1])
        except Exception:  # noqa: BLE001 - a damaged font dictionary: its text stays as MuPDF reads it
            got = None
        cache[xref] = got
    return cache[xref]


def page_ligatures(page: pymupdf.Page, fonts_of: Callable[[pymupdf.Page], list]) -> dict[str, dict[str, list[Ligature]]]:
    """font name -> letter -> its ligature glyphs, for the fonts of `page` that map ligatures to
    one letter ({} on almost every page: then nothing else is done). Fonts of one name (a
    producer that embeds the face twice, simple and CID) are judged together. `fonts_of(page)`
    lists the page's fonts (`get_fonts()`); it is asked once per resource dictionary: listing
    walks the page's resources, and most documents share one dictionary between their pages."""
    doc = page.parent
    if doc is None or not doc.is_pdf:
        return {}
    cache = _doc_cache(doc)
    try:
        res = doc.xref_get_key(page.xref, "Resources")
    except Exception:  # noqa: BLE001
        res = ("null", "null")
    shared = res if res[0] in ("xref", "dict") else None  # inherited from the page tree: not shared
    if shared is not None and shared in cache["resources"]:
        return cache["resources"][shared]
    key = tuple(sorted({f[0] for f in fonts_of(page)}))
    if key not in cache["pages"]:
        cache["pages"][key] = _table(doc, key) if key else {}
    if shared is not None:
        cache["resources"][shared] = cache["pages"][key]
    return cache["pages"][key]


def _table(doc: pymupdf.Document, xrefs: tuple[int, ...]) -> dict[str, dict[str, list[Ligature]]]:
    """The ligature table of a set of fonts (`page_ligatures`)."""
    merged: dict[str, tuple[dict[int, str], dict[int, float]]] = {}
    for xref in xrefs:
        maps = _font_maps(doc, xref)
        if maps is None:
            continue
        name, codes, widths = maps
        # codes of two fonts may collide: offset each font's codes apart before merging
        codes_m, widths_m = merged.setdefault(name, ({}, {}))
        off = len(codes_m) and (max(codes_m) + 1)
        codes_m.update({c + off: t for c, t in codes.items()})
        widths_m.update({c + off: w for c, w in widths.items()})
    out: dict[str, dict[str, list[Ligature]]] = {}
    for name, (codes, widths) in merged.items():
        for lig in ligatures_of(codes, widths):
            out.setdefault(name, {}).setdefault(lig.letter, []).append(lig)
    return out


def restore_char(c: dict, span: dict, horizontal: bool, ligs: dict[str, list[Ligature]]) -> str:
    """A `rawdict` character's text: its ligature's letters when it is drawn as wide as one."""
    ch = c["c"]
    found = ligs.get(ch)
    size = span.get("size") or 0
    if not found or size <= 0:
        return ch
    x0, y0, x1, y1 = c["bbox"]
    advance = (x1 - x0 if horizontal else y1 - y0) / size * 1000
    best = min(found, key=lambda g: abs(advance - g.width))
    return best.text if abs(advance - best.width) <= _CHAR_MATCH * best.width else ch


def restore_dict(raw: dict[str, Any], table: dict[str, dict[str, list[Ligature]]]) -> dict[str, Any]:
    """A `rawdict` made a `dict` (each span's `text` from its characters, ligatures restored),
    in place."""
    for block in raw.get("blocks", ()):
        for line in block.get("lines", ()):
            dx, dy = line.get("dir", (1.0, 0.0))
            horizontal = abs(dx) >= abs(dy)
            for span in line.get("spans", ()):
                chars = span.pop("chars", ())
                ligs = table.get(span.get("font", ""))
                if ligs:
                    span["text"] = "".join(restore_char(c, span, horizontal, ligs) for c in chars)
                else:
                    span["text"] = "".join(c["c"] for c in chars)
    return raw


def restored_spots(raw: dict[str, Any], table: dict[str, dict[str, list[Ligature]]]) -> list[tuple]:
    """Every character of the lines that hold a restored ligature, as (x0, y0, x1, y1, text as
    read, text restored): what a word list needs to be mended (`restore_words`)."""
    out: list[tuple] = []
    for block in raw.get("blocks", ()):
        for line in block.get("lines", ()):
            dx, dy = line.get("dir", (1.0, 0.0))
            horizontal = abs(dx) >= abs(dy)
            row: list[tuple] = []
            changed = False
            for span in line.get("spans", ()):
                ligs = table.get(span.get("font", ""))
                for c in span.get("chars", ()):
                    t = restore_char(c, span, horizontal, ligs) if ligs else c["c"]
                    changed = changed or t != c["c"]
                    row.append((*c["bbox"], c["c"], t))
            if changed:
                out.extend(row)
    return out


def restore_words(words: list[tuple], spots: list[tuple]) -> list[tuple]:
    """`extractWORDS` tuples with the restored ligatures of `spots` put back: a word whose
    characters (those centred in its box, in order) read as the word does takes their
    restored text."""
    if not spots:
        return words
    by_y = sorted(((s[1] + s[3]) / 2, (s[0] + s[2]) / 2, s) for s in spots)
    ys = [b[0] for b in by_y]
    out = []
    for w in words:
        x0, y0, x1, y1, text = w[:5]
        lo, hi = bisect.bisect_left(ys, y0), bisect.bisect_right(ys, y1)
        inside = sorted((b for b in by_y[lo:hi] if x0 <= b[1] <= x1), key=lambda b: b[1])
        inside = [b[2] for b in inside]
        if inside and any(s[4] != s[5] for s in inside):
            read = "".join(s[4] for s in inside if not s[4].isspace())
            if read == text:
                w = (x0, y0, x1, y1, "".join(s[5] for s in inside if not s[4].isspace()), *w[5:])
        out.append(w)
    return out
