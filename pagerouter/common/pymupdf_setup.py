"""Keeping PyMuPDF from building its layout model, in the processes pagerouter owns.

PyMuPDF 2.0 imports `pymupdf.layout` (a dependency it pulls in for pymupdf4llm) on its own
import, and that builds an ONNX layout analyser at once: about 0.8 s and 55 MB in every process
that imports pymupdf, for `Page.get_layout()` (and `find_tables()`'s layout gating), which
pagerouter never calls. Blocking the submodule before pymupdf is first imported leaves
`pymupdf._get_layout` unset, as when pymupdf-layout is not installed. PyMuPDF then prints a hint
to install the layout package, to stdout, where the CLI writes Markdown: that is silenced too.

This changes the process (`sys.modules`, `os.environ`), so importing pagerouter never does it: a
library user gets PyMuPDF as PyMuPDF gives it. Only the entry points that own their process call
`skip_pymupdf_layout()`, before anything imports pymupdf: the CLI's `main()`, the isolation
workers' fork server (skip_pymupdf_layout_on_import.py), the Serve replicas (deployments/__init__.py)
and the Ray workers of `pagerouter batch --ray` (its `worker_process_setup_hook`).
Set `PAGEROUTER_PYMUPDF_LAYOUT=1` to keep PyMuPDF's default there too.
"""

from __future__ import annotations

import os
import sys

LAYOUT_MODULE = "pymupdf.layout"
KEEP_LAYOUT_ENV = "PAGEROUTER_PYMUPDF_LAYOUT"


def skip_pymupdf_layout() -> None:
    """Block `pymupdf.layout` and PyMuPDF's hint about it for this process (and the environment
    its children inherit). Too late once pymupdf is imported: then it does nothing."""
    if os.environ.get(KEEP_LAYOUT_ENV) == "1" or "pymupdf" in sys.modules:
        return  # asked for, or too late: pymupdf already imported it (or found it missing)
    sys.modules.setdefault(LAYOUT_MODULE, None)  # type: ignore[arg-type]  # None: "import fails"
    os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")


def import_pymupdf4llm():
    """pymupdf4llm with its default layout mode, as its users get it, also in a process that
    skipped the layout model: lift the block and let it build the model (its `use_layout(True)`:
    its own import of `pymupdf.layout` is circular and fails late)."""
    if sys.modules.get(LAYOUT_MODULE, 0) is None:
        del sys.modules[LAYOUT_MODULE]
    import pymupdf4llm

    try:
        pymupdf4llm.use_layout(True)
    except ImportError:
        pass  # pymupdf-layout not installed: pymupdf4llm's own fallback
    return pymupdf4llm


__all__ = ["KEEP_LAYOUT_ENV", "LAYOUT_MODULE", "import_pymupdf4llm", "skip_pymupdf_layout"]
