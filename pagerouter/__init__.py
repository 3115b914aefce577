"""pagerouter: PDFs and page images to Markdown and JSON, each page by the cheapest reader
that reads it well.

Importing the package keeps PyMuPDF from building its layout model: PyMuPDF 2.0 imports
`pymupdf.layout` (a dependency it pulls in for pymupdf4llm) on its own import, and that builds
an ONNX layout analyser at once: about 0.8 s and 55 MB in every process that imports pymupdf
(the CLI, each isolation worker's fork server, each Ray worker), for `Page.get_layout()`, which
pagerouter never calls. Blocking the submodule before pymupdf is first imported leaves
`pymupdf._get_layout` unset, as when pymupdf-layout is not installed. Set
`PAGEROUTER_PYMUPDF_LAYOUT=1` to keep PyMuPDF's default (pymupdf4llm's layout mode in the same
process needs it; `import_pymupdf4llm()` gives the benchmarks pymupdf4llm as its users get it).
PyMuPDF's hint to install the layout
package is silenced too: it prints to stdout, where the CLI writes Markdown.
"""

from __future__ import annotations

import os
import sys

_LAYOUT = "pymupdf.layout"


def _block_pymupdf_layout() -> None:
    if os.environ.get("PAGEROUTER_PYMUPDF_LAYOUT") == "1" or "pymupdf" in sys.modules:
        return  # asked for, or too late: pymupdf already imported it (or found it missing)
    sys.modules.setdefault(_LAYOUT, None)  # type: ignore[arg-type]  # None: "import fails"
    os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")


def import_pymupdf4llm():
    """pymupdf4llm with its default layout mode: lift the block and let it build the model
    (its `use_layout(True)`: its own import of `pymupdf.layout` is circular and fails late)."""
    if sys.modules.get(_LAYOUT, 0) is None:
        del sys.modules[_LAYOUT]
    import pymupdf4llm

    try:
        pymupdf4llm.use_layout(True)
    except ImportError:
        pass  # pymupdf-layout not installed: pymupdf4llm's own fallback
    return pymupdf4llm


_block_pymupdf_layout()
