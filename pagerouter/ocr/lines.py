"""Recognised text lines and how they become paragraphs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common.geometry import BBox, union


@dataclass
class OcrLine:
    """One recognised line in image pixels: (x0, y0, x1, y1) axis-aligned box."""

    bbox: BBox
    text: str
    confidence: float
    suppressed: int = 0  # characters of a foreign script removed at decoding
    extra: dict = field(default_factory=dict)

    @property
    def height(self) -> float:
        return self.bbox[3] - self.bbox[1]

    @property
    def cy(self) -> float:
        return (self.bbox[1] + self.bbox[3]) / 2


def sort_lines(lines: list[OcrLine]) -> list[OcrLine]:
    """Top-to-bottom, and left-to-right within a visual row (boxes whose vertical centres are
    within half a line height are one row, e.g. a line split by the detector)."""
    if not lines:
        return []
    lines = sorted(lines, key=lambda ln: ln.cy)
    rows: list[list[OcrLine]] = [[lines[0]]]
    for ln in lines[1:]:
        row = rows[-1]
        ref = sum(r.cy for r in row) / len(row)
        h = max(1.0, min(ln.height, max(r.height for r in row)))
        if abs(ln.cy - ref) < 0.5 * h:
            row.append(ln)
        else:
            rows.append([ln])
    return [ln for row in rows for ln in sorted(row, key=lambda r: r.bbox[0])]


def merge_rows(lines: list[OcrLine]) -> list[OcrLine]:
    """Join boxes of the same visual row (sorted by sort_lines) into one line, text space-joined."""
    out: list[OcrLine] = []
    for ln in lines:
        if out:
            prev = out[-1]
            h = max(1.0, min(ln.height, prev.height))
            if abs(ln.cy - prev.cy) < 0.5 * h and ln.bbox[0] >= prev.bbox[0]:
                n_prev, n_ln = max(1, len(prev.text)), max(1, len(ln.text))
                conf = (prev.confidence * n_prev + ln.confidence * n_ln) / (n_prev + n_ln)
                out[-1] = OcrLine(
                    union((prev.bbox, ln.bbox)),
                    f"{prev.text} {ln.text}", conf, prev.suppressed + ln.suppressed,
                )
                continue
        out.append(ln)
    return out


def split_paragraphs(lines: list[OcrLine], gap: float, short_line: float = 0.75) -> list[list[OcrLine]]:
    """Split ordered lines where the vertical gap exceeds `gap` line heights, or after a line
    that ends well short of the block's right edge (under `short_line` of its width): that is
    a paragraph's last line, or one of a stack of short lines (an address, an invoice header),
    and joining those into one run of text loses their structure."""
    if not lines:
        return []
    left = min(ln.bbox[0] for ln in lines)
    width = max(1.0, max(ln.bbox[2] for ln in lines) - left)
    paras: list[list[OcrLine]] = []
    for ln in lines:
        if paras:
            prev = paras[-1][-1]
            h = max(1.0, (prev.height + ln.height) / 2)
            vgap = ln.bbox[1] - prev.bbox[3]
            prev_short = len(lines) > 1 and (prev.bbox[2] - left) < short_line * width
            if vgap <= gap * h and vgap > -h and not prev_short:
                paras[-1].append(ln)
                continue
        paras.append([ln])
    return paras


def join_text(lines: list[OcrLine]) -> str:
    """Lines of one paragraph as flowing text; a trailing hyphen before a lowercase start is
    treated as a word break and removed."""
    out = ""
    for ln in lines:
        t = ln.text.strip()
        if not t:
            continue
        if not out:
            out = t
        elif out.endswith("-") and len(out) > 1 and out[-2].isalpha() and t[:1].islower():
            out = out[:-1] + t
        else:
            out += " " + t
    return out


def mean_confidence(lines: list[OcrLine]) -> float:
    """Character-weighted mean confidence (a long line says more than a one-letter line)."""
    total = sum(max(1, len(ln.text)) for ln in lines)
    if not total:
        return 0.0
    return sum(ln.confidence * max(1, len(ln.text)) for ln in lines) / total


# ---------------------------------------------------------------------- column gutters
def visual_rows(lines: list[OcrLine]) -> list[list[OcrLine]]:
    """Lines grouped into visual rows (as `sort_lines` groups them), top to bottom."""
    ordered = sort_lines(lines)
    rows: list[list[OcrLine]] = []
    for ln in ordered:
        if rows:
            row = rows[-1]
            ref = sum(r.cy for r in row) / len(row)
            if abs(ln.cy - ref) < 0.5 * max(1.0, min(ln.height, max(r.height for r in row))):
                row.append(ln)
                continue
        rows.append([ln])
    return rows


def _ink(ln: OcrLine) -> list[tuple[float, float]]:
    """Where a line has ink along x: its words when the reader placed them, else its box."""
    return list(ln.extra.get("word_x") or [(ln.bbox[0], ln.bbox[2])])


def gutter_mask(rows: list[list[OcrLine]], x_end: float, bin_px: float, min_rows: int) -> np.ndarray:
    """(rows x bins) True where the x bin is a column gutter at that row: white (no ink) in
    this row although the row has ink on both sides, and white in at least `min_rows`
    consecutive rows that reach across it (rows that end or start short of it do not break
    the run). One row's gap between words is a word space; the same white x band through many
    rows is the page's column structure."""
    nb = int(x_end / bin_px) + 2
    n = len(rows)
    span = np.zeros((n, nb), bool)
    ink = np.zeros((n, nb), bool)
    for r, row in enumerate(rows):
        span[r, int(min(l.bbox[0] for l in row) / bin_px):int(max(l.bbox[2] for l in row) / bin_px) + 1] = True
        for ln in row:
            for a, b in _ink(ln):
                ink[r, int(a / bin_px):int(b / bin_px) + 1] = True
    white = span & ~ink
    # run length of white through the rows that reach across each bin
    fwd = np.zeros((n, nb), int)
    run = np.zeros(nb, int)
    for r in range(n):
        run = np.where(white[r], run + 1, np.where(span[r], 0, run))
        fwd[r] = run
    total = np.zeros((n, nb), int)
    best = np.zeros(nb, int)
    for r in range(n - 1, -1, -1):
        # the run through row r ends at the last white row below it before a spanning ink row
        best = np.where(white[r], np.maximum(best, fwd[r]), np.where(span[r], 0, best))
        total[r] = np.where(white[r], best, 0)
    return white & (total >= min_rows)


def split_at_gutters(lines: list[OcrLine], min_rows: int, min_width: float) -> list[OcrLine]:
    """Cut every line the detector drew across a column gutter into its column pieces.

    The gutter comes from the page's own column structure (`gutter_mask` over all lines, by
    their word positions); a line is cut at a gap between two of its words that holds a gutter
    band at least `min_width` line heights wide. Lines without word positions are never cut
    (they still show where the gutters are)."""
    worded = [ln for ln in lines if len(ln.extra.get("word_x") or ()) > 1]
    if not worded or len(lines) < min_rows:
        return lines
    heights = sorted(ln.height for ln in lines)
    line_h = max(1.0, heights[len(heights) // 2])
    bin_px = max(1.0, line_h / 8)
    rows = visual_rows(lines)
    mask = gutter_mask(rows, max(ln.bbox[2] for ln in lines), bin_px, min_rows)
    if not mask.any():
        return lines
    need = max(1, int(min_width * line_h / bin_px))
    row_of = {id(ln): r for r, row in enumerate(rows) for ln in row}
    # Column edges per row: ink ends before and starts after a white gap of a gutter's width.
    edges = [_row_edges(row, need * bin_px) for row in rows]
    tol = 0.3 * line_h
    out: list[OcrLine] = []
    for ln in lines:
        words = ln.extra.get("word_x")
        if not words or len(words) < 2:
            out.append(ln)
            continue
        good = mask[row_of[id(ln)]]
        cuts = []
        for k in range(1, len(words)):
            a, b = int(words[k - 1][1] / bin_px) + 1, int(words[k][0] / bin_px)
            if b - a >= need and _longest_true(good[a:b]) >= need and _aligned(
                    edges, mask, row_of[id(ln)], a, b, words[k - 1][1], words[k][0], tol, min_rows - 1):
                cuts.append(k)
        out.extend(_cut(ln, cuts) if cuts else [ln])
    return out


def _row_edges(row: list[OcrLine], min_gap: float) -> tuple[np.ndarray, np.ndarray]:
    """(ends, starts): x where the row's ink stops before, and resumes after, a gap of at least
    `min_gap` pixels."""
    ink = sorted(iv for ln in row for iv in _ink(ln))
    ends, starts = [], []
    for (a0, a1), (b0, _b1) in zip(ink, ink[1:]):
        if b0 - a1 >= min_gap:
            ends.append(a1)
            starts.append(b0)
    return np.array(ends), np.array(starts)


def _aligned(edges, mask: np.ndarray, r: int, a: int, b: int, end: float, start: float, tol: float, need: int) -> bool:
    """Whether a gap of row r (bins a..b, ink ending at `end`, resuming at `start`) is a column
    edge the other rows of its gutter share: at least `need` of them stop at `end` or resume
    at `start` (within `tol`). A column's text is aligned on at least one side of a gutter
    (ragged right, left-aligned next column; right-aligned figures); a word space that merely
    lines up with a gutter above it (a paragraph under a table) is not."""
    rows = [q for q in np.flatnonzero(mask[:, a:b].any(axis=1)) if q != r]
    n_end = sum(bool(len(edges[q][0]) and np.abs(edges[q][0] - end).min() <= tol) for q in rows)
    n_start = sum(bool(len(edges[q][1]) and np.abs(edges[q][1] - start).min() <= tol) for q in rows)
    return max(n_end, n_start) >= need


def _longest_true(v: np.ndarray) -> int:
    best = cur = 0
    for x in v:
        cur = cur + 1 if x else 0
        best = max(best, cur)
    return best


def _cut(ln: OcrLine, cuts: list[int]) -> list[OcrLine]:
    """The line as pieces starting at word indices `cuts` (boxes from the word positions)."""
    words, spans = ln.text.split(), ln.extra["word_x"]
    out = []
    for a, b in zip([0] + cuts, cuts + [len(words)]):
        x0 = ln.bbox[0] if a == 0 else spans[a][0]
        x1 = ln.bbox[2] if b == len(words) else spans[b - 1][1]
        extra = {**ln.extra, "word_x": spans[a:b]}
        if "char_x" in ln.extra:
            first = sum(len(w) for w in words[:a])
            extra["char_x"] = ln.extra["char_x"][first:first + sum(len(w) for w in words[a:b])]
        piece = OcrLine((x0, ln.bbox[1], x1, ln.bbox[3]), " ".join(words[a:b]), ln.confidence, 0, extra)
        out.append(piece)
    out[0].suppressed = ln.suppressed
    return out


# ---------------------------------------------------------------------- superscripts / subscripts
_SCRIPT_CHARS = frozenset("0123456789")
_SIGNS = frozenset("+-\u2212*")


def _char_boxes(ink: np.ndarray, xs: list[float], x0: float, pitch: float) -> list[tuple[float, float] | None]:
    """(top, bottom) rows of each character's glyph in the line's crop: the union of the ink's
    connected components whose centre lies within 0.45 of the distance to the nearer
    neighbouring character centre (an `i` is a dot and a stem; a mark sits right against its
    base letter, so the band is narrow); None where no component is found. Components wider
    than 3 characters (`pitch`) or one pixel high are rules, not glyphs. `ink`: True = ink;
    xs in page pixels."""
    import cv2

    n, _lab, stats, cents = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    # noise specks are no glyph, nor is a rule 3+ characters wide or a one-pixel-high piece of one
    # (a form's underline, a table's rule over a total, broken by noise): with the digits it
    # touches or lies near, it would move the line's baseline or body
    keep = [k for k in range(1, n) if stats[k, cv2.CC_STAT_AREA] >= 3 and stats[k, cv2.CC_STAT_HEIGHT] > 1
            and stats[k, cv2.CC_STAT_WIDTH] <= 3 * pitch]
    cx = np.array([cents[k][0] + x0 for k in keep])
    top = np.array([stats[k, cv2.CC_STAT_TOP] for k in keep], float)
    bottom = np.array([stats[k, cv2.CC_STAT_TOP] + stats[k, cv2.CC_STAT_HEIGHT] - 1 for k in keep], float)
    out: list[tuple[float, float] | None] = []
    for i, x in enumerate(xs):
        near = min([abs(x - xs[j]) for j in (i - 1, i + 1) if 0 <= j < len(xs)] or [pitch])
        sel = np.abs(cx - x) <= 0.45 * max(1.0, min(near, 2 * pitch)) if len(keep) else np.zeros(0, bool)
        out.append((float(top[sel].min()), float(bottom[sel].max())) if sel.any() else None)
    return out


def mark_scripts(lines: list[OcrLine], image: np.ndarray, raise_min: float, drop_min: float, max_height: float) -> None:
    """Wrap raised/lowered small digits after a letter or digit in `<sup>`/`<sub>` (in place),
    as the text-layer route marks them: a footnote number, an exponent, a chemical index.

    Geometry from the page image at the reader's character positions: the baseline and body
    top are the medians of the glyph bottoms and tops of the six nearest characters; a digit
    (or a sign just before a raised digit) is a superscript when its glyph ends `raise_min`
    body heights above that baseline, a subscript when it reaches `drop_min` below it with its
    top in the lower half of the body; either way it is 0.45 to `max_height` body heights tall.
    Only lines whose text has a digit inside a word are looked at."""
    for ln in lines:
        xs = ln.extra.get("char_x")
        if not xs or not any(c in _SCRIPT_CHARS for w in ln.text.split() for c in w[1:]):
            continue
        chars = [c for c in ln.text if not c.isspace()]
        if len(chars) != len(xs) or len(chars) < 4:
            continue
        x0, y0 = max(0, int(ln.bbox[0])), max(0, int(ln.bbox[1]))
        crop = image[y0:int(ln.bbox[3]) + 1, x0:int(ln.bbox[2]) + 1]
        if crop.size == 0:
            continue
        if crop.ndim == 3:
            crop = crop.min(axis=2)  # the darkest channel: coloured ink is ink too
        ink = crop < 0.5 * (float(np.median(crop)) + float(crop.min()))  # darker than halfway to the paper
        ink[ink.mean(axis=1) >= 0.7] = False  # a rule along the line (a form's underline), broken by noise
        ext = _char_boxes(ink, xs, x0, (ln.bbox[2] - ln.bbox[0]) / max(1, len(ln.text)))
        letters = [e for c, e in zip(chars, ext) if e is not None and c.isalnum()]
        if len(letters) < 3:
            continue
        alnum = [j for j, (c, e) in enumerate(zip(chars, ext)) if e is not None and c.isalnum()]
        kinds: list[str | None] = [None] * len(chars)
        starts, k = set(), 0
        for w in ln.text.split():
            starts.add(k)
            k += len(w)
        for i, (c, e) in enumerate(zip(chars, ext)):
            if c not in _SCRIPT_CHARS or i in starts or e is None or _inside_a_number(chars, i, starts):
                continue
            # baseline and body from the nearest characters, not the whole line: a skewed scan's
            # baseline climbs along the line
            near = sorted((j for j in alnum if j != i), key=lambda j: abs(j - i))[:6]
            if len(near) < 3:
                continue
            base = float(np.median([ext[j][1] for j in near]))
            body_top = float(np.median([ext[j][0] for j in near]))
            body = max(1.0, base - body_top)
            top, bottom = e
            # a small digit is still over half the body tall: a flatter component near the
            # recogniser's (approximate) centre is a hyphen or a dot, not this digit
            if not 0.45 * body <= bottom - top <= max_height * body:
                continue
            if bottom <= base - raise_min * body:
                kinds[i] = "sup"
            elif bottom >= base + drop_min * body and top >= body_top + 0.5 * body:
                kinds[i] = "sub"
        for i in range(len(chars) - 1, 0, -1):  # "10^-3": a sign before a raised digit, itself raised
            if kinds[i] == "sup" and chars[i - 1] in _SIGNS and i - 1 not in starts and ext[i - 1] is not None \
                    and (ext[i - 1][0] + ext[i - 1][1]) / 2 <= ext[i][1]:  # centred no lower than the mark's foot
                kinds[i - 1] = "sup"
        if any(kinds):
            ln.text = _wrap_marks(ln.text, kinds)
            ln.extra.pop("word_x", None)  # the text no longer matches the positions
            ln.extra.pop("char_x", None)


def _inside_a_number(chars: list[str], i: int, starts: set[int]) -> bool:
    """The digit at `i` is one of a decimal number's fraction digits ("1.45", "4,2") or comes
    right before a percent sign: no exponent or footnote mark sits there. The recogniser's
    character positions are approximate, and a digit's band can take the upper ring of the
    "%" beside it (small and raised): "1.45%" came out as "1.4<sup>5</sup>%"."""
    if i + 1 < len(chars) and i + 1 not in starts and chars[i + 1] in "%\u2030":
        return True
    j = i - 1
    while j >= 0 and j + 1 not in starts and chars[j].isdigit():
        j -= 1
    return j >= 1 and j + 1 not in starts and chars[j] in ".," and chars[j - 1].isdigit() and j not in starts


def _wrap_marks(text: str, kinds: list[str | None]) -> str:
    """`text` with each run of non-space characters of one kind wrapped in its tag."""
    out, k, open_kind = [], 0, None
    for ch in text:
        kind = None
        if not ch.isspace():
            kind = kinds[k]
            k += 1
        if kind != open_kind and not (ch.isspace() and open_kind is None):
            if open_kind:
                out.append(f"</{open_kind}>")
            if kind:
                out.append(f"<{kind}>")
            open_kind = kind
        out.append(ch)
    if open_kind:
        out.append(f"</{open_kind}>")
    return "".join(out)
