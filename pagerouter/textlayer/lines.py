"""Visible text lines from PyMuPDF's `dict`, in displayed-page coordinates.

The unit of layout analysis here is a *line fragment*: one PyMuPDF line with only its
visible spans. Fragments on one baseline that are close together (or a lone bullet and its
text) are merged, because some producers write every word or the list bullet separately and
a lone bullet column would otherwise look like a text column to the reading-order cut.

Words and marks (the span loop of `extract_lines`): a fragment keeps one trailing space where
the PDF has one (merging must not glue "was" + "King"); smaller spans raised/lowered against
the line's dominant baseline are tagged <sup>/<sub> in the text; presentation forms and Latin
ligatures are NFKC-normalised (those code points only).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Sequence

import pymupdf

from ..config.textlayer import TextLayerConfig
from ..common.geometry import BBox, center_inside
from .glyph_runs import GlyphSource, drop_overprints, join_spaced, respace, spaced_letters
from .glyph_pairs import reader_quotes

# MuPDF per-character flags (span["char_flags"], PyMuPDF >= 1.25): glyph is filled/stroked
# (render modes 3 and 7 are neither) or lies entirely outside the clip path.
_FILLED, _STROKED, _CLIPPED = 16, 32, 64
_BOLD_FLAG = 16  # span["flags"] bit 4
_MONO_FLAG = 8  # span["flags"] bit 3
_MONO_NAMES = ("mono", "courier", "consola", "menlo", "typewriter", "cmtt", "lucidaconsole")
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")

BULLETS = "•·▪▫◦‣●○■□◆◇►▸▹➢➤✓✔❖⁃–—-*∙"
"""Glyphs that mark an unnumbered list item when they start a line and are followed by text."""

_NUMBER_MARKER = re.compile(r"^(?:\(?(?:\d{1,3}(?:\.\d{1,3})*|[a-zA-Z]|[ivxlcIVXLC]{1,6})[.)]|\(\d{1,3}\)|\([a-z]\))$")


@dataclass
class Line:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float  # dominant font size (character-weighted)
    bold: bool  # most characters bold
    mono: bool  # most characters monospaced
    horizontal: bool = True
    chars: int = 0
    role: str | None = None  # set for furniture ("header"/"footer"/"page_number")
    seq: tuple[int, int] = (0, 0)  # (MuPDF block, rank in MuPDF's order): the layer's own order
    parts: list["Line"] = field(default_factory=list, repr=False)

    @property
    def bbox(self) -> BBox:
        return (self.x0, self.y0, self.x1, self.y1)

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def yc(self) -> float:
        return (self.y0 + self.y1) / 2

    def words(self) -> int:
        return len(self.text.split())


def _span_visible(span: dict[str, Any], cfg: TextLayerConfig, invisible_too: bool = False) -> bool:
    if span.get("alpha", 255) == 0 and not invisible_too:
        return False
    cf = span.get("char_flags")
    if cf is not None:
        if not cf & (_FILLED | _STROKED) and not invisible_too:
            return False  # render mode 3 (invisible) or 7 (clip only)
        if cfg.skip_clipped_text and cf & _CLIPPED:
            return False
    return True


@functools.lru_cache(maxsize=4096)
def _style(font: str, flags: int) -> tuple[bool, bool]:
    """(bold, monospaced) for a font name and span flags; cached: pages repeat a few fonts."""
    span = {"font": font, "flags": flags}
    return _is_bold(span), _is_mono(span)


def _is_bold(span: dict[str, Any]) -> bool:
    if span.get("flags", 0) & _BOLD_FLAG:
        return True
    name = span.get("font", "").lower()
    return any(b in name for b in _BOLD_NAMES)


def _is_mono(span: dict[str, Any]) -> bool:
    if span.get("flags", 0) & _MONO_FLAG:
        return True
    name = span.get("font", "").lower().replace(" ", "")
    return any(m in name for m in _MONO_NAMES)


def extract_lines(
    textdict: dict[str, Any],
    cfg: TextLayerConfig,
    rotation_matrix: pymupdf.Matrix | None,
    hidden: Sequence[BBox] = (),
    invisible_too: bool = False,
) -> list[Line]:
    """Every visible line fragment of the page (bboxes in displayed coordinates).

    `hidden`: boxes (unrotated page space, as in the dict) of text painted over by a later
    image; spans whose centre lies in one are not shown on the page and are skipped.
    `invisible_too`: invisible (render mode 3) text is read as well (a hidden OCR layer that
    triage proved to match the scan).
    """
    out: list[Line] = []
    rot = rotation_matrix  # None for an unrotated page
    # Per-line work is kept to one pass over the spans (a dense page has 1-2k lines).
    for nb, block in enumerate(textdict.get("blocks", ())):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", ()):
            spans = [s for s in line.get("spans", ()) if s.get("text") and _span_visible(s, cfg, invisible_too)]
            if hidden and spans:
                spans = [s for s in spans if not _in_any(s["bbox"], hidden)]
            if not spans:
                continue
            marked = None
            if len(spans) == 1:
                s0 = spans[0]
                text = s0["text"]
                if text.isspace():
                    continue
                x0, y0, x1, y1 = s0["bbox"]
                size = round(s0["size"] * 2) / 2
                bold, mono = _style(s0.get("font", ""), s0.get("flags", 0))
            else:
                text = "".join(s["text"] for s in spans)
                if text.isspace():
                    continue
                x0, y0, x1, y1 = spans[0]["bbox"]
                size_w: dict[float, int] = {}
                total = bold_w = mono_w = 0
                for s in spans:
                    bx0, by0, bx1, by1 = s["bbox"]
                    if bx0 < x0:
                        x0 = bx0
                    if by0 < y0:
                        y0 = by0
                    if bx1 > x1:
                        x1 = bx1
                    if by1 > y1:
                        y1 = by1
                    w = len(s["text"].strip()) or 1
                    total += w
                    sz = round(s["size"] * 2) / 2
                    size_w[sz] = size_w.get(sz, 0) + w
                    b, m = _style(s.get("font", ""), s.get("flags", 0))
                    if b:
                        bold_w += w
                    if m:
                        mono_w += w
                size = max(size_w, key=size_w.__getitem__) if len(size_w) > 1 else next(iter(size_w))
                bold = bold_w >= 0.6 * total
                mono = mono_w >= 0.6 * total
                if len(size_w) > 1 and cfg.mark_scripts:
                    marked = _mark_scripts(spans, size, line.get("dir", (1.0, 0.0)), cfg)
            dx, dy = line.get("dir", (1.0, 0.0))
            if rot is not None:
                r = pymupdf.Rect(x0, y0, x1, y1) * rot
                x0, y0, x1, y1 = r.x0, r.y0, r.x1, r.y1
                v = pymupdf.Point(dx, dy) * pymupdf.Matrix(rot.a, rot.b, rot.c, rot.d, 0, 0)
                dx, dy = v.x, v.y
            chars = len(text.strip())
            if marked is not None:
                text = marked
            if "\u00a0" in text:
                text = text.replace("\u00a0", " ")
            if not mono and ("‘‘" in text or "’’" in text or "``" in text):
                text = reader_quotes(text)  # ‘‘x’’ / ``x'' read as “x” (glyph_pairs.py)
            if not text.isascii():
                text = unicodedata.normalize("NFC", text)
                if cfg.normalise_presentation_forms and _PRESENTATION.search(text):
                    text = _PRESENTATION.sub(_nfkc, text)
            out.append(
                Line(
                    x0, y0, x1, y1,
                    text=_edge_spaces(text),
                    size=size, bold=bold, mono=mono,
                    horizontal=abs(dy) < 0.05 and dx > 0,
                    chars=chars, seq=(nb, len(out)),
                )
            )  # fmt: skip
    return out


def _edge_spaces(text: str) -> str:
    """Text without trailing whitespace, but one space kept where there was some.

    A producer that draws each word as its own text object often ends it with a space
    ("was ", "King "): MuPDF then reports them as separate lines whose boxes touch (the box
    includes the space's advance), so the gap between them says nothing. The space char is
    the evidence: merging fragments must not lose it ("wasKing")."""
    t = text.rstrip()
    return t + " " if len(t) < len(text) else t


# Arabic presentation forms A/B, Hebrew presentation forms and the Latin ligatures: the
# glyph-shaped code points some producers map their glyphs to. NFKC gives the letters a
# reader searches for; it is applied to these runs only, because NFKC on the whole text would
# also flatten superscript digits, fractions and other compatibility characters that carry
# meaning.
_PRESENTATION = re.compile("[\ufb00-\ufb06\ufb1d-\ufdff\ufe70-\ufefe]+")


def _nfkc(m: re.Match[str]) -> str:
    return unicodedata.normalize("NFKC", m.group())


def _mark_scripts(spans: list[dict[str, Any]], size: float, direction: Sequence[float], cfg: TextLayerConfig) -> str | None:
    """The line's text with superscript/subscript spans wrapped in <sup>/<sub>, or None if none.

    A span is a script when it is smaller than the line's dominant size and its baseline
    (span origin) is shifted across the writing direction from the dominant spans' baseline:
    raised = <sup>, lowered = <sub>. Size alone (small caps, a size change on one baseline)
    or shift alone (baseline jitter) is not enough; MuPDF's superscript flag (bit 0) counts
    as a raise. The dominant spans are never marked, so a whole line never is, and a drop
    cap (bigger, not smaller) never is.
    """
    base = next((s for s in spans if round(s["size"] * 2) / 2 == size and s["text"].strip()), None)
    if base is None:
        return None
    bx, by = base["origin"]
    dx, dy = direction
    limit = cfg.script_max_size_ratio * size
    shift = cfg.script_min_shift_em * size
    segs: list[list[Any]] = []  # [kind or None, text]
    found = False
    for s in spans:
        kind = None
        t = s["text"]
        if s["size"] <= limit and t.strip() and len(t.strip()) <= cfg.script_max_chars:
            ox, oy = s["origin"]
            off = (oy - by) * dx - (ox - bx) * dy  # > 0: below the baseline (reading upright)
            if off >= shift:
                kind = "sub"
            elif off <= -shift or (s.get("flags", 0) & 1 and off < 0):
                kind = "sup"
        if kind is not None:
            found = True
        if segs and segs[-1][0] == kind and kind is not None:
            segs[-1][1] += t
        else:
            segs.append([kind, t])
    if not found:
        return None
    out = []
    for kind, t in segs:
        if kind is None:
            out.append(t)
        else:
            core = t.strip()
            lead = t[: len(t) - len(t.lstrip())]
            trail = t[len(t.rstrip()) :]
            out.append(f"{lead}<{kind}>{core}</{kind}>{trail}")
    return "".join(out)


def _in_any(bbox: Sequence[float], boxes: Sequence[Sequence[float]]) -> bool:
    """Whether the span's centre lies in one of `boxes`, give or take 1 pt."""
    return any(center_inside(bbox, b, 1.0) for b in boxes)


def is_marker_only(text: str) -> bool:
    t = text.strip()
    return (len(t) == 1 and (t in BULLETS or t in "\uf0b7\uf0a7\uf076\uf0d8")) or bool(_NUMBER_MARKER.match(t))


def merge_fragments(lines: list[Line], cfg: TextLayerConfig, glyphs: GlyphSource | None = None) -> list[Line]:
    """Merge horizontal fragments on one baseline that belong to one line of text.

    Whether the gap between two fragments of a row is inside a line is judged by the rows
    around it (within `merge_context_lines` line heights above and below), not by its width
    alone: a column gutter and a word gap can be equally wide (a 5 pt gutter, a justified line
    whose spaces MuPDF reports as 1.5 em gaps and splits the line at).
    - *gutter*: at least two neighbouring rows have text on both sides of the gap's middle and
      none crosses it. Never bridged, however narrow: two columns whose lines share a
      baseline stay two lines.
    - *inside text*: at least two neighbouring rows cross the gap's middle and they outnumber
      the gapped ones (text flows through the strip): a word gap up to `merge_justified_gap_em`,
      if both sides have one style (a bold run-in heading before its text stays apart).
    - otherwise the gap alone decides: up to `merge_gap_em`, as before.
    A lone list marker joins the text after it within `bullet_merge_gap_em`, context or not.

    Before that, overprinted copies on a row are dropped (fake bold); letter-spaced fragments
    one word gap apart join, and letter-spaced lines are rebuilt into words (glyph_runs.py;
    `glyphs` gives their glyph positions, only ever asked about such lines).
    """
    horiz = [ln for ln in lines if ln.horizontal]
    others = [ln for ln in lines if not ln.horizontal]
    if len(horiz) < 2:
        return _respaced(horiz, glyphs, cfg) + others
    # bucket by baseline so each fragment only looks at its neighbours on the same row
    horiz.sort(key=lambda ln: (ln.y1, ln.x0))
    rows: list[list[Line]] = []
    for ln in horiz:
        if rows:
            last = rows[-1][0]
            if abs(ln.y1 - last.y1) <= 0.25 * max(1.0, min(ln.height, last.height)) and _similar(ln, last):
                rows[-1].append(ln)
                continue
        rows.append([ln])
    for i, row in enumerate(rows):
        row.sort(key=lambda ln: ln.x0)
        if len(row) > 1:
            rows[i] = drop_overprints(row, glyphs, cfg)
    ycs = [row[0].yc for row in rows]
    merged: list[Line] = []
    for r, row in enumerate(rows):
        cur = row[0]
        for k in range(1, len(row)):
            nxt = row[k]
            gap = nxt.x0 - cur.x1
            em = max(cur.size, nxt.size, 1.0)
            marker = is_marker_only(cur.text)
            tight = cfg.bullet_merge_gap_em * em if marker else cfg.merge_gap_em * em
            join = -0.5 * em <= gap <= tight
            gutter = False
            # a lone marker keeps its own rule: a list's markers and texts are gapped alike on every row
            if not marker and 0.15 * em < gap <= max(tight, cfg.merge_justified_gap_em * em):
                # a gap wider than letter spacing: ask the neighbouring rows (cheap: only such gaps)
                crossed, gapped = _gap_context(rows, ycs, r, row[k - 1].x1, nxt.x0, cur.height, cfg)
                if crossed == 0 and gapped >= 2:
                    join, gutter = False, True  # a gutter other rows show: never bridged
                elif crossed >= 2 and crossed > gapped and _same_style(row[k - 1], nxt):
                    join = True  # text flows through: a (justified) word gap
            if not gutter and gap > 0.15 * em and join_spaced(cur, nxt, gap, cfg):
                # two letter-spaced words MuPDF cut at their word gap: the wide break marks the word
                cur = _join(cur, nxt, False, sep="   ")
            elif join:
                cur = _join(cur, nxt, gap > 0.15 * em)
            else:
                merged.append(cur)
                cur = nxt
        merged.append(cur)
    return _respaced(merged, glyphs, cfg) + others


def _respaced(lines: list[Line], glyphs: GlyphSource | None, cfg: TextLayerConfig) -> list[Line]:
    """`lines` with letter-spaced ones rebuilt into their words (`A N N U A L` -> `ANNUAL`)."""
    if not cfg.letter_spacing:
        return lines
    for ln in lines:
        if spaced_letters(ln.text):
            words = respace(ln, glyphs, cfg)
            if words:
                ln.text = words
    return lines


def _gap_context(
    rows: list[list[Line]], ycs: list[float], r: int, a: float, b: float, h: float, cfg: TextLayerConfig
) -> tuple[int, int]:
    """(rows crossing, rows gapped at) the gap a..b on row `r`, among the rows whose centre
    lies within `merge_context_lines` line heights of it. A row *crosses* when one of its
    lines starts before the gap (or in its first quarter: an indented first line) and runs past
    its middle, and is several gaps wide (prose, not a table cell): text flows through it. A
    line that starts deeper inside the gap does not
    cross it (a column indented by about the gutter's width starts right at the middle of an
    indented line's gap). A row is
    *gapped* when it has text ending left of the middle near `a` and text starting right of
    it near `b`."""
    mid = (a + b) / 2
    reach = cfg.merge_context_lines * max(h, 1.0)
    near = 2.0 * (b - a) + h  # a neighbour's edge this close to the gap counts for it
    crossed = gapped = 0
    y = ycs[r]
    for step in (-1, 1):
        j = r + step
        while 0 <= j < len(rows) and abs(ycs[j] - y) <= reach:
            left = right = cross = False
            for ln in rows[j]:
                if ln.x0 <= a + 0.25 * (b - a) and ln.x1 > mid and ln.x1 - ln.x0 >= 3 * (b - a):
                    cross = True
                    break
                if a - near <= ln.x1 <= mid:
                    left = True
                elif mid <= ln.x0 <= b + near:
                    right = True
            if cross:
                crossed += 1
            elif left and right:
                gapped += 1
            j += step
    return crossed, gapped


def _same_style(a: Line, b: Line) -> bool:
    return a.size == b.size and a.bold == b.bold and a.mono == b.mono


def _similar(a: Line, b: Line) -> bool:
    return 0.6 <= (a.height / b.height if b.height else 1.0) <= 1.67


def _join(a: Line, b: Line, space: bool, sep: str | None = None) -> Line:
    if sep is None:
        sep = " " if space and not a.text.endswith(" ") and not b.text.startswith(" ") else ""
    bigger = a if a.chars >= b.chars else b
    return Line(
        min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1),
        text=a.text + sep + b.text, size=bigger.size,
        bold=a.bold and b.bold if min(a.chars, b.chars) > 2 else bigger.bold,
        mono=a.mono and b.mono, horizontal=True, chars=a.chars + b.chars, seq=min(a.seq, b.seq),
    )  # fmt: skip
