"""Importing pagerouter, as a library user does, leaves the host process as a plain PyMuPDF user
expects it: PyMuPDF's layout module loads as PyMuPDF loads it, and the environment is untouched.
Only the processes pagerouter owns skip the layout model (tests/test_import_cost.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# What a process looks like once pymupdf is imported: the pymupdf modules loaded, the ones blocked
# (None in sys.modules), whether PyMuPDF's layout analyser is set, and the environment.
DUMP = """
import json, os, sys
import pymupdf
print(json.dumps({
    "pymupdf_modules": sorted(k for k, v in sys.modules.items() if k.split(".")[0] == "pymupdf" and v is not None),
    "blocked": sorted(k for k, v in sys.modules.items() if v is None and "pymupdf" in k),
    "layout_set": pymupdf._get_layout is not None,
    "environ": dict(os.environ),
}))
"""

# as a library user would import them: the package, the converter, the CLI module, the page code
LIBRARY_IMPORTS = ["pagerouter", "pagerouter.convert.converter", "pagerouter.cli.main",
                   "pagerouter.isolation", "pagerouter.ocr.reader_rapidocr"]


def _clean_env() -> dict[str, str]:
    """This test process's environment without what an earlier pagerouter setup may have put in it."""
    drop = ("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "PAGEROUTER_PYMUPDF_LAYOUT", "PYTEST_CURRENT_TEST")  # the last: per phase
    return {k: v for k, v in os.environ.items() if k not in drop}


def _dump(first_import: str | None) -> dict:
    code = (f"import {first_import}\n" if first_import else "") + DUMP
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=_clean_env(), timeout=180).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def plain_pymupdf() -> dict:
    return _dump(None)


@pytest.mark.parametrize("module", LIBRARY_IMPORTS)
def test_importing_pagerouter_leaves_pymupdf_and_the_environment_alone(module, plain_pymupdf):
    got = _dump(module)
    assert got["blocked"] == plain_pymupdf["blocked"] == []
    assert got["layout_set"] == plain_pymupdf["layout_set"]
    assert got["pymupdf_modules"] == plain_pymupdf["pymupdf_modules"]
    assert got["environ"] == plain_pymupdf["environ"]
    assert "PYMUPDF_SUGGEST_LAYOUT_ANALYZER" not in got["environ"]


def test_pymupdf_layout_is_importable_after_importing_pagerouter():
    code = "import pagerouter, pagerouter.convert.converter, importlib; importlib.import_module('pymupdf.layout'); print('ok')"
    import pymupdf.layout  # noqa: F401 - PyMuPDF 2.0 depends on pymupdf-layout: CI has it
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=_clean_env(), timeout=180).stdout
    assert out.strip().splitlines()[-1] == "ok"
