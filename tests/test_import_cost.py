"""The processes pagerouter owns skip PyMuPDF's unused layout model (0.8 s, 55 MB a process;
common/pymupdf_setup.py): the CLI, the isolation workers' fork server, the Serve replicas and the
Ray workers of `pagerouter batch --ray`. The CLI's stdout stays the Markdown alone, and
pymupdf4llm still gets its layout mode when a benchmark runs it beside us. (A library user's
process is left alone: tests/test_import_side_effects.py.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pymupdf
import pytest

# whether PyMuPDF's layout analyser is unset, and whether its module is loaded
LAYOUT = "import pymupdf, sys; print(pymupdf._get_layout is None, sys.modules.get('pymupdf.layout') is not None{to})"


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    drop = ("PAGEROUTER_PYMUPDF_LAYOUT", "PYMUPDF_SUGGEST_LAYOUT_ANALYZER")
    e = {k: v for k, v in os.environ.items() if k not in drop}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=e, timeout=180)


def _last(text: str) -> str:
    return text.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def one_page_pdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("cost") / "hello.pdf"
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Hello layout world")
    doc.save(path)
    return path


def test_the_cli_prints_the_markdown_alone_and_builds_no_layout_model(one_page_pdf):
    code = ("import sys\nfrom pagerouter.cli.main import main\n"
            f"rc = main(['convert', '-q', {str(one_page_pdf)!r}])\n" + LAYOUT.format(to=", file=sys.stderr"))
    done = _run(code)
    assert done.stdout == "Hello layout world\n"
    assert _last(done.stderr) == "True False"


def test_the_replicas_do_not_build_the_layout_model():
    assert _last(_run("import deployments\n" + LAYOUT.format(to="")).stdout) == "True False"


def test_the_isolation_workers_fork_server_skips_it_and_leaves_its_caller_alone():
    """A fork server's workers (a Serve replica's, an asyncio converter's) start without the
    layout model; the library user's process that started the server keeps PyMuPDF's default."""
    probe = LAYOUT.format(to=", flush=True").replace("print(", "print('worker', ")
    code = ("from pagerouter.config import PagerouterConfig\n"
            "from pagerouter.isolation.process import _Process, worker_context\n"
            "worker_context(PagerouterConfig())\n"
            f"p = _Process(target=exec, args=({probe!r},), daemon=True)\n"
            "p.start(); p.join(120); assert p.exitcode == 0, p.exitcode\n" + LAYOUT.format(to=""))
    lines = _run(code).stdout.strip().splitlines()
    assert "worker True False" in lines
    assert lines[-1] == "False True"


def test_the_setup_is_optional_and_pymupdf4llm_gets_its_layout_mode():
    skip = "from pagerouter.common.pymupdf_setup import skip_pymupdf_layout; skip_pymupdf_layout()\n"
    assert _last(_run(skip + LAYOUT.format(to="")).stdout) == "True False"
    assert _last(_run(skip + LAYOUT.format(to=""), PAGEROUTER_PYMUPDF_LAYOUT="1").stdout) == "False True"
    code = skip + ("import pymupdf\nfrom pagerouter.common.pymupdf_setup import import_pymupdf4llm\n"
                   "m = import_pymupdf4llm(); print(m._use_layout, pymupdf._get_layout is not None)")
    assert _last(_run(code).stdout) == "True True"


def test_no_layout_hint_reaches_stdout():
    # PyMuPDF prints an install hint to stdout on find_tables() when the layout package is
    # missing (as it is once skipped); the CLI writes Markdown to stdout.
    code = ("from pagerouter.common.pymupdf_setup import skip_pymupdf_layout; skip_pymupdf_layout()\n"
            "import pymupdf; d = pymupdf.open(); p = d.new_page(); "
            "p.insert_text((72, 72), 'a  b'); p.find_tables(); print('done')")
    assert _run(code).stdout == "done\n"


@pytest.mark.slow
def test_the_ray_batch_workers_skip_it():
    """`pagerouter batch --ray` connects with a worker setup hook: a Ray worker imports pymupdf
    without the layout model. Starts a local Ray instance (run under the Ray lock)."""
    code = ("from pagerouter.batch.ray_driver import connect\n"
            "ray = connect('local', quiet=True)\n"
            "def probe():\n"
            "    import pymupdf, sys\n"
            "    return pymupdf._get_layout is None, sys.modules.get('pymupdf.layout') is not None\n"
            "try:\n"
            "    print(*ray.get(ray.remote(probe).remote()))\n"
            "finally:\n"
            "    ray.shutdown()\n")
    assert _last(_run(code, RAY_USAGE_STATS_ENABLED="0").stdout) == "True False"
