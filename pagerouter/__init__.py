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
import sys
from importlib import import_module
from importlib.abc import MetaPathFinder
from importlib.util import spec_from_file_location
from typing import Any

SERVING_FOLDERS = ("graph", "deployments", "clients")
"""The serving folders, `pagerouter.graph`, `pagerouter.deployments`, `pagerouter.clients`."""


class _CheckoutServingFolders(MetaPathFinder):
    """Finds the serving folders of a checkout run without installing (PYTHONPATH=., a Ray job's
    working_dir). Installed, they sit inside this package (setup.py maps them there); in the
    repository they are top-level folders beside it. This finder answers for those three names
    alone (their modules are then found inside them as usual), so nothing else of the checkout
    becomes part of the package. It is asked last: an install's own finder answers first."""

    def __init__(self, root: str):
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.partition(".")
        if package != __name__ or name not in SERVING_FOLDERS:
            return None
        init = os.path.join(self.root, name, "__init__.py")
        if not os.path.isfile(init):
            return None
        return spec_from_file_location(fullname, init, submodule_search_locations=[os.path.dirname(init)])


_HERE = os.path.dirname(os.path.abspath(__file__))
if not os.path.isdir(os.path.join(_HERE, "graph")) and not any(
    isinstance(f, _CheckoutServingFolders) for f in sys.meta_path
):
    sys.meta_path.append(_CheckoutServingFolders(os.path.dirname(_HERE)))

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
