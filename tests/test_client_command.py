"""`pagerouter client convert|job`: one name per concept (--endpoint, as `batch` has it; the old
--url still works, out of --help), a missing client package is one line naming the extra, and a
busy server (fake) is waited for."""

from __future__ import annotations

import os
import subprocess
import sys

import pymupdf
import pytest

from pagerouter.cli.main import build_parser, main
from tests.conftest import REPO
from tests.fake_busy_server import FakeBusyHttpServer, Plan


@pytest.fixture
def pdf(tmp_path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "hello")
    doc.save(tmp_path / "a.pdf")
    return tmp_path / "a.pdf"


@pytest.mark.parametrize("command", [["client", "convert", "a.pdf"], ["client", "job", "status", "0" * 32]])
def test_endpoint_is_the_name_and_url_the_hidden_old_one(command, capsys):
    new = build_parser().parse_args([*command, "--endpoint", "http://h:1"])
    old = build_parser().parse_args([*command, "--url", "http://h:1"])
    assert new.endpoint == old.endpoint == "http://h:1" and new.grpc is None
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "--endpoint", "http://h:1", "--grpc", "h:2"])
    capsys.readouterr()
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "--help"])
    shown = capsys.readouterr().out
    assert "--endpoint URL" in shown and "--url" not in shown and "--max-attempts" in shown


def test_client_convert_waits_for_a_busy_server(pdf, capsys):
    plan = Plan({"POST /v1/convert": [(429, "too_many_requests", "1")]}, extra=True)
    with FakeBusyHttpServer(plan) as url:
        assert main(["client", "convert", str(pdf), "--endpoint", url]) == 0
    assert capsys.readouterr().out.strip() == f"text of {pdf}"
    times = plan.arrivals("POST /v1/convert", str(pdf))
    assert len(times) == 2 and times[1] - times[0] >= 1.0


def test_client_gives_up_with_max_attempts_naming_the_status(pdf, capsys):
    plan = Plan({"POST /v1/convert": [(503, "overloaded", "0")] * 3})
    with FakeBusyHttpServer(plan) as url:
        assert main(["client", "convert", str(pdf), "--endpoint", url, "--max-attempts", "2"]) == 4  # EXIT_SERVER
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gave up after 2 attempts" in err[0] and "last answer: 503 overloaded" in err[0]
    assert len(plan.arrivals("POST /v1/convert", str(pdf))) == 2


@pytest.mark.parametrize(("blocked", "where"), [("httpx", ["--endpoint", "http://127.0.0.1:9"]),
                                                ("grpc", ["--grpc", "127.0.0.1:9"])])
@pytest.mark.parametrize("command", ["client", "batch"])
def test_a_missing_client_package_is_one_line_naming_the_extra(blocked, where, command, pdf, tmp_path):
    """The package cannot be imported (None in sys.modules: Python's own way to block one). `batch`
    says so once before any file, not as a failed journal record per file."""
    args = ["client", "convert", str(pdf)] if command == "client" else ["batch", str(pdf), "-o", str(tmp_path / "out")]
    code = (f"import sys; sys.modules[{blocked!r}] = None\n"
            "from pagerouter.cli.main import main\n"
            f"sys.exit(main([*{args!r}, *{where!r}]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1, r.stderr
    assert f"needs the '{blocked}' package" in lines[0] and 'pip install "pagerouter[client]"' in lines[0]
    assert "cannot reach" not in lines[0]
    assert not (tmp_path / "out" / "pagerouter-batch.journal.jsonl").exists()  # nothing recorded as failed
