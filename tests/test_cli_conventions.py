"""Shell conventions of the `pagerouter` command: `-` for stdin/stdout, `-q`/`-v` on every subcommand,
documented exit codes (usage 2, input errors 1, internal errors 3), and a subcommand whose extra is
not installed naming the extra instead of vanishing as "invalid choice"."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pymupdf
import pytest

from pagerouter.cli import main as cli
from pagerouter.cli.common import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_USAGE,
    EXTRA_OF_MODULE,
    setup_logging,
)

REPO = Path(__file__).resolve().parents[1]
TEXT = "Hello pipe world"


@pytest.fixture(scope="module")
def hello_pdf(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("conv") / "hello.pdf"
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), TEXT)
    doc.save(path)
    doc.close()
    return path


def _cli(*args: str, stdin: bytes | None = None, cwd: Path = REPO, code: str = "") -> subprocess.CompletedProcess:
    """`python -m pagerouter ARGS` (after `code`, run first in the same process when given)."""
    run = f"{code}\nimport sys\nfrom pagerouter.cli.main import main\nraise SystemExit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", run, *args], input=stdin, capture_output=True, timeout=240,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)


def test_dash_reads_the_document_from_stdin(hello_pdf, tmp_path):
    done = _cli("convert", "-", "-q", stdin=hello_pdf.read_bytes())
    assert (done.returncode, done.stdout.decode()) == (0, f"{TEXT}\n"), done.stderr
    out = tmp_path / "out"
    done = _cli("convert", "-", "-q", "-o", str(out), "--format", "both", stdin=hello_pdf.read_bytes())
    assert done.returncode == 0, done.stderr
    assert (out / "stdin.md").read_text() == f"{TEXT}\n"
    assert json.loads((out / "stdin.json").read_text())["source"] == "-"
    junk = _cli("convert", "-", "-q", stdin=b"not a pdf at all")
    assert junk.returncode == EXIT_INPUT and junk.stderr.decode().startswith("pagerouter: error: -: ")


def test_dash_o_dash_writes_stdout_not_a_folder(hello_pdf, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["convert", str(hello_pdf), "-o", "-", "-q"]) == 0
    assert capsys.readouterr().out == f"{TEXT}\n"
    assert not (tmp_path / "-").exists()
    assert cli.main(["convert", str(hello_pdf), "-o", "-", "--format", "both", "-q"]) == EXIT_USAGE
    assert not (tmp_path / "-").exists()


def test_exit_codes_input_usage_internal(hello_pdf, tmp_path, monkeypatch, capsys):
    assert cli.main(["convert", str(tmp_path / "missing.pdf"), "-q"]) == EXIT_INPUT == 1
    assert cli.main(["triage", str(tmp_path / "missing.pdf")]) == EXIT_INPUT
    with pytest.raises(SystemExit) as usage:
        cli.main(["convert", str(hello_pdf), "--ocr", "sometimes"])
    assert usage.value.code == EXIT_USAGE == 2
    capsys.readouterr()

    from pagerouter.convert.converter import Converter

    def fake_engine_bug(self, *args, **kwargs):
        raise RuntimeError("fake engine bug")

    monkeypatch.setattr(Converter, "convert", fake_engine_bug)
    assert cli.main(["convert", str(hello_pdf), "-q"]) == EXIT_INTERNAL == 3
    err = capsys.readouterr().err
    assert err == "pagerouter: internal error: RuntimeError: fake engine bug (set PAGEROUTER_DEBUG=1 for details)\n"


def test_help_documents_the_exit_codes_main_returns():
    text = cli.build_parser().format_help()
    codes = dict(re.findall(r"^  (\d+)\s+(\S+)", text.split("exit codes:")[1], flags=re.MULTILINE))
    assert codes == {"0": "every", "1": "input", "2": "usage", "3": "internal", "4": "client", "130": "interrupted"}
    assert (EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL, cli.EXIT_INTERRUPTED) == (1, 2, 3, 130)
    convert_help = _subparser(cli.build_parser(), "convert").format_help()
    assert "exit codes:" in convert_help and "- reads one document from stdin" in " ".join(convert_help.split())


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices[name]


def test_every_subcommand_takes_quiet_and_verbose():
    leaves = cli._leaf_parsers(cli.build_parser())
    names = {p.prog.removeprefix("pagerouter ") for p in leaves}
    assert {"convert", "triage", "batch", "bench", "review", "serve", "client convert"} <= names, names
    for p in leaves:
        flags = p._option_string_actions
        assert {"-q", "-v"} <= flags.keys(), p.prog
        assert isinstance(flags["-v"], argparse._CountAction) and flags["-v"].dest == "verbose", p.prog  # -vv
        assert flags["-q"].dest == "quiet", p.prog


def test_the_log_level_of_q_and_v_and_its_restore():
    ours, root = logging.getLogger("pagerouter"), logging.getLogger()
    before = (ours.level, root.level)
    for args, want in (({"verbose": 0}, logging.WARNING), ({"verbose": 1}, logging.INFO),
                       ({"verbose": 2}, logging.DEBUG), ({"quiet": True, "verbose": 0}, logging.ERROR)):
        restore = setup_logging(argparse.Namespace(**args))
        try:
            assert logging.getLogger("pagerouter.flow").getEffectiveLevel() == want
            assert logging.getLogger("pagerouter.clients.retry").getEffectiveLevel() == want
            assert root.level == (logging.ERROR if args.get("quiet") else logging.WARNING)  # not other libraries' DEBUG
        finally:
            restore()
        assert (ours.level, root.level) == before


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def test_a_command_whose_extra_is_missing_names_it():
    """Ray not installed (blocked here): `pagerouter serve` says what to install, exit 2, no traceback."""
    http, grpc = _free_ports(2)
    done = _cli("serve", "--http-port", str(http), "--grpc-port", str(grpc), code="import sys; sys.modules['ray'] = None")
    err = done.stderr.decode()
    assert done.returncode == EXIT_USAGE, err
    assert err.splitlines()[-1] == ("pagerouter: error: `pagerouter serve` needs the 'ray' package, which is not "
                                    'installed: pip install "pagerouter[serve]"')
    assert "Traceback" not in err


def test_a_command_whose_entry_point_cannot_load_is_listed_and_names_its_extra():
    """Before, it vanished: `argument command: invalid choice: 'serve'`."""
    block = "import sys; sys.modules['pagerouter.graph.serve_command'] = None"
    listed = _cli("--help", code=block).stdout.decode()
    assert re.search(r'^\s+serve\s+\(not installed: pip install "pagerouter\[serve\]"\)', listed, flags=re.MULTILINE), listed
    done = _cli("serve", "--http-port", "8000", code=block)
    err = done.stderr.decode()
    assert done.returncode == EXIT_USAGE and "invalid choice" not in err
    assert err.strip().endswith('pip install "pagerouter[serve]"'), err


def test_the_extras_named_in_messages_exist_and_install_the_package():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    dist_of = {"ray": "ray", "fastapi_offline": "fastapi-offline", "opentelemetry": "opentelemetry-sdk",
               "grpc_tools": "grpcio-tools", "httpx": "httpx", "grpc": "grpcio", "google": "protobuf",
               "tenacity": "tenacity", "matplotlib": "matplotlib", "locust": "locust"}
    assert dist_of.keys() == EXTRA_OF_MODULE.keys()
    for module, extra in EXTRA_OF_MODULE.items():
        reqs = extras[extra] + [r for inc in extras[extra] if inc.startswith("pagerouter[")
                                for e in inc[len("pagerouter["):-1].split(",") for r in extras[e]]
        names = {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in reqs}
        assert dist_of[module] in names, (module, extra)
