"""Recognised text lines and how they become paragraphs."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..geometry import BBox, union


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
