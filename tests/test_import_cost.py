"""Importing pagerouter keeps PyMuPDF from building its unused layout model (0.8 s, 55 MB a
process), without changing what pymupdf4llm does when a benchmark runs it beside us."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = "import {first}, pymupdf, sys; print(pymupdf._get_layout is None, 'pymupdf.layout' in sys.modules and sys.modules['pymupdf.layout'] is not None)"


def _run(code: str, **env: str) -> str:
    e = {k: v for k, v in os.environ.items() if k != "PAGEROUTER_PYMUPDF_LAYOUT"}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=e, timeout=120).stdout.strip()


def test_the_cli_and_the_replicas_do_not_build_the_layout_model():
    for first in ("pagerouter.cli.main", "deployments"):
        assert _run(PROBE.format(first=first)) == "True False", first


def test_the_default_comes_back_on_request_and_for_pymupdf4llm():
    assert _run(PROBE.format(first="pagerouter"), PAGEROUTER_PYMUPDF_LAYOUT="1") == "False True"
    code = "import pagerouter, pymupdf; m = pagerouter.import_pymupdf4llm(); print(m._use_layout, pymupdf._get_layout is not None)"
    assert _run(code) == "True True"


def test_no_layout_hint_reaches_stdout():
    # PyMuPDF prints an install hint to stdout on find_tables() when the layout package is
    # missing; the CLI writes Markdown to stdout.
    code = ("import pagerouter, pymupdf; d = pymupdf.open(); p = d.new_page(); "
            "p.insert_text((72, 72), 'a  b'); p.find_tables(); print('done')")
    assert _run(code) == "done"
