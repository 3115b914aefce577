"""Reading a good text layer with layout: blocks, reading order, roles, tables, furniture.

    furniture = FurnitureModel.from_document(doc, page_numbers, cfg)   # once per document
    blocks = read_text_layer(page, textdict, number, cfg, furniture, skip_regions=...)

Pipeline of one page (all cheap unless a table candidate shows up):

1. visible line fragments from the shared `textdict` (invisible text: alpha 0, render
   mode 3/7, fully clipped glyphs, text painted over by a later image, is skipped: it is not
   what the page shows), merged on their baseline (lines.py);
2. headers/footers/page numbers flagged from the FurnitureModel (furniture.py); they stay
   as blocks with their role, outside the body reading order (top ones first, bottom last);
3. rules, images and drawing clusters (graphics.py: the dict's vector blocks, or one
   `get_bboxlog()`); table
   candidates from rules or aligned text, cells from word positions (tables.py);
4. reading order of lines, tables and figures by the column-aware XY cut every route shares
   (pagerouter.layout.reading_order), or MuPDF's own order where the cut measurably interleaves
   what MuPDF keeps whole (native.py);

Everything is read in the page's reading frame (frame.py): the displayed page, or the page
turned so that its dominant writing direction runs left to right (a /Rotate 90 page with
upright content, text drawn sideways); blocks' boxes are mapped back to the displayed page.
5. paragraphs, hyphenation joins, roles: heading (level by document size ladder), list_item,
   caption, footnote, code (roles.py, hyphen.py).

List items: bullet glyphs are stripped from the text (the renderer writes "- "); numbers
and letters ("1.", "a)") are kept. Headings are plain text (no '#'); tables carry their
cells and a Markdown table as text; figures have empty text and their bbox.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import pymupdf

from ..config.textlayer import TextLayerConfig
from ..common.geometry import BBox, center_inside, overlap_share
from ..model import Block
from ..layout.reading_order import OrderParams, order_with_keys
from ..layout.paints import hidden_text_boxes
from .frame import reading_frame
from .forms import FormReader
from .furniture import FurnitureModel, is_page_number, normalise
from .glyph_runs import page_glyphs
from .graphics import read_graphics, vector_figures
from .heading_levels import heading_ladder
from .hyphen import join_lines, page_vocabulary
from .lines import Line, extract_lines, merge_fragments
from .native import prefer_native
from .proof_reads import mark_proof_reads
from .roles import Para, assign_roles, attach_captions, group_paragraphs, list_marker
from .tables import (
    DrawnStrokes,
    Table,
    build_table,
    column_candidates,
    rule_candidates,
    rules_short_of_rows,
    side_by_side_candidates,
    text_candidates,
    text_columns,
)
from .tables_label_value import label_value_candidates

__all__ = [
    "FurnitureModel",
    "read_text_layer",
    "join_lines",
    "list_marker",
    "is_page_number",
    "normalise",
]


class _Atom:
    """A table or figure taking part in reading order as one item."""

    def __init__(self, bbox: BBox, kind: str, table: Table | None = None) -> None:
        self.x0, self.y0, self.x1, self.y1 = bbox
        self.kind = kind
        self.table = table

    def words(self) -> int:
        return 0


def _body_size(lines: list[Line]) -> float:
    c: Counter[float] = Counter()
    for ln in lines:
        c[ln.size] += ln.chars
    return max(c.items(), key=lambda kv: kv[1])[0] if c else 10.0


_TOL = 2.0
"""Points a line's centre may lie outside a table/figure box and still belong to it."""


def read_text_layer(
    page: pymupdf.Page,
    textdict: dict[str, Any],
    number: int,
    cfg: TextLayerConfig,
    furniture: FurnitureModel | None = None,
    *,
    skip_regions: Sequence[BBox] = (),
    invisible_too: bool = False,
) -> list[Block]:
    """Blocks of one page in reading order (`order` 0..n-1), furniture included with its role.

    `textdict` is `pagerouter.common.pagetext.extract_textdict(page)`; `number` is 1-based;
    `skip_regions` (displayed page points) are handled elsewhere (OCR of pictures): no figure
    blocks are emitted there; `invisible_too` reads invisible (render mode 3) text as well (a
    hidden OCR layer triage proved, `TriageDecision.hidden_layer`).
    """
    # read in the frame where the text runs left to right (frame.py): the displayed page,
    # or the page turned so that rotated text is upright; boxes go back to displayed at `add`
    frame = reading_frame(page, textdict)
    W, H = frame.width, frame.height
    rot, derot = frame.matrix, frame.inverse
    skip_regions = [frame.frame_box(r) for r in skip_regions]
    # text painted over by a later opaque image is not on the page (a hidden OCR layer under
    # a scan, a form field covered by a picture); only pages that list images pay for this
    hidden: list = []
    if cfg.drop_text_under_images and not invisible_too:
        hidden, _total = hidden_text_boxes(page, cfg.hidden_text_min_image_share)
    lines = merge_fragments(extract_lines(textdict, cfg, rot, hidden, invisible_too), cfg, page_glyphs(page, rot, derot))
    # form fields: each widget's value onto its label's line (pages with widgets only), and printed
    # "Label:  value" fragments on one row joined (forms.py)
    form = FormReader()
    lines = form.pair_printed(form.place(page, lines, frame, cfg), W, cfg)
    em = _body_size(lines)
    g = read_graphics(page, rot, cfg, textdict, size=(W, H))
    # ruled tables first: their rows may reach into the header/footer bands
    found: list[Table] = []
    short: list[Table] = []  # tables cut at rules drawn short of their rows (see above)
    if cfg.detect_tables:
        for region, ys, xs in rule_candidates(g.hrules, g.vrules, lines, cfg, H):
            tab = build_table(page, region, ys, xs, cfg, em, derot, rot, ruled=True, vsegs=g.vrules, hsegs=g.hrules)
            if tab is None:
                continue
            # rules over the value columns only (a statement's group underline and total rules):
            # the aligned text around them is the table; this one stands only if none is found
            (short if rules_short_of_rows(region, xs, lines, cfg) else found).append(tab)
    in_table = [ln for ln in lines if any(center_inside(ln.bbox, t.bbox, _TOL) for t in found)]
    rest = [ln for ln in lines if not any(center_inside(ln.bbox, t.bbox, _TOL) for t in found)]
    fm = furniture if furniture is not None else FurnitureModel()
    decisions = fm.classify(rest, H, em, cfg, page_width=W, page_number=number)
    form.keep_in_body(rest, decisions)  # a filled field near the page edge is content, never furniture
    body_size = fm.body_size or em
    ladder = heading_ladder(fm.heading_sizes, fm.sampled_pages, fm.body_size, (ln.size for ln in lines), em, cfg)
    body = [ln for ln in rest if ln.role is None]
    furn = [ln for ln in rest if ln.role is not None]
    if cfg.detect_tables:
        # the whole page first (a table may span columns), then each text column on its own: a
        # small table in one column of a two-column page has the other column's prose on its rows
        columns = text_columns(body, cfg, em, W)
        in_columns = column_candidates(body, cfg, em, W, columns)
        # tables side by side under their own captions: each side alone, never rows across both
        beside = side_by_side_candidates(body, cfg, em)
        # furniture lines take part: a table continued at the top of a page starts in the
        # header band (its repeated header row, its first rows); a table keeps them as cells
        whole = [r for r in text_candidates([*body, *furn], cfg, em) if not any(overlap_share(b, r) > 0.5 for b in beside)]
        # two-column tables of labels and amounts, in each text column (tables_label_value.py);
        # like a column's own table, one makes a whole-page region over it and the prose beside it void
        pairs = [r for col in (columns or [body]) for r in label_value_candidates(col, cfg, em)]
        strokes = DrawnStrokes(page, derot)
        drawn: list[BBox] | None = None  # read when a candidate first asks (most pages have none)
        for region in [*beside, *_without_prose_rows(whole, [*in_columns, *pairs], body, cfg), *in_columns, *pairs]:
            if any(overlap_share(region, t.bbox) > 0.3 or overlap_share(t.bbox, region) > 0.3 for t in found):
                continue
            if strokes.drawing(region):
                continue  # the labels of a diagram or chart drawn there, not a table
            if drawn is None:
                drawn = _drawn_figures(g.shapes, found, W, H, cfg) if cfg.vector_figures else []
            if _across_figures(region, body, drawn):
                continue  # the labels of two charts side by side, lined up by chance
            tab = build_table(page, region, [], [], cfg, em, derot, rot, ruled=False)
            if tab is not None:
                found.append(tab)
        found += [t for t in short if not any(overlap_share(t.bbox, f.bbox) > 0.3 for f in found)]
    atoms: list[_Atom] = [_Atom(t.bbox, "table", t) for t in found]
    table_boxes = [t.bbox for t in found]
    if table_boxes:
        body = [ln for ln in body if not any(center_inside(ln.bbox, tb, _TOL) for tb in table_boxes)]
        furn = [ln for ln in furn if not any(center_inside(ln.bbox, tb, _TOL) for tb in table_boxes)]
    del in_table

    figure_boxes: list[BBox] = []
    min_area = cfg.min_figure_area * W * H
    for r in g.images:
        w, h = r[2] - r[0], r[3] - r[1]
        if (w < cfg.min_figure_pt and h < cfg.min_figure_pt) or w * h < min_area:
            continue
        figure_boxes.append(r)
    if cfg.vector_figures and g.shapes:
        for r in _drawn_figures(g.shapes, found, W, H, cfg):
            text_area = sum(
                (ln.x1 - ln.x0) * (ln.y1 - ln.y0) * overlap_share(ln.bbox, r) for ln in body
            )
            if text_area <= cfg.vector_figure_max_text_share * (r[2] - r[0]) * (r[3] - r[1]):
                figure_boxes.append(r)
    kept: list[BBox] = []
    for r in sorted(figure_boxes, key=lambda r: -(r[2] - r[0]) * (r[3] - r[1])):
        if any(overlap_share(r, s) > 0.5 for s in skip_regions):
            continue
        if any(overlap_share(r, k) > 0.8 for k in kept) or any(overlap_share(r, tb) > 0.5 for tb in table_boxes):
            continue
        kept.append(r)
    # a picture under much of the page's text (a scan with its OCR layer, a slide
    # background) is not a figure *in* the flow: it would block every cut of the reading order
    backgrounds = [r for r in kept if sum(1 for ln in body if center_inside(ln.bbox, r)) > max(5, 0.3 * len(body))]
    atoms += [_Atom(r, "figure") for r in kept if r not in backgrounds]

    horiz = [ln for ln in body if ln.horizontal]
    vertical = [ln for ln in body if not ln.horizontal]
    flow: list[Line | _Atom] = [*horiz, *atoms]
    keyed = order_with_keys([(it.x0, it.y0, it.x1, it.y1) for it in flow], OrderParams.for_lines(em, cfg),
                            words=[it.words() for it in flow])
    # the cut's order, unless it interleaves what MuPDF's own order keeps whole (native.py)
    ordered, _reentries = prefer_native([(flow[i], key) for i, key in keyed], cfg)

    vocab = page_vocabulary([ln.text for ln in lines])
    items: list[Para | _Atom] = []
    run: list[tuple[Line, tuple]] = []
    for it, key in ordered:
        if isinstance(it, _Atom):
            items += group_paragraphs(run, em, cfg)
            run = []
            items.append(it)
        else:
            run.append((it, key))
    items += group_paragraphs(run, em, cfg)
    items = form.split(items, Para)  # each form line its own block
    paras = [p for p in items if isinstance(p, Para)]
    assign_roles(paras, body_size, ladder, H, vocab, cfg)
    form.set_roles(paras)
    items = attach_captions(items, em, cfg)

    common = dict(page=number, engine="pymupdf", engine_version=pymupdf.VersionBind, route="text_layer")
    top = sorted((ln for ln in furn if ln.yc < H / 2), key=lambda ln: (round(ln.y0), ln.x0))
    bottom = sorted((ln for ln in furn if ln.yc >= H / 2), key=lambda ln: (round(ln.y0), ln.x0))
    blocks: list[Block] = []

    def add(bbox: BBox, **kw: Any) -> None:
        blocks.append(Block(order=len(blocks), bbox=frame.display_box(tuple(bbox)), **common, **kw))

    for ln in top:
        add(text=ln.text.strip(), role=ln.role, bbox=ln.bbox, confidence=1.0, furniture=decisions.get(id(ln)))
    for r in backgrounds:
        add(text="", role="figure", bbox=r, confidence=1.0)
    for it in items:
        if isinstance(it, _Atom):
            if it.kind == "table" and it.table is not None:
                add(
                    text=it.table.markdown(), role="table", bbox=it.table.bbox,
                    confidence=it.table.confidence, cells=it.table.cells, spans=it.table.spans,
                )  # fmt: skip
            else:
                add(text="", role="figure", bbox=(it.x0, it.y0, it.x1, it.y1), confidence=1.0)
        elif it.text:
            add(text=it.text, role=it.role, bbox=it.bbox, confidence=1.0, level=it.level, fields=it.extra.get("fields"))
    for ln in sorted(vertical, key=lambda ln: (ln.x0, ln.y0)):
        add(text=ln.text.strip(), role="paragraph", bbox=ln.bbox, confidence=1.0)
    for ln in bottom:
        add(text=ln.text.strip(), role=ln.role, bbox=ln.bbox, confidence=1.0, furniture=decisions.get(id(ln)))
    if invisible_too:  # lines of a proven hidden layer that the proof read from the picture instead
        blocks = mark_proof_reads(blocks, textdict, page)
    return blocks


def _drawn_figures(shapes: list[BBox], tables: list[Table], W: float, H: float, cfg: TextLayerConfig) -> list[BBox]:
    """The vector figures of the page's drawn shapes outside the tables found so far (before
    the unruled tables are searched, the ruled ones; for the figure blocks, all of them)."""
    free = [s for s in shapes if not any(center_inside(s, t.bbox, _TOL) for t in tables)]
    return vector_figures(free, W, H, cfg) if free else []


def _across_figures(region: BBox, body: list[Line], figures: list[BBox]) -> bool:
    """The region's lines lie in two or more drawn figures: a table is never read across
    figures (two charts side by side, their tick labels and legends level by chance, made one
    table of both with the gutter between). A table whose shading or frame makes it one figure
    of its own keeps its lines in that one."""
    if len(figures) < 2:
        return False
    held = {i for ln in body if center_inside(ln.bbox, region, _TOL)
            for i, f in enumerate(figures) if center_inside(ln.bbox, f, _TOL)}
    return len(held) >= 2


def _without_prose_rows(regions: list[BBox], in_columns: list[BBox], body: list[Line], cfg: TextLayerConfig) -> list[BBox]:
    """Whole-page table regions, less those that hold a column's table plus the prose of the
    column beside it (the prose shares the table's rows), or that a column's candidate covers:
    that table is found in its column."""
    out = []
    for r in regions:
        spoilt = False
        for c in in_columns:
            if overlap_share(r, c) >= 0.8:
                spoilt = True  # the column's own candidate covers it (rows the prose beside it broke)
            # the column's table on the region's rows (the region may hold only some of them: the
            # prose beside the table lines up with a few of its rows)
            c = (c[0], max(c[1], r[1]), c[2], min(c[3], r[3]))
            if c[3] <= c[1] or overlap_share(c, r) < 0.8:
                continue
            rest = [ln for ln in body if center_inside(ln.bbox, r, _TOL) and not center_inside(ln.bbox, c, _TOL)
                    and c[1] <= ln.yc <= c[3]]  # beside the column's table, on its rows
            long = [ln for ln in rest if ln.words() > cfg.table_max_cell_words]
            inside = [ln.y1 for ln in body if center_inside(ln.bbox, c, _TOL)]
            # prose beside the table keeps its own leading; a table's long cells sit on its rows
            aligned = sum(1 for ln in long if any(abs(ln.y1 - y) <= 1.5 for y in inside))
            if len(long) >= 2 and aligned < 0.5 * len(long):
                spoilt = True
            if _other_type(rest, [ln for ln in body if center_inside(ln.bbox, c, _TOL)]):
                spoilt = True  # a figure's labels beside the column's table, in the figure's type
        if not spoilt:
            out.append(r)
    return out


def _other_type(beside: list[Line], table: list[Line]) -> bool:
    """The lines beside a column's table are set in another type size than the table: a
    figure's labels (5.6 pt beside a 6.3 pt results table), prose in body type. A table's own
    cells share one size, so a table that runs on across the gutter is not spoilt by this."""
    if len(beside) < 2 or not table:
        return False
    sizes: Counter[float] = Counter()
    for ln in table:
        sizes[round(ln.size, 1)] += ln.chars
    size = max(sizes.items(), key=lambda kv: kv[1])[0]
    other = sum(1 for ln in beside if abs(ln.size - size) > max(0.3, 0.05 * size))
    return other >= 2 / 3 * len(beside)
