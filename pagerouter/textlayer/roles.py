"""Paragraphs from ordered lines, and their roles (heading, list item, caption, footnote, code).

List item text: bullet glyphs (•, ▪, –, -, * ...) are stripped (the Markdown renderer writes
"- "); numbered and lettered markers ("1.", "2.3", "a)", "(iv)") are kept in the text because
the number carries meaning the renderer cannot restore.

Footnotes are one block each: in a run of notes a line starting with a marker (superscript,
*, †, ‡, §, ¶, or the next number) starts the next note. Right-to-left lines (Hebrew, Arabic)
mirror the paragraph edge rules (their indent and short last line are on the other side).
Captions are moved next to the figure/table they label (`attach_captions`). Superscripts and
subscripts arrive already tagged <sup>/<sub> in the line text (lines.py) and pass through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import statistics

from ..config.textlayer import TextLayerConfig
from ..common.geometry import BBox
from .heading_levels import heading_level
from .hyphen import join_lines
from .lines import BULLETS, Line

_BULLET_RE = re.compile(r"^\s*([" + re.escape(BULLETS) + r"\uf0b7\uf0a7\uf076\uf0d8])\s*(?=\S)")
_NUMBER_RE = re.compile(r"^\s*(\(?(?:\d{1,3}(?:\.\d{1,3})*|[a-z]|[ivxlc]{1,5}|[A-Z])[.)]|\(\d{1,3}\)|\([a-z]\))\s+(?=\S)")
_CAPTION_RE = re.compile(
    r"^(?:figure|fig\.|table|tab\.|chart|exhibit|plate|scheme|listing|abbildung|abb\.|tabelle|рис\.|рисунок|таблица)"
    r"\s*[\dIVX]+[a-z]?\s*[.:\-–—]?",
    re.IGNORECASE,
)
_FOOTNOTE_RE = re.compile(r"^(?:<sup>[^<]{1,6}</sup>|[¹²³⁰⁴-⁹]{1,3}|\d{1,3}|[*†‡§¶])\s*\S")
# a marker that starts a footnote: a superscript (tagged by lines.py or a Unicode superscript
# digit), a footnote symbol, or a plain number of 1-3 digits followed by a space ("12 See");
# "2019 data" is no marker.
_FOOTNOTE_START = re.compile(
    r"^\s*(?:<sup>([^<]{1,6})</sup>|([¹²³⁰⁴-⁹]{1,3})|([*†‡§¶]{1,3})|(\d{1,3})[.)]?(?=\s+\S))"
)
_SENTENCE_END = ".!?:;\u061f\u06d4\u3002\uff01\uff1f"
_RTL_CHARS = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe]")
_LTR_CHARS = re.compile(r"[A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff]")


def is_rtl(text: str) -> bool:
    """Mostly right-to-left script (Hebrew, Arabic): the line's paragraph edges are mirrored."""
    if text.isascii():
        return False
    return len(_RTL_CHARS.findall(text)) > len(_LTR_CHARS.findall(text))


def footnote_marker(text: str) -> tuple[str, bool] | None:
    """(marker, strong) if `text` starts like a footnote; strong = superscript or symbol
    (always a new note), weak = a plain number (a new note only in sequence or after a
    sentence end: a wrapped line may start with a number)."""
    m = _FOOTNOTE_START.match(text)
    if m is None:
        return None
    if m.group(4) is not None:
        return m.group(4), False
    return next(g for g in m.groups() if g is not None), True


def list_marker(text: str) -> tuple[str, str] | None:
    """(marker, text without a bullet glyph) for a line that starts a list item, else None."""
    m = _BULLET_RE.match(text)
    if m:
        # "-5 degrees" or "--" are not bullets; a hyphen bullet needs a space after it
        if m.group(1) in "-*–—" and not text.lstrip()[1:2].isspace():
            return None
        return m.group(1), text[m.end() :]
    m = _NUMBER_RE.match(text)
    if m:
        return m.group(1), text.strip()
    return None


@dataclass
class Para:
    lines: list[Line]
    key: tuple
    marker: str | None = None
    role: str = "paragraph"
    level: int | None = None
    text: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def bbox(self) -> BBox:
        return (
            min(ln.x0 for ln in self.lines),
            min(ln.y0 for ln in self.lines),
            max(ln.x1 for ln in self.lines),
            max(ln.y1 for ln in self.lines),
        )


def starts_new(cur: Para, prev: Line, ln: Line, key: tuple, em: float, cfg: TextLayerConfig) -> bool:
    """Does `ln` (following `prev` in reading order) start a new paragraph?"""
    if key != cur.key or _list_start(ln, em, cfg):
        return True
    if abs(ln.size - prev.size) > 0.6 or ln.bold != prev.bold or ln.mono != prev.mono:
        return True
    gap = ln.y0 - prev.y1
    h = max(prev.height, ln.height)
    if gap > cfg.paragraph_gap_ratio * h or gap < -0.6 * h:
        return True
    if (
        len(cur.lines) >= 2
        and prev.text.rstrip()[-1:] in _SENTENCE_END
        and _pitch(prev, ln) > _para_pitch(cur) + cfg.paragraph_extra_pitch_ratio * h
    ):
        # more space than between the paragraph's own lines after a sentence end (fonts whose
        # line boxes overlap make the plain gap look small); a wrapped sentence never splits
        return True
    first = cur.lines[0]
    if cfg.footnote_split and _next_footnote(cur, prev, ln, ln.size <= cfg.footnote_size_ratio * em):
        return True
    # Right-to-left lines start at the right edge and a short last line ends early on the
    # left: every edge rule below is mirrored for them.
    rtl = is_rtl(ln.text) and is_rtl(prev.text)
    if cur.marker is not None:
        # hanging indent: continuation lines sit right of the marker; back at the marker = new
        return ln.x1 >= first.x1 - 0.5 if rtl else ln.x0 <= first.x0 + 0.5
    indent = prev.x1 - ln.x1 if rtl else ln.x0 - prev.x0
    if indent >= cfg.indent_em * em and len(cur.lines) > 1:
        return True  # first-line indent of the next paragraph
    if len(cur.lines) > 1 and prev.text.rstrip()[-1:] in _SENTENCE_END:
        # (the paragraph's far edge only matters after a sentence end: computed only then)
        if rtl:
            if prev.x0 > min(x.x0 for x in cur.lines) + 4 * em:
                return True
        elif prev.x1 < max(x.x1 for x in cur.lines) - 4 * em:
            return True  # previous line stopped short after a sentence end
    return False


def _pitch(a: Line, b: Line) -> float:
    """Line-to-line distance of `b` under `a`: the smaller of the top and bottom edge steps, so a
    line made taller by an inline formula, a superscript or a subscript does not look spaced."""
    return min(b.y0 - a.y0, b.y1 - a.y1)


def _para_pitch(cur: Para) -> float:
    steps = sorted(_pitch(a, b) for a, b in zip(cur.lines, cur.lines[1:]))
    return steps[len(steps) // 2]


def _is_footnote(text: str, size: float, body: float, cfg: TextLayerConfig) -> bool:
    """Text (in the bottom zone, smaller than the body) that reads like a footnote: any
    marker in clearly small type, or a superscript/symbol marker in type only a little
    smaller (9 pt notes under 10 pt body)."""
    if size <= cfg.footnote_size_ratio * body and _FOOTNOTE_RE.match(text):
        return True
    m = footnote_marker(text)
    return m is not None and m[1]


def _list_start(ln: Line, em: float, cfg: TextLayerConfig) -> bool:
    """`ln` starts a list item; a small-type line starting with "*" is a footnote instead
    (its wrapped lines are not indented like a list item's)."""
    if list_marker(ln.text) is None:
        return False
    return not (cfg.footnote_split and ln.text.lstrip()[:1] == "*" and ln.size <= cfg.footnote_size_ratio * em)


def _next_footnote(cur: Para, prev: Line, ln: Line, small: bool) -> bool:
    """`ln` starts the next footnote of a run of footnotes (cur is one of them).

    Footnotes are set tight, often without a gap or indent between them, so only the marker
    tells where one ends: a superscript or symbol marker always starts a new note (whatever
    the size: on a page full of notes they are the page's commonest size), a plain number
    only in small type and when it follows the current note's number or the previous line
    ended a sentence (a wrapped line may start with a number)."""
    new = footnote_marker(ln.text)
    if new is None:
        return False
    old = footnote_marker(cur.lines[0].text)
    if old is None:
        return False
    if new[1]:
        return True
    if not small:
        return False
    if old[0].isdecimal() and int(new[0]) == int(old[0]) + 1:
        return True
    return prev.text.rstrip()[-1:] in _SENTENCE_END


def group_paragraphs(ordered: list[tuple[Line, tuple]], em: float, cfg: TextLayerConfig) -> list[Para]:
    paras: list[Para] = []
    cur: Para | None = None
    prev: Line | None = None
    for ln, key in ordered:
        if cur is None or prev is None or starts_new(cur, prev, ln, key, em, cfg):
            m = list_marker(ln.text) if _list_start(ln, em, cfg) else None
            cur = Para([ln], key, marker=m[0] if m else None)
            paras.append(cur)
        else:
            cur.lines.append(ln)
        prev = ln
    return paras


# characters that are rare in prose and common in program text and markup
_CODE_CHARS = frozenset("{}[]<>=;#\\|~`^_$@*&")
_CODE_MIN_SHARE = 0.02  # of a paragraph's non-space characters
_MONO_BODY_SHARE = 0.5  # of the page's characters: a typewritten page, its body set in a monospaced face


def _mono_body(paras: list[Para]) -> bool:
    """Whether the page's body is set in a monospaced face (a typewritten letter, a filing, an
    old report): then a monospaced paragraph is the body's own text, not a code listing."""
    chars = [(len(ln.text.strip()), ln.mono) for p in paras for ln in p.lines]
    total = sum(n for n, _ in chars)
    return bool(total) and sum(n for n, mono in chars if mono) >= _MONO_BODY_SHARE * total


def _code_like(lines: list[Line]) -> bool:
    """Program text or markup: braces, brackets, operators and sigils, or lines after the first
    indented past the paragraph's left edge (a block's body; a typed paragraph indents only its
    first line)."""
    body = [c for ln in lines for c in ln.text if not c.isspace()]
    if body and sum(c in _CODE_CHARS for c in body) >= _CODE_MIN_SHARE * len(body):
        return True
    left = min(ln.x0 for ln in lines)
    return any(ln.x0 - left >= 1.2 * ln.size for ln in lines[1:])


def assign_roles(
    paras: list[Para],
    body: float,
    ladder: tuple[float, ...],
    page_h: float,
    vocab: frozenset[str],
    cfg: TextLayerConfig,
) -> None:
    """Set role, level and text of every paragraph."""
    mono_body = _mono_body(paras)
    # a numbered line is a heading only against the text around it: on a slide whose text is
    # its numbered points in 32 pt, the points are the page's body, whatever the document's is
    numbered_body = max(body, _commonest_size(paras))
    numbered = _numbered_headings(paras, numbered_body, vocab, cfg)
    for p in paras:
        texts = [ln.text for ln in p.lines]
        size = float(statistics.median([ln.size for ln in p.lines]))
        if all(ln.mono for ln in p.lines) and len(p.lines) >= 2 and (not mono_body or _code_like(p.lines)):
            p.role = "code"
            left = min(ln.x0 for ln in p.lines)
            cw = 0.6 * size
            p.text = "\n".join(" " * max(0, round((ln.x0 - left) / cw)) + ln.text.strip() for ln in p.lines)
            continue
        text = join_lines(texts, vocab)
        if id(p) in numbered:
            p.text = text
            p.role = "heading"
            p.level = heading_level(size, ladder, cfg)
            continue
        if p.marker is not None:
            m = list_marker(text)
            p.role = "list_item"
            p.text = (m[1] if m else text).strip()
            continue
        p.text = text
        if _CAPTION_RE.match(text):
            p.role = "caption"
            continue
        y0 = p.bbox[1]
        if y0 >= (1 - cfg.footnote_zone) * page_h and size < body and _is_footnote(text, size, body, cfg):
            p.role = "footnote"
            continue
        short = len(p.lines) <= cfg.heading_max_lines and len(text) <= cfg.heading_max_chars
        has_letter = any(ch.isalpha() for ch in text)
        if not (short and has_letter) or text.endswith((",", ";")):
            continue
        bold_all = all(ln.bold for ln in p.lines)
        if size >= cfg.heading_size_ratio * body:
            p.role = "heading"
            p.level = heading_level(size, ladder, cfg)
        elif cfg.bold_heading and bold_all and size >= 0.95 * body and len(p.lines) <= 2 and not text.endswith("."):
            p.role = "heading"
            p.level = heading_level(size, ladder, cfg)


def _commonest_size(paras: list[Para]) -> float:
    """The type size that holds most of the page's characters (0 on an empty page)."""
    chars: dict[float, int] = {}
    for p in paras:
        for ln in p.lines:
            chars[round(ln.size, 1)] = chars.get(round(ln.size, 1), 0) + len(ln.text.strip())
    return max(chars, key=chars.__getitem__) if chars else 0.0


_SECTION_NUMBER = re.compile(r"^\d{1,3}(?:\.\d{1,3})+\.?$")


def _numbered_headings(paras: list[Para], body: float, vocab: frozenset[str], cfg: TextLayerConfig) -> set[int]:
    """The numbered paragraphs (ids) that are section headings (`_numbered_heading`), less those
    next to another of the same size: two numbered lines in a row with nothing between them are
    a list of points set large (a box of key points, an agenda), not two sections with no text."""
    size = {id(p): float(statistics.median([ln.size for ln in p.lines])) for p in paras if p.marker is not None}
    cand = {id(p) for p in paras if p.marker is not None and not (all(ln.mono for ln in p.lines) and len(p.lines) >= 2)
            and _numbered_heading(p, join_lines([ln.text for ln in p.lines], vocab), size[id(p)], body, cfg)}
    listed = set()
    for a, b in zip(paras, paras[1:]):
        if id(a) in cand and id(b) in cand and abs(size[id(a)] - size[id(b)]) <= 0.6:
            listed |= {id(a), id(b)}
    return cand - listed


def _numbered_heading(p: Para, text: str, size: float, body: float, cfg: TextLayerConfig) -> bool:
    """A numbered line that is a section heading, not a list item ("1.4. Educational attainment"
    in 16 pt bold over a 12 pt body): short, and set larger than the body, or in the body's
    size all bold with a section number of two or more levels ("2.3 Methods"); a plain "1."
    in bold body type may be a list of bold terms, so it stays a list item. Bullets never are."""
    marker = (p.marker or "").strip()
    if not marker[:1].isalnum() and not marker.startswith("("):
        return False
    short = len(p.lines) <= cfg.heading_max_lines and len(text) <= cfg.heading_max_chars
    words = text.lstrip()[len(marker):] if text.lstrip().startswith(marker) else text
    if not short or not any(ch.isalpha() for ch in words) or text.endswith((",", ";")):
        return False
    if size >= cfg.heading_size_ratio * body:
        return True
    return (cfg.bold_heading and all(ln.bold for ln in p.lines) and size >= 0.95 * body and len(p.lines) <= 2
            and not text.endswith(".") and _SECTION_NUMBER.match(marker.rstrip(")")) is not None)


def _caption_tails(items: list, em: float) -> list:
    """A caption set wider than the text column (over a table that crosses the gutter) has its
    first line read as spanning the page and its last words ("structural motifs") as a short
    paragraph of the column below: a paragraph of one or two lines starting right under the
    caption's last line (within half a line), at its left edge, inside its width and in its
    size, is the caption's tail and joins it."""
    out = list(items)
    for cap in [it for it in out if isinstance(it, Para) and it.role == "caption"]:
        last = max(cap.lines, key=lambda ln: ln.y1)
        cx0, _, cx1, _ = cap.bbox
        for it in out:
            if it is cap or not isinstance(it, Para) or it.role != "paragraph" or len(it.lines) > 2:
                continue
            first = min(it.lines, key=lambda ln: ln.y0)
            if (0 <= first.y0 - last.y1 <= 0.5 * em and abs(first.x0 - cx0) <= 2 and it.bbox[2] <= cx1 + 2
                    and abs(first.size - last.size) <= 0.6):
                cap.lines += it.lines
                cap.text = join_lines([cap.text, it.text])
                out.remove(it)
                break
    return out


def attach_captions(items: list, em: float, cfg: TextLayerConfig) -> list:
    """`items` (paragraphs and figure/table atoms in reading order) with every caption moved
    next to the figure or table it labels.

    A caption labels the nearest figure/table just above it (caption below) or just below it
    (caption above) that overlaps it horizontally, within `caption_max_gap_em`. Reading order
    can put the other column between them (a cut between a figure and its caption); the
    caption then moves to right after (below) or right before (above) its figure/table. An
    atom that already has a caption next to it on that side keeps it; nothing else moves."""
    if not cfg.attach_captions:
        return items
    items = _caption_tails(items, em)
    atoms = [it for it in items if getattr(it, "kind", None) in ("figure", "table")]
    caps = [it for it in items if isinstance(it, Para) and it.role == "caption"]
    if not atoms or not caps:
        return items
    out = list(items)
    limit = cfg.caption_max_gap_em * em
    for cap in caps:
        cx0, cy0, cx1, cy1 = cap.bbox
        best = None
        for a in atoms:
            ov = min(cx1, a.x1) - max(cx0, a.x0)
            if ov < 0.5 * min(cx1 - cx0, a.x1 - a.x0):
                continue
            below, above = cy0 - a.y1, a.y0 - cy1  # caption below / above the atom
            for gap, after in ((below, True), (above, False)):
                if -0.5 * em <= gap <= limit and (best is None or gap < best[0]):
                    best = (gap, a, after)
        if best is None:
            continue
        _, a, after = best
        i, j = out.index(cap), out.index(a)
        if (after and i == j + 1) or (not after and i == j - 1):
            continue
        # what reads between them stands between them on the page, inside the atom's width (a
        # table's "[In thousands]" under its caption): the order is the page's already
        between = out[j + 1:i] if after else out[i + 1:j]
        top, bottom = (a.y1, cy0) if after else (cy1, a.y0)
        if between and all(isinstance(x, Para) and x.bbox[1] >= top - 0.5 * em and x.bbox[3] <= bottom + 0.5 * em
                           and x.bbox[0] >= a.x0 - em and x.bbox[2] <= a.x1 + em for x in between):
            continue
        nb = j + 1 if after else j - 1
        if 0 <= nb < len(out) and isinstance(out[nb], Para) and out[nb].role == "caption":
            continue  # the atom has its caption on that side already
        out.pop(i)
        j = out.index(a)
        out.insert(j + 1 if after else j, cap)
    return out
