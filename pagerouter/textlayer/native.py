"""Falling back to MuPDF's own order when the cut's order is measurably worse.

The XY cut finds columns, bands and rows; where a page has no layout it can read (columns
too irregular for a gutter, a gutter crossed by too many lines), it reads bands row by row,
left to right, and two columns' lines come out interleaved. MuPDF's own order (its blocks in
content-stream order, lines in order inside a block) is then usually better: producers write
a column's text in sequence, and MuPDF groups a column's neighbouring lines into one block.

"Worse" is measured, not guessed: the cut order *re-enters* a MuPDF block when it reads a
line of that block after having left it for another block. MuPDF's own order never does
(blocks are read whole), so every re-entry is a place where the cut interleaved text the
producer wrote in one piece. Only prose lines count (more words than `form_max_words`): a
form's labels and values, which MuPDF may keep as one block of labels and one of values, are
read row by row on purpose (the cut's form rule) and must not trigger the fallback. At
`native_order_min_reentries` re-entries or more, the page's lines are read in MuPDF's order.
A MuPDF block that holds lines of two columns side by side (a producer that writes each row of
text across both columns) is itself interleaved: re-entering it counts for nothing.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..config.textlayer import TextLayerConfig
from .lines import Line


def side_by_side_blocks(lines: Sequence[Line]) -> set[int]:
    """MuPDF blocks whose lines share no common horizontal stretch: lines of two columns set
    side by side in one block (a producer writing each text row across both columns of a
    notice, which MuPDF then groups as one block). Reading such a block whole interleaves the
    columns, so leaving and re-entering it is no sign of a bad cut."""
    spans: dict[int, tuple[float, float]] = {}
    for ln in lines:
        lo, hi = spans.get(ln.seq[0], (-1e9, 1e9))
        spans[ln.seq[0]] = (max(lo, ln.x0), min(hi, ln.x1))
    return {b for b, (lo, hi) in spans.items() if lo >= hi}


def reentries(lines: Sequence[Line], max_words: float) -> int:
    """Times `lines` (in reading order) come back to a MuPDF block of prose lines they had left
    (blocks of side-by-side lines left out: `side_by_side_blocks`)."""
    left: set[int] = set()
    cur: int | None = None
    n = 0
    prose = [ln for ln in lines if ln.words() > max_words]
    mixed = side_by_side_blocks(prose)
    for ln in prose:
        b = ln.seq[0]
        if b in mixed:
            continue
        if b == cur:
            continue
        if b in left:
            n += 1
        if cur is not None:
            left.add(cur)
        cur = b
    return n


def prefer_native(ordered: list[tuple[Any, tuple]], cfg: TextLayerConfig) -> tuple[list[tuple[Any, tuple]], int]:
    """`ordered` ((item, column key) in the cut's order: Lines and tables/figures), or the same
    items in MuPDF's order when the cut re-enters blocks (module docstring); and the count of
    re-entries measured. In MuPDF's order every line has one key (paragraphs break on
    geometry alone); a table or figure goes before the first line below its top
    that it shares some width with (its place in the flow)."""
    lines = [it for it, _key in ordered if isinstance(it, Line)]
    n = reentries(lines, cfg.form_max_words)
    if n < cfg.native_order_min_reentries:
        return ordered, n
    # one key for every line: paragraphs are told apart by their geometry (gaps, indents, a jump
    # back up to the next column), not by MuPDF's blocks, which some producers make one per line
    native: list[tuple[Any, tuple]] = [(ln, ("native",)) for ln in sorted(lines, key=lambda ln: ln.seq)]
    for atom, key in ordered:
        if isinstance(atom, Line):
            continue
        at = next(
            (k for k, (ln, _key) in enumerate(native)
             if isinstance(ln, Line) and ln.yc > atom.y0 and min(ln.x1, atom.x1) > max(ln.x0, atom.x0)),
            len(native),
        )  # fmt: skip
        native.insert(at, (atom, key))
    return native, n
