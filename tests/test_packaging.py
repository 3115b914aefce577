"""Packaging a user can adopt: one version, `--version`, `python -m pagerouter`, typed, licensed,
full metadata, a client extra without Ray; the wheel as pip builds it, installed into a fresh venv."""

from __future__ import annotations

import ast
import email
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import pagerouter
from pagerouter.cli.main import main

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
# what the wheel is built from (setup.py's packages, pyproject's readme/license-files)
SOURCES = ["pagerouter", "deployments", "graph", "clients", "setup.py", "pyproject.toml", "README.md", "LICENSE"]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_the_version_is_written_once_and_the_cli_prints_it(capsys):
    assert PYPROJECT["project"]["dynamic"] == ["version"] and "version" not in PYPROJECT["project"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pagerouter.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc)?\d*", pagerouter.__version__)
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"pagerouter {pagerouter.__version__}\n"


def test_python_dash_m_pagerouter_is_the_cli(tmp_path):
    pdf = tmp_path / "hello.pdf"
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Hello module world")
    doc.save(pdf)
    run = lambda *a: subprocess.run([sys.executable, "-m", "pagerouter", *a], check=False, capture_output=True,
                                    text=True, timeout=180, cwd=REPO)
    assert run("--version").stdout == f"pagerouter {pagerouter.__version__}\n"
    converted = run("convert", "-q", str(pdf))
    assert (converted.returncode, converted.stdout) == (0, "Hello module world\n")
    assert run("no-such-command").returncode == 2


def test_typed_and_licensed():
    assert (REPO / "pagerouter" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["pagerouter"]
    project = PYPROJECT["project"]
    assert project["license"] == "AGPL-3.0-or-later" and project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.splitlines()[0].strip() == "GNU AFFERO GENERAL PUBLIC LICENSE"
    assert "Version 3, 19 November 2007" in text and "13. Remote Network Interaction; Use with the GNU General Public License." in text
    assert project["authors"] and project["readme"] == "README.md"
    assert "Typing :: Typed" in project["classifiers"]


def test_one_onnxruntime_and_a_client_extra_without_ray():
    extras = PYPROJECT["project"]["optional-dependencies"]
    names = lambda reqs: {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in reqs}
    # onnxruntime-gpu installs the same `onnxruntime` package as the required onnxruntime
    assert "onnxruntime-gpu" not in names(extras["gpu"]) and "onnxruntime" in names(PYPROJECT["project"]["dependencies"])
    assert names(extras["client"]) == {"httpx", "grpcio", "protobuf", "tenacity"}
    assert not any(n.startswith("ray") for n in names(extras["client"]) | names(PYPROJECT["project"]["dependencies"]))


def test_clients_import_no_ray():
    """Statically (every import in clients/, module level or in a function) and at run time."""
    for path in (REPO / "clients").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bad = [m for m in mods if m.split(".")[0] == "ray" or m.startswith(("pagerouter.graph", "pagerouter.deployments"))]
            assert not bad, f"{path.name} imports {bad}"
    code = ("import sys, pagerouter.clients.http_client, pagerouter.clients.grpc_client, pagerouter.clients.client_command, pagerouter.clients.jobs\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'ray'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=180, cwd=REPO)
    assert out.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from a copy of the sources (the shared checkout gets no build/ folder)."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(root / "dist"), str(src)], check=True, timeout=300, capture_output=True, env=_env())
    (whl,) = (root / "dist").glob("pagerouter-*.whl")
    return whl


@pytest.mark.slow
def test_the_wheel_holds_the_packages_metadata_license_and_types(wheel):
    z = zipfile.ZipFile(wheel)
    names = z.namelist()
    info = f"pagerouter-{pagerouter.__version__}.dist-info"
    top = {n.split("/")[0] for n in names} - {info}
    assert top == {"pagerouter"}  # the serving folders install under its namespace, nothing else at top level
    assert {"pagerouter/graph/builder.py", "pagerouter/deployments/ingress.py", "pagerouter/clients/http_client.py",
            "pagerouter/clients/__init__.py"} <= set(names)
    meta = email.message_from_bytes(z.read(f"{info}/METADATA"))
    assert meta["Version"] == pagerouter.__version__
    assert meta["License-Expression"] == "AGPL-3.0-or-later" and meta["License-File"] == "LICENSE"
    assert f"{info}/licenses/LICENSE" in names
    assert {"pagerouter/py.typed", "pagerouter/__init__.pyi", "pagerouter/__main__.py"} <= set(names)
    client = [r for r in meta.get_all("Requires-Dist") if r.endswith('extra == "client"')]
    assert sorted(r.split("<")[0].split(">")[0] for r in client) == ["grpcio", "httpx", "protobuf", "tenacity"]
    assert not [r for r in meta.get_all("Requires-Dist") if r.startswith("onnxruntime-gpu")]


@pytest.mark.slow
def test_the_wheel_installed_in_a_fresh_venv_runs(wheel, tmp_path):
    """The wheel alone, in a venv of its own: the dependencies come from this interpreter's
    site-packages (no download here), the package from the venv; run from outside the checkout."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True,
                   timeout=300, capture_output=True, env=_env())
    run = lambda *a: subprocess.run(a, check=False, capture_output=True, text=True, timeout=180, cwd=tmp_path, env=_env())
    version = f"pagerouter {pagerouter.__version__}\n"
    assert run(str(venv / "bin" / "pagerouter"), "--version").stdout == version
    assert run(str(py), "-m", "pagerouter", "--version").stdout == version
    where = run(str(py), "-c", "import pagerouter; print(pagerouter.__version__, pagerouter.__file__)").stdout.split()
    assert where[0] == pagerouter.__version__
    assert Path(where[1]).is_relative_to(venv), where  # the installed copy, not the checkout
    serving = run(str(py), "-c", "import pagerouter.graph.builder as g, pagerouter.clients.http_client as c; "
                  "print(g.__file__); print(c.__file__)").stdout.split()
    assert len(serving) == 2 and all(Path(f).is_relative_to(venv / "lib") for f in serving), serving
    assert run(str(py), "-c", "import graph").returncode != 0  # no top-level name of ours beside the package
    assert run(str(venv / "bin" / "pagerouter"), "serve", "--help").stdout.startswith("usage: pagerouter serve")


def test_a_plain_checkout_imports_the_serving_folders_under_the_package(tmp_path):
    """Not installed (PYTHONPATH=., a Ray job's working_dir): `pagerouter.graph` and the others
    resolve to the checkout's top-level folders, as the wheel's layout names them, and nothing
    else of the checkout joins the package. `-I -S` keeps site-packages and the editable
    install's finder out: only the package's own finder can find them (their __init__ modules
    and clients/errors.py need nothing beyond the standard library)."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "import pagerouter.graph, pagerouter.deployments, pagerouter.clients.errors as e; "
            "print(pagerouter.graph.__file__); print(pagerouter.deployments.__file__); print(e.__file__); "
            "print(pagerouter.__path__ == [sys.argv[1] + '/pagerouter'])\n"
            "try:\n    import pagerouter.tests\nexcept ImportError:\n    print('no-tests')")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(REPO)], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(REPO / "graph" / "__init__.py"), str(REPO / "deployments" / "__init__.py"),
                                  str(REPO / "clients" / "errors.py"), "True", "no-tests"]
