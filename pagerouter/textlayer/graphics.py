"""Rules, images and vector figures from one `page.get_bboxlog()` pass.

The bbox log lists every fill/stroke/image operation with its box, which is all table and
figure detection need (no path geometry), and is as cheap as `get_drawings()` on ordinary
pages. Boxes are converted to displayed-page coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pymupdf

from ..common import pagetext
from ..config.textlayer import TextLayerConfig
from ..common.geometry import BBox
from ..common.pagetext import page_images
from ..layout.paints import IMAGE_PAINTS, paint_log

_THIN = 2.5
_LONG_BUCKET = 24  # tiles on one edge coordinate past which `seam_edges` tests overlap with arrays
_FRAME_MIN = 10.0  # pt: a stroked rectangle at least this wide and tall can frame a row of text
# pt: the text pass bounds a stroke of width w with mitred joins up to 10 w around it: a box this
# shallow may be a rule of up to 1.5 pt drawn so (and the bbox log tells)
_MITRED_MAX = 30.0


@dataclass
class Graphics:
    hrules: list[BBox] = field(default_factory=list)
    vrules: list[BBox] = field(default_factory=list)
    images: list[BBox] = field(default_factory=list)
    shapes: list[BBox] = field(default_factory=list)  # non-thin paths (candidates for vector figures)
    skipped_reason: str = ""


def vectors_in_textdict() -> bool:
    """True when `extract_textdict` collects vector drawings (type 3 blocks) with the text."""
    return bool(pagetext.TEXT_FLAGS & pymupdf.TEXT_COLLECT_VECTORS)


def read_graphics(
    page: pymupdf.Page, rot: pymupdf.Matrix | None, cfg: TextLayerConfig, textdict: dict | None = None,
    size: tuple[float, float] | None = None,
) -> Graphics:
    """`rot`: unrotated page -> the frame read in; `size`: that frame's (width, height) (default the page's)."""
    g = Graphics()
    W, H = size if size is not None else (page.rect.width, page.rect.height)
    page_area = W * H
    items: list[tuple[str, tuple]] = []
    frames: set[tuple] = set()
    grown: list[tuple] = []  # stroke boxes the text pass gave before they were shrunk (`_tight_strokes`)
    has_images = bool(page_images(page))
    if textdict is not None and vectors_in_textdict():
        for b in textdict.get("blocks", ()):
            if b.get("type") == 3:
                items.append(("stroke-path" if b.get("stroked") else "fill-path", b["bbox"]))
        # a rectangle drawn as a stroked outline around at least a line of text (a table's outer
        # frame) borders cells as a fill's edges do; other stroked paths stay shapes (their box
        # is no line; short thick strokes report boxes a few points wide)
        frames = {tuple(b["bbox"]) for b in textdict.get("blocks", ())
                  if b.get("type") == 3 and b.get("stroked") and b.get("isrect")
                  and min(b["bbox"][2] - b["bbox"][0], b["bbox"][3] - b["bbox"][1]) >= _FRAME_MIN}
        # a stroke bounded with room for mitred corners reads as a box a few points deep where
        # a rule is drawn; only then does the page run again, for the bbox log's stroke boxes
        if any(k == "stroke-path" and _THIN < min(b[2] - b[0], b[3] - b[1]) <= _MITRED_MAX for k, b in items):
            items, frames, grown = _tight_strokes(page, textdict, items, frames)
        if has_images:
            items += [("fill-image", box) for k, box in paint_log(page) if k in IMAGE_PAINTS]
    else:
        items = paint_log(page) if has_images else page.get_bboxlog()
        items = [("fill-image", b) if k in IMAGE_PAINTS else (k, b) for k, b in items]
    many = len(items) > cfg.max_graphics_items
    if many:
        g.skipped_reason = f"{len(items)} drawing operations (> {cfg.max_graphics_items}): rules and vector figures not analysed"
    # fill edges that are seams, not rules (no fill edge is read on a page of too many drawings)
    seams = seam_edges(textdict, on_blank=not has_images) if textdict is not None and vectors_in_textdict() and not many else {}

    def on_page(box) -> tuple[float, float, float, float]:
        """`box` upright and clipped to the page, in plain floats (a Rect per drawing op dominated
        the loop below)."""
        if rot is not None:
            box = tuple(pymupdf.Rect(box) * rot)
        return max(box[0], 0.0), max(box[1], 0.0), min(box[2], W), min(box[3], H)

    for kind, box in items:
        orig = box
        if kind == "fill-image":
            pass
        elif many or kind not in ("fill-path", "stroke-path"):
            continue
        x0, y0, x1, y1 = on_page(box)
        w, h = x1 - x0, y1 - y0
        if w < 0 or h < 0 or (w == 0 and h == 0):
            continue
        t = (x0, y0, x1, y1)
        if kind == "fill-image":
            g.images.append(t)
        elif h <= _THIN and w >= 6:
            g.hrules.append(t)
        elif w <= _THIN and h >= 6:
            g.vrules.append(t)
        elif w > _THIN and h > _THIN and w * h < 0.5 * page_area:
            g.shapes.append(t)
            # shaded cells and boxes, framed tables: their edges act as rules
            if (kind == "fill-path" or tuple(orig) in frames) and w >= 6 and h >= 6:
                gone = seams.get(tuple(orig), ())
                g.hrules += [e for i, e in ((0, (x0, y0, x1, y0)), (1, (x0, y1, x1, y1))) if i not in gone]
                g.vrules += [e for i, e in ((2, (x0, y0, x0, y1)), (3, (x1, y0, x1, y1))) if i not in gone]
    # the shrunk strokes' boxes as the text pass gave them stay shapes for the vector-figure
    # search (a chart drawn in thin strokes is found by the boxes its strokes cover), never rules
    for box in grown if not many else ():
        x0, y0, x1, y1 = on_page(box)
        if x1 - x0 > _THIN and y1 - y0 > _THIN and (x1 - x0) * (y1 - y0) < 0.5 * page_area:
            g.shapes.append((x0, y0, x1, y1))
    return g


def _tight_strokes(page: pymupdf.Page, textdict: dict, items: list[tuple[str, tuple]], frames: set[tuple]
                   ) -> tuple[list[tuple[str, tuple]], set[tuple], list[tuple]]:
    """The text pass may bound a stroked path with room for a mitred corner (ten times the line
    width around it): a 0.5 pt rule comes out 10 pt tall, no rule but a framed box whose two
    edges cut the rows over and under it. The bbox log bounds each stroked path by its width.
    Path by path (a text-pass block that `continues` is the same path's next piece), where the
    two passes list the same paths, a path whose text-pass box stands further out than the
    stroke's half width around the log's is shrunk by that margin, piece by piece; a shrunk
    stroked rectangle still wide and tall enough stays a frame. Also returns the text-pass boxes
    that were shrunk (the figure search still reads them as shapes)."""
    blocks = [b for b in textdict.get("blocks", ()) if b.get("type") == 3 and b.get("stroked")]
    paths: list[list[dict]] = []
    for b in blocks:
        if b.get("continues") and paths:
            paths[-1].append(b)
        else:
            paths.append([b])
    tight = [tuple(box) for k, box in page.get_bboxlog() if k == "stroke-path"]
    if len(tight) != len(paths):
        return items, frames, []  # the passes disagree: keep the text pass's boxes
    shrunk: dict[tuple, tuple] = {}
    for pieces, t in zip(paths, tight):
        u = [min(b["bbox"][0] for b in pieces), min(b["bbox"][1] for b in pieces),
             max(b["bbox"][2] for b in pieces), max(b["bbox"][3] for b in pieces)]
        d = min(t[0] - u[0], t[1] - u[1], u[2] - t[2], u[3] - t[3])
        if d <= 0.5:
            continue
        for b in pieces:
            x0, y0, x1, y1 = b["bbox"]
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            hw, hh = max(0.0, (x1 - x0) / 2 - d), max(0.0, (y1 - y0) / 2 - d)
            shrunk[tuple(b["bbox"])] = (cx - hw, cy - hh, cx + hw, cy + hh)
    if not shrunk:
        return items, frames, []
    out = [(k, shrunk.get(tuple(box), box)) if k == "stroke-path" else (k, box) for k, box in items]
    kept = set()
    for f in frames:
        g = shrunk.get(f, f)
        if min(g[2] - g[0], g[3] - g[1]) >= _FRAME_MIN:
            kept.add(g)
    return out, kept, list(shrunk)


def seam_edges(textdict: dict, on_blank: bool = False) -> dict[tuple, set[int]]:
    """Edges of filled rectangles that are no rule: the seams where a fill meets a fill of the
    same colour. Word and spreadsheet exports paint one shaded cell as several tiles (padding
    strips, the text area) and shaded neighbours edge to edge; the reader sees one even colour,
    but each tile's edges read as rules cut a shaded header or row band into extra columns
    and rows (a table whose every cell was split in three). An edge counts as a seam when
    tiles of its colour cover at least 90% of it from the other side, or thin rules (of any
    colour) drawn along it do: the rule is read as a rule already, and the tile's own edge,
    ending a few points short of or past the rule's ends, adds false column joints. Every edge
    of a tile nested in a tile of its colour is one too (`_nested`), and, with `on_blank` (a page
    without images), every edge of a white tile painted where nothing of another colour was
    painted before it, a backdrop to what is drawn on it (`_white_panels`).
    Returns {bbox: {edge}}, edges 0 top, 1 bottom, 2 left, 3 right."""
    fills = [(tuple(b["bbox"]), (b.get("color"), b.get("alpha"))) for b in textdict.get("blocks", ())
             if b.get("type") == 3 and not b.get("stroked") and b.get("isrect")]
    if len(fills) < 2:
        return {}
    # index the tiles by colour and by each edge's coordinate (rounded; neighbours are looked
    # up too). A page of a thousand shaded cells has columns of cells sharing one x, and trying
    # every cell of the column against every other was quadratic (350 ms on one page).
    by_edge: dict[tuple, list[tuple]] = {}
    thin: dict[tuple, list[tuple]] = {}  # thin rules by axis and rounded centre line
    for box, col in fills:
        for i, v in enumerate(box):  # 0 x0, 1 y0, 2 x1, 3 y1
            along = (box[0], box[2]) if i in (1, 3) else (box[1], box[3])
            by_edge.setdefault((col, i, round(v)), []).append((along[0], along[1], box))
        w, h = box[2] - box[0], box[3] - box[1]
        if h <= _THIN and w >= 6:
            thin.setdefault((0, round((box[1] + box[3]) / 2)), []).append(box)
        elif w <= _THIN and h >= 6:
            thin.setdefault((1, round((box[0] + box[2]) / 2)), []).append(box)
    # a long bucket gets arrays of its tiles' extents: the tiles that overlap an edge are
    # found in one vectorised test
    arrays = {key: (np.array([t[0] for t in tiles]), np.array([t[1] for t in tiles]))
              for key, tiles in by_edge.items() if len(tiles) > _LONG_BUCKET}
    # the same for long runs of thin rules on one line: (across-axis ends, along-axis ends)
    thin_arrays = {}
    for (axis, k), rules in thin.items():
        if len(rules) > _LONG_BUCKET:
            c = (1, 3) if axis == 0 else (0, 2)
            b = (0, 2) if axis == 0 else (1, 3)
            thin_arrays[(axis, k)] = tuple(np.array([o[i] for o in rules]) for i in (*c, *b))
    out: dict[tuple, set[int]] = {}
    # edge -> (coordinate index on this box, the facing coordinate index of the tile across, along-axis)
    spec = {0: (1, 3, 0), 1: (3, 1, 0), 2: (0, 2, 1), 3: (2, 0, 1)}
    for box, col in fills:
        for edge, (mine, theirs, axis) in spec.items():
            v = box[mine]
            a0, a1 = (box[0], box[2]) if axis == 0 else (box[1], box[3])
            if a1 - a0 <= 0:
                continue
            covered = 0.0
            for k in (round(v) - 1, round(v), round(v) + 1):
                tiles = by_edge.get((col, theirs, k), ())
                arr = arrays.get((col, theirs, k))
                if arr is not None:  # (a tile that does not overlap the edge adds nothing)
                    tiles = [tiles[j] for j in np.nonzero((arr[0] < a1) & (arr[1] > a0))[0]]
                for b0, b1, o in tiles:
                    if o is box or abs(o[theirs] - v) > 0.6:
                        continue
                    covered += max(0.0, min(a1, b1) - max(a0, b0))
                rules = thin.get((axis, k), ())
                tarr = thin_arrays.get((axis, k))
                if tarr is not None:
                    c0s, c1s, b0s, b1s = tarr
                    rules = [rules[j] for j in np.nonzero((c0s - 0.6 <= v) & (v <= c1s + 0.6) & (b0s < a1) & (b1s > a0))[0]]
                for o in rules:
                    c0, c1 = (o[1], o[3]) if axis == 0 else (o[0], o[2])
                    if o is box or not c0 - 0.6 <= v <= c1 + 0.6:
                        continue
                    b0, b1 = (o[0], o[2]) if axis == 0 else (o[1], o[3])
                    covered += max(0.0, min(a1, b1) - max(a0, b0))
            if covered >= 0.9 * (a1 - a0):
                out.setdefault(box, set()).add(edge)
    for box in _nested(fills) + (_white_panels(textdict) if on_blank else []):
        out.setdefault(box, set()).update(range(4))
    return out


def _nested(fills: list[tuple[tuple, tuple]]) -> list[tuple]:
    """Fills painted inside a fill of their colour, nothing of another colour painted between
    the two over them: a cell's text-area tile inside the cell (Word paints both white). None
    of its edges shows; read as rules, they split each header cell into three columns. A white
    cell over a black grid on a white page box keeps its edges: the black lies between."""
    if len(fills) < 2:
        return []
    boxes = np.array([b for b, _ in fills], dtype=float)
    keys = {c: i for i, c in enumerate(dict.fromkeys(c for _, c in fills))}
    cols = np.array([keys[c] for _, c in fills])
    order = np.arange(len(fills))
    out = []
    for j, (box, col) in enumerate(fills):
        if col[1] == 0:
            continue  # an invisible fill (alpha 0): what its edges draw is left as it was read
        same = (cols == keys[col]) & (order < j)
        if not same[:j].any():
            continue
        x0, y0, x1, y1 = box
        inside = same & (boxes[:, 0] <= x0 - 0.5) & (boxes[:, 1] <= y0 - 0.5) & (boxes[:, 2] >= x1 + 0.5) & (boxes[:, 3] >= y1 + 0.5)
        hit = np.nonzero(inside)[0]
        if not len(hit):
            continue
        o = hit[-1]  # the latest fill of its colour around it
        between = (order > o) & (order < j) & (cols != keys[col]) & (boxes[:, 0] < x1 + 0.5) & (
            boxes[:, 2] > x0 - 0.5) & (boxes[:, 1] < y1 + 0.5) & (boxes[:, 3] > y0 - 0.5)
        if not between.any():
            out.append(box)
    return out


_WHITE = 0xFFFFFF
_PANEL_MIN = 20.0
_PANELS_MAX = 200


def _white_panels(textdict: dict) -> list[tuple]:
    """White filled rectangles painted on the bare page as a backdrop: nothing of another colour
    painted before them overlaps them, and drawings painted after them lie inside them. A web page
    printed to PDF lays a white panel behind each of its tables, a few points wider than the
    table's own grid; white on white draws nothing, but its edges, read as rules, framed the page's
    four tables as one grid with no columns. (A white tile among coloured ones, a cell of a heat
    map, has nothing drawn inside it: its edges stay, as the cell's place.) Only white rectangles
    at least `_PANEL_MIN` pt on each side are candidates, at most `_PANELS_MAX` of them: each is
    tested against every drawing of the page, and a spreadsheet's thousands of white cells are
    no panels."""
    vec = [b for b in textdict.get("blocks", ()) if b.get("type") == 3]
    if len(vec) < 2:
        return []
    cand = [j for j, b in enumerate(vec) if not b.get("stroked") and b.get("isrect") and b.get("color") == _WHITE
            and b.get("alpha") != 0 and min(b["bbox"][2] - b["bbox"][0], b["bbox"][3] - b["bbox"][1]) >= _PANEL_MIN]
    if not cand or len(cand) > _PANELS_MAX:
        return []
    boxes = np.array([b["bbox"] for b in vec], dtype=float)
    other = np.array([b.get("color") != _WHITE and b.get("alpha") != 0 for b in vec])
    out = []
    for j in cand:
        x0, y0, x1, y1 = vec[j]["bbox"]
        under = other[:j] & (boxes[:j, 0] < x1) & (boxes[:j, 2] > x0) & (boxes[:j, 1] < y1) & (boxes[:j, 3] > y0)
        if under.any():
            continue
        later = boxes[j + 1:]
        inside = (later[:, 0] >= x0) & (later[:, 2] <= x1) & (later[:, 1] >= y0) & (later[:, 3] <= y1) & (
            (later[:, 2] - later[:, 0]) * (later[:, 3] - later[:, 1]) < 0.9 * (x1 - x0) * (y1 - y0))
        if inside.any():
            out.append(tuple(vec[j]["bbox"]))
    return out


def vector_figures(shapes: list[BBox], page_w: float, page_h: float, cfg: TextLayerConfig) -> list[BBox]:
    """Clusters of many drawn shapes covering a fair part of the page (charts, diagrams)."""
    if len(shapes) < cfg.vector_figure_min_paths:
        return []
    cell = 4.0  # raster of 4 pt cells: shapes closer than one cell join a cluster
    gw, gh = int(page_w / cell) + 2, int(page_h / cell) + 2
    grid = np.zeros((gh, gw), dtype=bool)
    for x0, y0, x1, y1 in shapes:
        grid[int(y0 / cell) : int(y1 / cell) + 2, int(x0 / cell) : int(x1 / cell) + 2] = True
    from scipy import ndimage  # here: importing scipy.ndimage costs ~0.3 s at every CLI start

    labels, n = ndimage.label(grid)
    if n == 0:
        return []
    counts = np.zeros(n + 1, dtype=np.int32)
    for x0, y0, x1, y1 in shapes:
        counts[labels[int((y0 + y1) / 2 / cell), int((x0 + x1) / 2 / cell)]] += 1
    out = []
    for k, sl in enumerate(ndimage.find_objects(labels), start=1):
        if sl is None or counts[k] < cfg.vector_figure_min_paths:
            continue
        box = (sl[1].start * cell, sl[0].start * cell, min(page_w, sl[1].stop * cell), min(page_h, sl[0].stop * cell))
        if (box[2] - box[0]) * (box[3] - box[1]) >= cfg.vector_figure_min_area * page_w * page_h:
            out.append(box)
    return out
