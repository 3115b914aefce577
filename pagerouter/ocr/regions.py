"""From recognised lines and layout regions to page blocks (engine-agnostic).

Coordinates: the reader works on the upright image (task image turned clockwise by the
layout's `rotation`); block bboxes are that image's pixels divided by `task.scale`, i.e. PDF
points in the UPRIGHT page frame (top-left origin, y down; width and height swap for 90/270).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..config.ocr import OcrConfig
from ..config.textlayer import TextLayerConfig
from ..common.geometry import grow, overlap_share, union
from ..model import Block, CheckResult
from ..layout.reading_order import OrderParams, median_height, order_boxes
from ..common.stages import LayoutResult, OcrTask, Reading, Region
from ..render.table_markdown import cells_to_markdown
from .lines import (
    OcrLine, join_text, mark_scripts, mean_confidence, merge_rows, sort_lines, split_at_gutters, split_paragraphs,
)
from .script_options import reading_script
from .unread_lines import below_cut_of, candidates, unread_lines_check
from .tables import LineTable, find_line_tables, looks_like_grid, looks_like_prose, prose_columns

_TEXTLAYER_CFG = TextLayerConfig()
"""Furniture score weights: the text layer's defaults (the OCR config carries only the band)."""

def _furniture(pieces, boxes, text_layer, lines, scale: float, page_h: float, cfg: OcrConfig) -> dict:
    """Header/footer/page-number decisions for the OCR blocks in the page bands: the text
    layer's per-page score (content cues, position, gap, size) with the layout model's
    header/footer kind as one more cue. index -> (kind, Decision | None)."""
    from ..textlayer.furniture import classify_blocks
    from ..textlayer.furniture_cues import Box

    items, kinds = [], []
    for (kind, _b, plines), box in zip(pieces, boxes):
        hs = sorted(l.height for l in plines) or [box[3] - box[1]]
        text = " ".join(l.text for l in plines)
        items.append(Box(*box, text=text, size=hs[len(hs) // 2] / scale, chars=len(text.strip()),
                         lines=tuple(l.text for l in plines) if len(plines) > 1 else ()))
        kinds.append(kind)
    body = median_height([l.bbox for l in lines]) / scale if lines else 10.0
    for b in text_layer:  # (mixed pages) the text layer's blocks are neighbours, already decided
        items.append(Box(*b.bbox, text=b.text, size=body, chars=len(b.text)))
        kinds.append("decided")
    return classify_blocks(items, kinds, page_h, body, cfg.small_reader.furniture_band,
                           cfg.small_reader.furniture_max_chars, _TEXTLAYER_CFG)


ROLE_OF = {
    "text": "paragraph", "title": "heading", "figure": "figure", "figure_caption": "caption", "table": "table",
    "table_caption": "caption", "header": "header", "footer": "footer", "reference": "reference",
    "page_number": "page_number",
    "equation": "formula",
}


class LineReader(Protocol):
    name: str
    version: str

    def read_image_lines(self, image: np.ndarray, script: str | None = None) -> list[OcrLine]: ...


def upright(image: np.ndarray, rotation: int) -> np.ndarray:
    """The image turned clockwise by `rotation` degrees (0/90/180/270)."""
    k = (rotation // 90) % 4
    return np.ascontiguousarray(np.rot90(image, k=-k)) if k else image


def cluster_lines(lines: list[OcrLine], gap: float) -> list[list[OcrLine]]:
    """Group lines into blocks: linked when they overlap horizontally and the vertical gap is
    under `gap` line heights (union-find); used for text no layout region covers."""
    n = len(lines)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        a = lines[i].bbox
        for j in range(i + 1, n):
            b = lines[j].bbox
            h = max(1.0, (lines[i].height + lines[j].height) / 2)
            xo = min(a[2], b[2]) - max(a[0], b[0])
            vgap = max(a[1], b[1]) - min(a[3], b[3])
            if xo > 0 and vgap < gap * h:
                parent[find(i)] = find(j)
    groups: dict[int, list[OcrLine]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(lines[i])
    return list(groups.values())


def assign_lines(lines: list[OcrLine], regions: list[Region], min_overlap: float):
    """Each line goes to the region holding most of it (at least `min_overlap`), else unassigned."""
    assigned: list[list[OcrLine]] = [[] for _ in regions]
    rest: list[OcrLine] = []
    for ln in lines:
        best, share = -1, 0.0
        pad = ln.height * 0.5  # layout boxes from a downsampled page are often a little tight
        for k, r in enumerate(regions):
            s = overlap_share(ln.bbox, grow(r.bbox, pad))
            if s > share:
                best, share = k, s
        if best >= 0 and share >= min_overlap:
            assigned[best].append(ln)
        else:
            rest.append(ln)
    return assigned, rest


def _regions_beside(regions: list[Region], found: list[LineTable]) -> list[Region]:
    """Layout regions left once tables were found from the lines: a `table` or `figure` region
    holding most of such a table, or lying mostly inside it, was that table (the layout model
    boxes a borderless table as a picture, or a ruled one as a table); its other lines (a
    caption, prose the box took in) are then read as text the layout missed."""
    if not found:
        return list(regions)
    out = []
    for r in regions:
        if r.kind in ("table", "figure") and any(
                overlap_share(t.bbox, r.bbox) > 0.5 or overlap_share(r.bbox, t.bbox) > 0.5 for t in found):
            continue
        out.append(r)
    return out


def _text_blocks_for(kind: str, box, lines: list[OcrLine], cfg: OcrConfig) -> list[tuple[str, tuple, list[OcrLine]]]:
    """(kind, pixel bbox, lines) per paragraph of a text-like region."""
    if kind in ("title", "header", "footer", "figure_caption", "table_caption"):
        ordered = merge_rows(sort_lines(lines))
        return [(kind, union([l.bbox for l in ordered]), ordered)]
    # A region may hold several columns (or the layout box was too coarse): cluster its lines
    # into column-aligned groups, order the groups, then split each into paragraphs.
    groups = cluster_lines(lines, cfg.small_reader.block_gap)
    boxes = [union([l.bbox for l in g]) for g in groups]
    out = []
    words = [sum(len(l.text.split()) for l in g) for g in groups]  # the form rule reads them
    for gi in order_boxes(boxes, OrderParams.for_blocks(median_height([l.bbox for l in lines])), words=words):
        ordered = merge_rows(sort_lines(groups[gi]))
        for p in split_paragraphs(ordered, cfg.small_reader.paragraph_gap):
            out.append((kind, union([l.bbox for l in p]), p))
    return out


PROSE_TITLE_MIN_ROWS = 3  # rows of a "title" region that make it a paragraph, with the two below
PROSE_TITLE_MIN_WORDS = 20
PROSE_TITLE_MAX_SIZE = 1.1  # its line height over the page's median line height


def _prose_title(rlines: list[OcrLine], lines: list[OcrLine]) -> bool:
    """A "title" region that is a paragraph: three rows or more, twenty words or more, set no
    larger than the page's text. The layout model boxes body paragraphs as titles on some
    inputs (a clip of a page, where nothing larger sets them apart), and a heading of forty
    words is then written as one, which a reader never would."""
    rows = merge_rows(sort_lines(rlines))
    if len(rows) < PROSE_TITLE_MIN_ROWS or sum(len(l.text.split()) for l in rlines) < PROSE_TITLE_MIN_WORDS:
        return False
    return median_height([l.bbox for l in rows]) <= PROSE_TITLE_MAX_SIZE * median_height([l.bbox for l in lines])


def _read_lines(reader: LineReader, image: np.ndarray, script: str | None, task: OcrTask) -> list[OcrLine]:
    """The reader's lines; a reader that takes language packs (Tesseract) gets the request's."""
    if task.languages and hasattr(reader, "languages_for"):
        return reader.read_image_lines(image, script, task.languages)
    return reader.read_image_lines(image, script)


def mixed_crops(image: np.ndarray, task: OcrTask, cfg: OcrConfig) -> list[tuple[tuple[int, int, int, int], np.ndarray]]:
    """(pixel box, crop) of each picture region of a mixed page that is big enough to read."""
    h, w = image.shape[:2]
    pad, scale = cfg.small_reader.mixed_region_pad_pt, task.scale
    out = []
    for x0, y0, x1, y1 in task.decision.ocr_regions:
        px = (max(0, int((x0 - pad) * scale)), max(0, int((y0 - pad) * scale)),
              min(w, int((x1 + pad) * scale) + 1), min(h, int((y1 + pad) * scale) + 1))
        if px[2] - px[0] >= 4 and px[3] - px[1] >= 4:
            out.append((px, image[px[1]:px[3], px[0]:px[2]]))
    return out


def line_images(task: OcrTask, layout: LayoutResult, cfg: OcrConfig) -> list[np.ndarray]:
    """The images `read_task_with_lines` asks its reader to read, in the order it asks: the
    upright page, or a mixed page's picture crops. A batching reader reads them all first."""
    image = upright(task.image, layout.rotation)
    if task.decision.route == "mixed" and task.decision.ocr_regions:
        return [crop for _px, crop in mixed_crops(image, task, cfg)]
    return [image]


class PreparedLines:
    """A `LineReader` that hands out lines already read (by a batched call), in request order,
    under the name of the reader that read them."""

    def __init__(self, reader, lines: list[list[OcrLine]], suppressed: int = 0):
        self.name, self.version = reader.name, reader.version
        self._lines = list(lines)
        self._suppressed = suppressed

    def read_image_lines(self, image: np.ndarray, script: str | None = None) -> list[OcrLine]:
        if not self._lines:
            raise RuntimeError("batched reading: more images asked for than were read")
        return self._lines.pop(0)

    def take_suppressed(self) -> int:
        n, self._suppressed = self._suppressed, 0
        return n


def read_task_with_lines(
    task: OcrTask, layout: LayoutResult, reader: LineReader, cfg: OcrConfig, *, script: str | None = None,
    tables=None,
) -> Reading:
    """Read a task with `reader` and turn its lines into blocks in reading order."""
    sr = cfg.small_reader
    script = script or task.decision.script or None
    image = upright(task.image, layout.rotation)
    scale = task.scale
    pieces: list[tuple[str, tuple, list[OcrLine]]] = []  # (kind, pixel bbox, lines)
    table_cells: dict[int, tuple[list[list[str]], str]] = {}
    line_tables: dict[int, LineTable] = {}

    below_cut: list[OcrLine] = []  # lines the reader read under its score cut (`unread_lines`)
    figure_lines: list[list[OcrLine]] = []  # lines of each region kept as a figure
    if task.decision.route == "mixed" and task.decision.ocr_regions:
        # Only the pictures whose text the text layer lacks; each crop is read on its own.
        lines = []
        for px, crop in mixed_crops(image, task, cfg):
            crop_lines = _read_lines(reader, crop, script, task)
            for ln in [*crop_lines, *below_cut_of(crop_lines)]:
                b = ln.bbox
                ln.bbox = (b[0] + px[0], b[1] + px[1], b[2] + px[0], b[3] + px[1])
            for group in cluster_lines(crop_lines, sr.block_gap):
                pieces.extend(_text_blocks_for("text", None, group, cfg))
            lines.extend(crop_lines)
            below_cut += below_cut_of(crop_lines)
    else:
        lines = _read_lines(reader, image, script, task)
        below_cut = below_cut_of(lines)
        # before anything groups them: a line bridging two columns would tie them into one block
        lines = split_at_gutters(lines, sr.gutter_min_rows, sr.gutter_min_width)
        mark_scripts(lines, image, sr.script_raise_min, sr.script_drop_min, sr.script_max_height)
        # borderless tables from the lines' own column alignment, whatever the layout model says
        found = find_line_tables(lines, scale, image.shape[1], cfg.tables,
                                 [r.bbox for r in layout.regions if r.kind == "table"]) if tables is not None else []
        regions = _regions_beside(layout.regions, found)
        for t in found:
            line_tables[len(pieces)] = t
            pieces.append(("table", t.bbox, t.lines))
        claimed = {id(ln) for t in found for ln in t.lines}
        # text taken for a table by its lines' mere grid shape: only without the search above
        # (it takes forms, lists and prose columns for tables, which that search tells apart)
        grids = tables is not None and not cfg.tables.line_tables
        assigned, rest = assign_lines([ln for ln in lines if id(ln) not in claimed], regions, sr.region_assign_min_overlap)
        for region, rlines in zip(regions, assigned):
            kind = region.kind
            if kind == "figure":
                area = max(1.0, (region.bbox[2] - region.bbox[0]) * (region.bbox[3] - region.bbox[1]))
                covered = sum((l.bbox[2] - l.bbox[0]) * l.height for l in rlines) / area
                chars = sum(len(l.text) for l in rlines) / max(1, len(rlines))
                if covered >= sr.figure_text_min_area or (
                    len(rlines) >= sr.figure_text_min_lines and chars >= sr.figure_text_min_chars
                ):
                    kind = "text"  # a "figure" that is mostly prose: read it rather than lose it
                elif tables is not None and looks_like_grid(
                        [l for l in rlines if len(l.text) <= cfg.tables.max_cell_chars * cfg.tables.prose_factor], cfg.tables):
                    # a borderless table (maybe with its caption and prose) the layout model took
                    # for a picture: read it (the grid test below) rather than drop its cells
                    kind = "text"
                else:
                    pieces.append(("figure", region.bbox, []))
                    figure_lines.append(rlines)
                    continue
            if kind == "title" and _prose_title(rlines, lines):
                kind = "text"  # body text the layout model boxed as a title (seen on clips of a page)
            if kind in ("text", "reference") and grids and looks_like_grid(rlines, cfg.tables):
                kind = "table"  # an unruled table the layout model called text: keep its grid
            elif kind == "table" and (looks_like_prose(rlines, cfg.tables) or (
                    cfg.tables.line_tables and prose_columns(rlines, scale, cfg.tables))):
                kind = "text"  # columns of prose the layout model called a table
            if kind == "table" and not rlines:
                continue  # a box with no line of its own (they went to an overlapping region): no block
            if kind == "table":
                if tables is not None and rlines:
                    x0, y0 = int(max(0, region.bbox[0])), int(max(0, region.bbox[1]))
                    crop = image[y0:int(region.bbox[3]) + 1, x0:int(region.bbox[2]) + 1]
                    local = [OcrLine((l.bbox[0] - x0, l.bbox[1] - y0, l.bbox[2] - x0, l.bbox[3] - y0), l.text, l.confidence) for l in rlines]
                    table_cells[len(pieces)] = tables.read(crop, local)
                pieces.append(("table", union([region.bbox] + [l.bbox for l in rlines]), rlines))
                continue
            if rlines:
                pieces.extend(_text_blocks_for(kind, region.bbox, rlines, cfg))
        for group in cluster_lines(rest, sr.block_gap):  # text the layout model missed
            if grids and looks_like_grid(group, cfg.tables):
                box = union([l.bbox for l in group])
                x0, y0 = int(box[0]), int(box[1])
                local = [OcrLine((l.bbox[0] - x0, l.bbox[1] - y0, l.bbox[2] - x0, l.bbox[3] - y0), l.text, l.confidence) for l in group]
                table_cells[len(pieces)] = tables.read(image[y0:int(box[3]) + 1, x0:int(box[2]) + 1], local)
                pieces.append(("table", box, group))
            else:
                pieces.extend(_text_blocks_for("text", None, group, cfg))

    page_h = task.width if layout.rotation in (90, 270) else task.height  # upright frame
    # Reading order over everything we produced plus any text-layer blocks (mixed pages).
    text_layer = list(task.text_blocks)
    boxes = [tuple(v / scale for v in p[1]) for p in pieces] + [tuple(b.bbox) for b in text_layer]
    kinds = [p[0] for p in pieces] + [b.role for b in text_layer]
    furniture = _furniture(pieces, boxes, text_layer, lines, scale, page_h, cfg)
    for i, (k, _d) in furniture.items():
        kinds[i] = k  # furniture is ordered outside the body (header first, footer last)
    words = [0 if p[0] in ("figure", "table") else sum(len(l.text.split()) for l in p[2]) for p in pieces]
    words += [0 if b.role in ("figure", "table") else len(b.text.split()) for b in text_layer]
    # OCR line height in points, like `boxes`; a mixed page's OCR lines are a picture's, not its text's
    params = OrderParams.for_blocks(median_height([l.bbox for l in lines]) / scale, line_sets_gap=not text_layer)
    order = order_boxes(boxes, params, words=words, kinds=kinds)
    blocks: list[Block] = []
    for pos, i in enumerate(order):
        if i >= len(pieces):
            blocks.append(text_layer[i - len(pieces)].model_copy(update={"order": pos}))
            continue
        kind, _box, plines = pieces[i]
        decision = None
        if i in furniture:
            kind, decision = furniture[i]
        role = ROLE_OF.get(kind, "paragraph")
        text, cells = "", None
        spans = None
        if kind == "table" and i in line_tables:
            cells, text, spans = line_tables[i].cells, line_tables[i].markdown(), line_tables[i].spans
        elif kind == "table":
            got, method = table_cells.get(i, ([], "none"))
            if got:
                cells, text = got, cells_to_markdown(got)
            else:  # no grid recovered: keep rows visibly, say so in the text, never a flat paragraph
                text = "\n".join(l.text for l in merge_rows(sort_lines(plines)))
        elif kind != "figure":
            if kind in ("title", "header", "footer"):
                text = " ".join(l.text for l in plines)
            else:  # paragraphs kept apart inside one block (e.g. a demoted `header` region)
                paras = split_paragraphs(sort_lines(plines), cfg.small_reader.paragraph_gap)
                text = "\n\n".join(join_text(p) for p in paras)
        conf = mean_confidence(plines) if plines else (1.0 if kind == "figure" else 0.0)
        blocks.append(Block(
            text=text, role=role, bbox=tuple(round(v, 2) for v in boxes[i]), page=task.number,
            engine=reader.name, engine_version=reader.version, route="ocr",
            confidence=float(min(1.0, max(0.0, conf))), order=pos, cells=cells, spans=spans,
            level=1 if role == "heading" else None, furniture=decision,
        ))

    all_text = " ".join(l.text for l in lines)
    guess = reading_script(all_text, cfg.scripts)
    checks = [CheckResult(
        name="script", passed=True, score=guess.share, threshold=cfg.scripts.min_share,
        reason=f"expected {script or 'unknown'}; read {guess.reason}",
    )]
    suppressed = reader.take_suppressed() if hasattr(reader, "take_suppressed") else 0
    if suppressed:
        checks.append(CheckResult(
            name="foreign_script_chars", passed=True, score=float(suppressed), threshold=None,
            reason=f"{suppressed} characters outside {script} were suppressed at decoding (line confidence lowered)",
        ))
    if below_cut or figure_lines:
        found = candidates(below_cut, figure_lines, cfg.small_reader.text_score, scale, page_h,
                           sr.furniture_band, cfg.checks)
        left = unread_lines_check(found, [*text_layer, *blocks], cfg.checks)
        if left is not None:
            checks.append(left)
    reading = Reading(blocks=blocks, rotation=layout.rotation, checks=checks, engine=reader.name,
                      script=script or guess.script)
    return reading
