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
