"""`pagerouter batch --ray` on small nodes: a head and a worker of 1 CPU each, default config.

Before, Ray Data's streaming repartition (one page range per block) asked Ray's default of 1 CPU
per task; with the pools' actors holding part of both nodes no such task could start and the
run printed nothing for as long as it was left (420 s here; 11 minutes in the issue). Now every
stage fits a 1-CPU node (tests/test_batch_ray_plan.py checks the asks), the run ends, and what
it writes is what `pagerouter convert` writes. Slow: a two-node Ray cluster on 2 shared cores.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from pagerouter.batch.journal import read_records
from pagerouter.cli.main import main

from .ray_cluster import REPO, RayStartCluster

pytestmark = pytest.mark.slow

REAL = REPO.parent / "shared" / "corpus" / "real"
FILES = ["large_prompt_hint3.pdf", "edgar-rotated90.pdf", "handwriting_bad_ocr.pdf"]  # text layer and OCR pages


def test_two_one_cpu_nodes_finish_the_run_with_convert_s_output(tmp_path):
    if not REAL.is_dir():  # CI lays shared/ beside the checkout: a missing corpus fails, never skips
        pytest.fail(f"real corpus not found at {REAL}")
    src = tmp_path / "in"
    src.mkdir()
    for f in FILES:
        shutil.copy(REAL / f, src / f)
    out = tmp_path / "out"
    with RayStartCluster(head_cpus=1, workers=[1]) as cluster:
        try:
            r = subprocess.run([sys.executable, "-m", "pagerouter.cli.main", "batch", str(src), "-o", str(out), "-q",
                                "--ray", cluster.address], check=False, cwd=REPO, capture_output=True, text=True,
                               timeout=480, env={**os.environ, "PYTHONPATH": str(REPO), "RAY_AUTH_MODE": "disabled"})
        except subprocess.TimeoutExpired:
            pytest.fail(f"the run on two 1-CPU nodes did not end in 480 s; journal: {read_records(out) if out.exists() else None}")
    assert r.returncode == 0, r.stderr[-3000:]
    assert sorted(rec["status"] for rec in read_records(out)) == ["done"] * len(FILES)
    conv = tmp_path / "conv"
    assert main(["convert", *(str(src / f) for f in FILES), "-o", str(conv), "--format", "md", "-q", "--wait", "bulk"]) == 0
    for f in FILES:
        md = f.replace(".pdf", ".md")
        assert (out / md).read_bytes() == (conv / md).read_bytes(), f
