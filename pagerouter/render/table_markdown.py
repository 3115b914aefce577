"""The one Markdown table writer: a grid of cell strings -> a GFM pipe table.

Both routes that recover table cells (the text layer's `textlayer.tables`, the OCR route's
`ocr.tables`) write a table block's text here, so the same cells give the same Markdown
whichever route read the page. Pure stdlib.

Spanning cells: a grid of cells repeats a spanning cell's text in every column it covers (a
group label "Fiscal 2024" over "Q1 Q2" stands in both columns). The GFM writer keeps that
repetition (a GFM table has no spans: each column still names its group); the HTML writer,
used for tables with several header rows, writes the cell once with `colspan` (and `rowspan`
for a cell a ruled grid draws over several rows), and the JSON block lists it in `spans`."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def _cell(text: str | None, escape: Callable[[str], str] | None = None) -> str:
    # A GFM cell cannot hold a line break, and padding spaces are the renderer's job, not the
    # content's. Without `escape`: backslash first, so the escape added for `|` is not itself
    # escaped.
    s = (text or "").replace("\n", " ").strip()
    return escape(s) if escape else s.replace("\\", "\\\\").replace("|", "\\|")


def cells_to_markdown(cells: Sequence[Sequence[str | None]], escape: Callable[[str], str] | None = None) -> str:
    """A Markdown (GFM) table whose first row is the header row; "" for no rows.

    Short rows are padded with empty cells to the widest row. In each cell `\\` and `|` are
    escaped (so a GFM reader gets the cell text back), line breaks become spaces and the text
    is stripped. `escape`, when given, writes each cell instead (it must escape `|`): the
    Markdown renderer passes `render.escape.escape_inline`, so a cell's `<b>` or `*` stays text
    (the block text stored in the JSON keeps the light form above)."""
    if not cells:
        return ""
    ncols = max(len(r) for r in cells)

    def fmt(row: Sequence[str | None]) -> str:
        vals = [_cell(c, escape) for c in row]
        vals += [""] * (ncols - len(vals))
        return "| " + " | ".join(vals) + " |"

    out = [fmt(cells[0]), "| " + " | ".join(["---"] * ncols) + " |"]
    out += [fmt(r) for r in cells[1:]]
    return "\n".join(out)


def _html(text: str | None) -> str:
    return (text or "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ").strip()


def header_spans(cells: Sequence[Sequence[str | None]], header_rows: int = 1) -> list[tuple[int, int, int, int]]:
    """Spanning header cells as (row, col, rowspan, colspan): in header rows above the last, a
    run of equal non-empty cells is one cell spanning those columns (the group label a grid
    repeats in every column it heads). The one rule both the JSON `spans` and the HTML use."""
    out = []
    for i, row in enumerate(cells[: max(0, header_rows - 1)]):
        j = 0
        while j < len(row):
            k = j + 1
            if row[j]:
                while k < len(row) and row[k] == row[j]:
                    k += 1
            if k - j > 1:
                out.append((i, j, 1, k - j))
            j = k
    return out


def cells_to_html(
    cells: Sequence[Sequence[str | None]],
    header_rows: int = 1,
    spans: Sequence[tuple[int, int, int, int]] | None = None,
) -> str:
    """An HTML table for a grid whose first `header_rows` rows are headers.

    `spans` lists merged cells as (row, col, rowspan, colspan) of their top-left position (the
    JSON block's `spans`); without it the spanning header cells are `header_spans`. A merged
    cell is written once, at its top-left position, with `rowspan`/`colspan`; the positions it
    covers are written as nothing (the grid repeats its text there). A span that runs past the
    grid, or into a position another span already covers, is clipped or dropped, so the table
    always has `ncols` positions per row."""
    if not cells:
        return ""
    ncols = max(len(r) for r in cells)
    rows = [[*r, *[""] * (ncols - len(r))] for r in cells]
    todo = header_spans(rows, header_rows) if spans is None else spans
    start: dict[tuple[int, int], tuple[int, int]] = {}
    covered: set[tuple[int, int]] = set()
    for r, c, rs, cs in sorted(todo):
        rs, cs = min(rs, len(rows) - r), min(cs, ncols - c)
        if r < 0 or c < 0 or rs < 1 or cs < 1 or (rs, cs) == (1, 1):
            continue
        area = {(r + i, c + j) for i in range(rs) for j in range(cs)}
        if area & covered or any(p in start for p in area):
            continue  # overlaps a span already placed: keep the first
        # a row span may not cross the header/body boundary (<thead> and <tbody> are apart)
        if r < header_rows < r + rs:
            rs = header_rows - r
            area = {(r + i, c + j) for i in range(rs) for j in range(cs)}
            if (rs, cs) == (1, 1):
                continue
        start[(r, c)] = (rs, cs)
        covered |= area - {(r, c)}

    def tr(i: int, tag: str) -> str:
        out = []
        for j, text in enumerate(rows[i]):
            if (i, j) in covered:
                continue
            rs, cs = start.get((i, j), (1, 1))
            attrs = (f' rowspan="{rs}"' if rs > 1 else "") + (f' colspan="{cs}"' if cs > 1 else "")
            out.append(f"<{tag}{attrs}>{_html(text)}</{tag}>")
        return "<tr>" + "".join(out) + "</tr>"

    out = ["<table>", "<thead>"]
    out += [tr(i, "th") for i in range(min(header_rows, len(rows)))]
    out.append("</thead>")
    out.append("<tbody>")
    out += [tr(i, "td") for i in range(header_rows, len(rows))]
    out.append("</tbody>")
    out.append("</table>")
    return "\n".join(out)
