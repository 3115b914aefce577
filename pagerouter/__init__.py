"""pagerouter: PDFs and page images to Markdown and JSON, each page by the cheapest reader
that reads it well.

Importing the package (or any of its modules) changes nothing in the host process: PyMuPDF is
left as PyMuPDF sets itself up. The processes pagerouter owns (the CLI, the isolation workers,
the Serve replicas, the Ray workers of `pagerouter batch --ray`) skip PyMuPDF's unused layout
model themselves (common/pymupdf_setup.py).

Python API (every name is imported on first use, so `import pagerouter` stays cheap; IDEs and type
checkers read the names and their types from `__init__.pyi`):

    import pagerouter
    doc = pagerouter.convert("report.pdf", pages="1-3")   # a path, a URL (s3://, https://), bytes or a binary file object
    doc.to_markdown(); doc.to_json()
    with pagerouter.Converter() as conv:                 # many files: engines and workers start once
        for path in paths:
            doc = conv.convert(path)                     # also inside a notebook's running loop
        doc = await conv.convert_async(path)             # async code that must not block its loop
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import Any

# The serving folders (graph/, deployments/, clients/) are `pagerouter.graph`, ... Installed, they
# sit inside this package (setup.py maps them there); in a checkout run without installing
# (PYTHONPATH=., a Ray job's working_dir), they sit beside it: this package's path then takes in
# the checkout's root, so the same import names work in both. Names found in this folder come
# first, so nothing of the core package can be shadowed from there.
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not os.path.isdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "graph")) and os.path.isfile(
    os.path.join(_CHECKOUT, "graph", "__init__.py")
):
    __path__.append(_CHECKOUT)  # noqa: F821 - a package's own __path__

__version__ = "0.1.0"
"""The one place the version is written: pyproject.toml reads it (tool.setuptools.dynamic), the
CLI's `--version` prints it."""

# public name -> module that defines it
_LAZY = {
    "Converter": "pagerouter.convert.converter",
    "PagerouterConfig": "pagerouter.config",
    "load_config": "pagerouter.config",
    "InputError": "pagerouter.intake.inputs",
    "Document": "pagerouter.model",
    "Page": "pagerouter.model",
    "Block": "pagerouter.model",
    "to_markdown": "pagerouter.render.output",
    "to_json": "pagerouter.render.output",
}

__all__ = ["Block", "Converter", "Document", "InputError", "Page", "PagerouterConfig", "__version__", "convert", "load_config", "to_json", "to_markdown"]


def __getattr__(name: str) -> Any:
    if name == "convert":  # the callable `pagerouter/convert/` package (see its docstring)
        return import_module("pagerouter.convert")
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pagerouter' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
