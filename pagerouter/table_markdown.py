"""The one Markdown table writer: a grid of cell strings -> a GFM pipe table.

Both routes that recover table cells (the text layer's `textlayer.tables`, the OCR route's
`ocr.tables`) write a table block's text here, so the same cells give the same Markdown
whichever route read the page. Pure stdlib.
"""

from __future__ import annotations

from collections.abc import Sequence


def _cell(text: str | None) -> str:
    # Backslash first, so the escape added for `|` is not itself escaped; a GFM cell cannot hold
    # a line break, and padding spaces are the renderer's job, not the content's.
    return (text or "").replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def cells_to_markdown(cells: Sequence[Sequence[str | None]]) -> str:
    """A Markdown (GFM) table whose first row is the header row; "" for no rows.

    Short rows are padded with empty cells to the widest row. In each cell `\\` and `|` are
    escaped (so a GFM reader gets the cell text back), line breaks become spaces and the text
    is stripped."""
    if not cells:
        return ""
    ncols = max(len(r) for r in cells)

    def fmt(row: Sequence[str | None]) -> str:
        vals = [_cell(c) for c in row]
        vals += [""] * (ncols - len(vals))
        return "| " + " | ".join(vals) + " |"

    out = [fmt(cells[0]), "| " + " | ".join(["---"] * ncols) + " |"]
    out += [fmt(r) for r in cells[1:]]
    return "\n".join(out)


def _html(text: str | None) -> str:
    return (text or "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ").strip()


def cells_to_html(cells: Sequence[Sequence[str | None]], header_rows: int = 1) -> str:
    """An HTML table for a grid whose first `header_rows` rows are headers.

    In header rows above the last, a run of equal non-empty cells is one cell spanning those
    columns (the group label it stands for); body cells are written one per column."""
    if not cells:
        return ""
    ncols = max(len(r) for r in cells)
    rows = [[*r, *[""] * (ncols - len(r))] for r in cells]
    out = ["<table>", "<thead>"]
    for i, row in enumerate(rows[:header_rows]):
        tds: list[str] = []
        j = 0
        while j < ncols:
            k = j + 1
            if i < header_rows - 1 and row[j]:
                while k < ncols and row[k] == row[j]:
                    k += 1
            span = f' colspan="{k - j}"' if k - j > 1 else ""
            tds.append(f"<th{span}>{_html(row[j])}</th>")
            j = k
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</thead>")
    out.append("<tbody>")
    for row in rows[header_rows:]:
        out.append("<tr>" + "".join(f"<td>{_html(c)}</td>" for c in row) + "</tr>")
    out.append("</tbody>")
    out.append("</table>")
    return "\n".join(out)
