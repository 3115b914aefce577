"""Text drawn in ways that fool a line reader: letter-spaced runs and overprinted copies.

Two producer habits turn one heading into garbage for a reader of MuPDF's lines:

- *letter spacing* (tracking): `ANNUAL REPORT` drawn one glyph at a time with wide gaps, or as
  one string with character spacing (Tc), or written with a space after every letter. MuPDF
  puts a space between every two letters (`A N N U A L`) and, where the word gap is wide,
  cuts the run into two lines. `spaced_letters` recognises such text from its words (nearly
  all one letter long); `respace` rebuilds the words from the glyphs' positions: the gap
  between two letters of a word is the tracking, a word break is wider by a space advance.
- *overprinting* (fake bold): the same text drawn 2-4 times, each copy shifted by a fraction
  of a point. MuPDF reads each copy as its own line (`Title` / `Title`), or, when every word
  was printed twice, as odd lines that share words (`Results ofof the`). `drop_overprints`
  keeps one copy and marks it bold (what the reader sees).

Glyph positions come from a `GlyphSource` (the page's characters in a box, in the reading
frame); `page_glyphs` makes one from a page. It is asked only about lines that look
letter-spaced or fragments that overlap on one baseline, so ordinary pages never pay for it.
Without one (the furniture pre-scan, pure tests), whole copies are still dropped and a
letter-spaced run is rebuilt where its text shows the word breaks (two or more spaces).
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from typing import Callable, Protocol, Sequence

import pymupdf

from ..config.textlayer import TextLayerConfig
from ..common.geometry import BBox
from ..common.ligature_maps import restore_char
from ..common.pagetext import TEXT_FLAGS, text_ligatures



class Line(Protocol):
    """What this module reads of a `lines.Line` (lines.py imports this module, so the class
    itself is not imported here)."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    bold: bool
    chars: int
    seq: tuple[int, int]

    @property
    def bbox(self) -> BBox: ...

    @property
    def width(self) -> float: ...

Glyph = tuple[float, float, float, float, str]
"""x0, y0, x1, y1 (reading frame) and the character."""
GlyphSource = Callable[[BBox], Sequence[Glyph]]

_MAX_LOOKUPS = 24
"""Glyph look-ups a page may make (each reads the page's characters in a box, about a
millisecond): a page full of spaced-out text falls back to the text-only reading after that."""
_VISIBLE = 16 | 32  # char_flags: filled or stroked (lines.py skips invisible text the same way)
_WORD_BREAK = re.compile(r"\s{2,}")


def page_glyphs(page: pymupdf.Page, to_frame: pymupdf.Matrix | None, from_frame: pymupdf.Matrix | None) -> GlyphSource:
    """A GlyphSource for `page`: visible characters whose box lies in a frame box, extracted
    with the text dict's flags (so the characters are those of its lines). `to_frame` /
    `from_frame`: the reading frame's matrices (None: the unrotated page)."""
    left = [_MAX_LOOKUPS]
    ligatures = text_ligatures(page)  # the characters read as the page's dict reads them

    def glyphs(box: BBox) -> list[Glyph]:
        if left[0] <= 0:
            return []
        left[0] -= 1
        r = pymupdf.Rect(box)
        if from_frame is not None:
            r = r * from_frame
        d = page.get_text("rawdict", clip=r + (-1, -1, 1, 1), flags=TEXT_FLAGS)
        out: list[Glyph] = []
        for b in d.get("blocks", ()):
            for ln in b.get("lines", ()):
                dx, dy = ln.get("dir", (1.0, 0.0))
                for s in ln.get("spans", ()):
                    if s.get("alpha", 255) == 0 or not s.get("char_flags", _VISIBLE) & _VISIBLE:
                        continue
                    ligs = ligatures.get(s.get("font", ""))
                    for c in s.get("chars", ()):
                        q = pymupdf.Rect(c["bbox"])
                        if to_frame is not None:
                            q = q * to_frame
                        t = restore_char(c, s, abs(dx) >= abs(dy), ligs) if ligs else c["c"]
                        out.append((q.x0, q.y0, q.x1, q.y1, t))
        return out

    return glyphs


# ---------------------------------------------------------------------- letter spacing
def spaced_letters(text: str) -> bool:
    """Text that reads as letter-spaced: four or more words of letters and digits, none longer
    than three, at least half of them a single letter (where the tracking is small MuPDF keeps
    some neighbours together: `F R AG I LE`).

    A prose line never looks like this (it has longer words); a formula has operators; a row
    of single-letter table cells can, and is left alone by `respace` when its gaps are wider
    than tracking."""
    t = text.strip()
    # a cheap screen first (every line of every page passes here): three spaces in 8 characters
    if len(t) < 7 or t.count(" ", 0, 8) < 3:
        return False
    toks = t.split()
    if len(toks) < 4 or any(len(w) > 3 or not w.isalnum() for w in toks):
        return False
    singles = sum(1 for w in toks if len(w) == 1)
    letters = sum(1 for ch in t if ch.isalpha())
    return singles >= 0.5 * len(toks) and letters >= 0.5 * (len(t) - t.count(" "))


def _letters_apart(text: str) -> bool:
    """Every word one letter (a short letter-spaced word), or letter-spaced text."""
    toks = text.split()
    return bool(toks) and (all(len(w) == 1 and w.isalnum() for w in toks) or spaced_letters(text))


def letter_pitch(ln: Line) -> float:
    """Advance plus tracking of one letter of a letter-spaced line."""
    n = len(ln.text.replace(" ", ""))
    return ln.width / n if n else ln.width


def join_spaced(a: Line, b: Line, gap: float, cfg: TextLayerConfig) -> bool:
    """Two letter-spaced fragments on one baseline, one word gap apart (`A N N U A L` and
    `R E P O R T` that MuPDF cut at the wide word gap)."""
    if not (cfg.letter_spacing and a.size == b.size and a.bold == b.bold):
        return False
    # one of them long enough to tell; the other may be a short word (`O F`, `A`)
    if not (_letters_apart(a.text) and _letters_apart(b.text)) or not (spaced_letters(a.text) or spaced_letters(b.text)):
        return False
    return gap <= cfg.letter_spacing_join_pitches * max(letter_pitch(a), letter_pitch(b))


def respace(ln: Line, glyphs: GlyphSource | None, cfg: TextLayerConfig) -> str | None:
    """The words of a letter-spaced line (`ANNUAL REPORT`), or None to leave it as it is.

    From the glyphs: the run's letter gap is the median gap between neighbouring letters (most
    gaps are inside words); a gap wider by `letter_spacing_word_gap_em` is a word break. A run
    whose letter gap is wider than tracking (`letter_spacing_max_track_em`) is not a word.
    Without glyphs, two or more spaces in the text are the word breaks (a producer that wrote
    the tracking as spaces, or fragments this module joined); a run without them is left."""
    em = max(ln.size, 1.0)
    want = "".join(ln.text.split())
    letters: list[Glyph] = []
    if glyphs is not None:
        y0, y1 = ln.y0 - 1.0, ln.y1 + 1.0
        letters = sorted((g for g in glyphs(ln.bbox) if not g[4].isspace() and y0 <= (g[1] + g[3]) / 2 <= y1),
                         key=lambda g: g[0])
    if letters and "".join(g[4] for g in letters) == want:
        gaps = [b[0] - a[2] for a, b in zip(letters, letters[1:])]
        track = statistics.median(gaps) if gaps else 0.0
        if track > cfg.letter_spacing_max_track_em * em:
            return None
        words, cur = [], letters[0][4]
        for g, gap in zip(letters[1:], gaps):
            if gap > track + cfg.letter_spacing_word_gap_em * em:
                words.append(cur)
                cur = ""
            cur += g[4]
        return " ".join([*words, cur])
    parts = _WORD_BREAK.split(ln.text.strip())
    if len(parts) < 2:
        return None
    return " ".join("".join(p.split()) for p in parts)


# ---------------------------------------------------------------------- overprinting
def _tol(ln: Line, cfg: TextLayerConfig) -> float:
    return min(cfg.overprint_max_offset_pt, 0.15 * max(ln.size, 1.0))


def drop_overprints(row: list[Line], glyphs: GlyphSource | None, cfg: TextLayerConfig) -> list[Line]:
    """The fragments of one baseline row (sorted by x0) with overprinted copies removed.

    A fragment with the same text as an earlier one, within `overprint_max_offset_pt` on both
    ends and the baseline, is a copy: dropped, and the kept one marked bold if the copy was
    shifted (an exact repeat looks like one print). Fragments still overlapping each other
    after that (copies MuPDF cut differently: `Results` / `Results ofof the` / `the Year`) are
    rebuilt from the glyphs, each glyph kept once, if that shows they are copies (a quarter
    or more of the glyphs repeat); text drawn over other text stays as it is."""
    if len(row) < 2:
        return row
    keep: list[Line] = []
    for ln in row:
        tol = _tol(ln, cfg)
        text = ln.text.strip()
        copy = None
        for k in reversed(keep):
            if k.x0 < ln.x0 - tol:
                break  # sorted by x0: nothing further back starts close enough
            if abs(k.x1 - ln.x1) <= tol and abs(k.y1 - ln.y1) <= tol and k.text.strip() == text:
                copy = k
                break
        if copy is None:
            keep.append(ln)
        elif max(abs(copy.x0 - ln.x0), abs(copy.y1 - ln.y1)) > 0.05:
            copy.bold = True
    if glyphs is None or len(keep) < 2:
        return keep
    out: list[Line] = []
    cluster = [keep[0]]
    right = keep[0].x1
    for ln in keep[1:]:
        if ln.x0 < right - 0.3 * max(ln.size, 1.0):
            cluster.append(ln)
            right = max(right, ln.x1)
            continue
        out += _rebuilt(cluster, glyphs, cfg)
        cluster, right = [ln], ln.x1
    return out + _rebuilt(cluster, glyphs, cfg)


def _rebuilt(cluster: list[Line], glyphs: GlyphSource, cfg: TextLayerConfig) -> list[Line]:
    """Overlapping fragments as one line with each overprinted glyph once, or as they were."""
    if len(cluster) < 2:
        return cluster
    x0 = min(ln.x0 for ln in cluster)
    y0 = min(ln.y0 for ln in cluster)
    x1 = max(ln.x1 for ln in cluster)
    y1 = max(ln.y1 for ln in cluster)
    main = max(cluster, key=lambda ln: ln.chars)
    tol = _tol(main, cfg)
    found = sorted((g for g in glyphs((x0, y0, x1, y1)) if y0 - 1 <= (g[1] + g[3]) / 2 <= y1 + 1), key=lambda g: g[0])
    kept: list[Glyph] = []
    inked = dropped = 0
    for g in found:
        ink = not g[4].isspace()
        inked += ink
        copy = False
        for k in reversed(kept):
            if k[0] < g[0] - tol:
                break
            if k[4] == g[4] and abs(k[3] - g[3]) <= tol:
                copy = True
                break
        if copy:
            dropped += ink
        else:
            kept.append(g)
    if not inked or dropped < 0.25 * inked:
        return cluster
    text = " ".join("".join(g[4] for g in kept).split())
    # a copy of the main fragment's Line (its size and monospace flag), not a new Line(): lines.py
    # imports this module, so naming the class here would be an import cycle
    return [dataclasses.replace(main, x0=x0, y0=y0, x1=x1, y1=y1, text=text, bold=True, horizontal=True,
                                chars=len(text.replace(" ", "")), role=None, parts=[],
                                seq=min(ln.seq for ln in cluster))]
