"""Heading levels from the document's ladder of font sizes.

A heading's level is its size's rank among the heading sizes of the whole document (the
furniture pre-scan's sample, `FurnitureModel.heading_sizes`), not of its page: a 15 pt section
heading is level 2 on every page, also on a page that has no 20 pt chapter heading to outrank
it. Only a page read without a document model (a page on its own) ranks its own sizes.

Sizes closer than `heading_size_tolerance_pt` are one rung: one heading style measures 14.5
on one line and 15 on another (sizes are rounded to half points), and two rungs would give it
two levels. A bold line at body size ranks below every rung (the lowest level).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..config.textlayer import TextLayerConfig


def rungs(sizes: Iterable[float], cfg: TextLayerConfig) -> tuple[float, ...]:
    """Distinct heading sizes, biggest first, each rung given by its smallest size; a size
    within the tolerance of a rung's biggest size belongs to that rung."""
    out: list[list[float]] = []
    for s in sorted(set(sizes), reverse=True):
        if out and out[-1][0] - s < cfg.heading_size_tolerance_pt:
            out[-1].append(s)
        else:
            out.append([s])
    return tuple(r[-1] for r in out)


def heading_ladder(doc_sizes: Sequence[float], doc_pages: int, doc_body: float | None,
                   page_sizes: Iterable[float], page_body: float, cfg: TextLayerConfig) -> tuple[float, ...]:
    """The rungs levels are counted on: the document's heading sizes when a pre-scan sampled
    pages of it (`doc_pages`, with a body size), else the page's own sizes above its body."""
    if doc_pages >= 1 and doc_body:
        return rungs(doc_sizes, cfg)
    return rungs((s for s in page_sizes if s >= cfg.heading_size_ratio * page_body), cfg)


def heading_level(size: float, ladder: Sequence[float], cfg: TextLayerConfig) -> int:
    """1 + the rungs clearly bigger than `size`, at most `max_heading_level`."""
    bigger = sum(1 for r in ladder if r > size + cfg.heading_size_tolerance_pt / 2)
    return min(cfg.max_heading_level, bigger + 1)
