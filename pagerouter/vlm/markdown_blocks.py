"""A page VLM's Markdown answer turned into document blocks with provenance.

The model gives text, not boxes. Each block is placed where the page's earlier reading (the
small reader's blocks, or the text layer) has the same text, so a passage can still be cited
back to its place; a block matching nothing gets the whole page as its box and says so in a
lower confidence, never an invented box.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from ..model import Block
from ..render.table_markdown import cells_to_markdown
from .profiles import parse_table, strip_math_delimiters

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_LIST = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_FIGURE = re.compile(r"^!\[([^\]]*)\]\([^)]*\)\s*$")


def split_markdown(body: str) -> list[tuple[str, str, int | None]]:
    """(role, text, heading level) chunks of a Markdown page in order."""
    chunks: list[tuple[str, str, int | None]] = []
    para: list[str] = []
    lines = body.splitlines()

    def flush():
        if para:
            chunks.append(("paragraph", "\n".join(para).strip(), None))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if not s:
            flush()
            i += 1
            continue
        if s.lower().startswith("<table"):
            j = _closing(lines, i, "</table>")
            if j is not None:
                flush()
                chunks.append(("table", "\n".join(lines[i: j + 1]), None))
                i = j + 1
                continue
        opener = "$$" if s.startswith("$$") else "\\[" if s.startswith("\\[") else None
        if opener:
            close = "$$" if opener == "$$" else "\\]"
            if s == opener:  # a display formula over several lines
                j = _closing(lines, i + 1, close)
            else:  # one line: only a formula if it closes on that line and nothing follows
                j = i if len(s) > 2 * len(opener) and s.endswith(close) else None
            if j is not None:
                flush()
                chunks.append(("formula", "\n".join(lines[i: j + 1]), None))
                i = j + 1
                continue
        if s.startswith("|") and s.count("|") >= 2:
            flush()
            j = i
            while j < len(lines) and lines[j].strip().startswith("|"):
                j += 1
            chunks.append(("table", "\n".join(lines[i:j]), None))
            i = j
            continue
        m = _HEADING.match(s)
        if m:
            flush()
            chunks.append(("heading", m.group(2).strip(), len(m.group(1))))
        elif _FIGURE.match(s):
            flush()
            chunks.append(("figure", _FIGURE.match(s).group(1).strip(), None))
        elif _LIST.match(s):
            flush()
            chunks.append(("list_item", s, None))
        else:
            para.append(s)
        i += 1
    flush()
    return [c for c in chunks if c[1] or c[0] == "figure"]


MAX_BLOCK_LINES = 200  # an unclosed table or formula must not swallow the rest of the page


def _closing(lines: list[str], start: int, close: str) -> int | None:
    """Index of the line holding `close` from `start` on, within MAX_BLOCK_LINES; None if unclosed."""
    for j in range(start, min(len(lines), start + MAX_BLOCK_LINES)):
        if close in lines[j].lower():
            return j
    return None


def markdown_to_blocks(
    body: str, *, page: int, page_box: tuple[float, float, float, float], engine: str, engine_version: str,
    confidence: float, reference: list[Block] | None = None, min_match: float = 0.6,
) -> list[Block]:
    """Blocks of a page answer; boxes borrowed from `reference` blocks with matching text."""
    blocks: list[Block] = []
    refs = [b for b in (reference or []) if b.text.strip()]
    for order, (role, text, level) in enumerate(split_markdown(body)):
        cells = None
        if role == "table":
            cells = parse_table(text) or None
            text = cells_to_markdown(cells) if cells else text
        elif role == "formula":
            text = f"$$\n{strip_math_delimiters(text)}\n$$"
        box, match = _place(text, refs, min_match) if role not in ("figure", "formula") else (None, 0.0)
        blocks.append(Block(
            text=text, role=role, bbox=box or page_box, page=page, engine=engine, engine_version=engine_version,
            route="escalation", order=order, level=level, cells=cells,
            # an unplaced block's box is the whole page: say so by a lower confidence
            confidence=round(confidence if box else confidence * 0.9, 4),
        ))
    return blocks


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[|#*_`$\\-]+", " ", text).lower().split())


def _place(text: str, refs: list[Block], min_match: float) -> tuple[tuple | None, float]:
    """The box of the reference block(s) holding this text: the best single block, or the union
    of the blocks whose text lies inside this one (a VLM paragraph may join several OCR lines)."""
    want = _norm(text)
    if not want or not refs:
        return None, 0.0
    best, best_r = None, 0.0
    inside = []
    for b in refs:
        have = _norm(b.text)
        if not have:
            continue
        r = SequenceMatcher(None, want, have, autojunk=False).ratio()
        if r > best_r:
            best, best_r = b, r
        if len(have) >= 8 and have in want:
            inside.append(b)
    if best is not None and best_r >= min_match:
        return best.bbox, best_r
    if inside and sum(len(_norm(b.text)) for b in inside) >= min_match * len(want):
        xs0, ys0, xs1, ys1 = zip(*(b.bbox for b in inside))
        return (min(xs0), min(ys0), max(xs1), max(ys1)), min_match
    return None, best_r
