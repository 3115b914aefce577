"""The README's own `pagerouter batch ... --ray` lines, run as written there.

The lines are read from README.md (its `--ray` section), so this test breaks when the README
and the CLI drift apart. Only what cannot exist on a test machine is swapped, token by token:
the bucket (`s3://bucket/` becomes a `file://` folder, pyarrow's local filesystem), the
example folders (`/data/in`, `/data/out` become temp folders) and the example cluster address
(`10.0.0.1:6379` becomes the test cluster's). Flags, their order and the bare `--ray` stay as
written. The bare form finds the cluster through RAY_ADDRESS, as the README's comment says;
`--ray auto` (the synopsis' `--ray [ADDRESS]` with Ray's own `auto`) the same way.

Before the fix the bare flag reached `ray.init` as an empty address and stopped at once
(`ValueError: Invalid address format:`). Slow: a Ray cluster on 2 shared cores.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from pagerouter.bench.synth import LOREM, add_text_page

from .ray_cluster import REPO, RayStartCluster

pytestmark = pytest.mark.slow


def readme_ray_lines() -> list[str]:
    """The command lines of the README's `--ray` section's first code block."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("#### `--ray`: the batch as a Ray Data pipeline", 1)[1]
    block = section.split("```", 2)[1]
    lines = [ln for ln in block.splitlines() if ln.strip().startswith("pagerouter batch") and "--ray" in ln]
    assert len(lines) >= 2, block
    return lines


def argv_of(line: str) -> list[str]:
    return shlex.split(line, comments=True)


def swapped(argv: list[str], tmp: Path, address: str) -> list[str]:
    """`argv` with the example bucket, folders and address made real; nothing else changes."""
    out = []
    for tok in argv:
        tok = re.sub(r"^s3://bucket/", (tmp / "bucket").as_uri() + "/", tok)
        tok = {"/data/in": str(tmp / "data" / "in"), "/data/out": str(tmp / "data" / "out"),
               "10.0.0.1:6379": address}.get(tok, tok)
        out.append(tok)
    return out


def _pdf(path: Path, tag: str) -> None:
    d = pymupdf.open()
    add_text_page(d, [LOREM, f"{tag} says its own words."], title=tag)
    path.parent.mkdir(parents=True, exist_ok=True)
    d.save(path)


@pytest.fixture(scope="module")
def cluster():
    with RayStartCluster(head_cpus=2, workers=[]) as c:
        yield c


def _run(argv: list[str], cwd: Path, cluster, env: dict | None = None) -> subprocess.CompletedProcess:
    assert argv[:2] == ["pagerouter", "batch"], argv
    cmd = [sys.executable, "-m", "pagerouter.cli.main", *argv[1:]]  # the console script, from this checkout
    environ = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return subprocess.run(cmd, check=False, cwd=cwd, capture_output=True, text=True, timeout=400,
                          env={**environ, "PYTHONPATH": str(REPO), "RAY_AUTH_MODE": "disabled", **(env or {})})


def _done(journal_dir: Path) -> list[dict]:
    path = journal_dir / "pagerouter-batch.journal.jsonl"
    return [json.loads(ln) for ln in path.read_text().splitlines()]


def test_the_readme_lines_parse_as_the_cli_reads_them():
    """Cheap half: the README still has both forms (address, bare) and they are `batch` lines."""
    lines = [argv_of(ln) for ln in readme_ray_lines()]
    assert any(a[-1] == "--ray" or a[a.index("--ray") + 1].startswith("-") for a in lines), "the bare form"
    assert any(re.fullmatch(r"[\d.]+:\d+", a[a.index("--ray") + 1] if a.index("--ray") + 1 < len(a) else "")
               for a in lines), "the ADDRESS form"


def test_readme_address_form_with_bucket_uris(cluster, tmp_path):
    line = next(ln for ln in readme_ray_lines() if "s3://" in ln)
    _pdf(tmp_path / "bucket" / "pdfs" / "a.pdf", "Alpha")
    _pdf(tmp_path / "bucket" / "pdfs" / "sub" / "b.pdf", "Beta")
    r = _run(swapped(argv_of(line), tmp_path, cluster.address), tmp_path, cluster)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "bucket" / "out" / "a.md").read_text().startswith("# Alpha")
    assert (tmp_path / "bucket" / "out" / "sub" / "b.md").read_text().startswith("# Beta")
    recs = _done(tmp_path / "state")  # `--journal-dir ./state`, relative to where it ran
    assert sorted(r["status"] for r in recs) == ["done", "done"]


@pytest.mark.parametrize("how", ["bare", "auto"])
def test_readme_bare_form_finds_the_cluster(cluster, tmp_path, how):
    line = next(ln for ln in readme_ray_lines() if "/data/in" in ln)
    argv = swapped(argv_of(line), tmp_path, cluster.address)
    assert argv[-1] == "--ray", argv  # the README's bare flag, last on its line
    if how == "auto":
        argv = argv + ["auto"]
    _pdf(tmp_path / "data" / "in" / "c.pdf", "Gamma")
    r = _run(argv, tmp_path, cluster, env={"RAY_ADDRESS": cluster.address})
    assert "Invalid address format" not in r.stderr
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "data" / "out" / "c.md").read_text().startswith("# Gamma")
    assert [r["status"] for r in _done(tmp_path / "data" / "out")] == ["done"]
