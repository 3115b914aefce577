"""One conversion whatever the driver: `pagerouter batch --ray` writes the bytes `pagerouter
convert` writes, on files of the real corpus (`../shared/corpus/real`).

Both run here, on the same checkout, one after the other, with the default config (the README's
command has no `--config`), `--wait bulk` for `convert` as `batch` defaults to it. The Markdown
is compared as bytes; the JSON as bytes after two inherently variable things are taken out:
each page's `timings` (seconds measured on a busy machine) and the seconds a vote escalator's
check reason quotes ("... 53 chars in 1.3 s ..."). Nothing else is forgiven: confidences, text,
checks, flags and statuses must be equal.

What it caught: text-layer pages left the Ray triage task straight from the walk, not through
`pipeline.convert_pages`, so they skipped its output hygiene (`de\\x02nition`, U+0094 in
large_prompt_hint3.pdf); the small-reader pool recognised the text lines of several pages in one
run, which reads some lines differently from `convert`'s one page per run.

The whole corpus (37 files, 552 pages) takes far longer than a test may on 2 shared cores, so by
default a fixed subset runs that holds every route: text layer with control characters, a
rotated text page, scans (one flagged, so escalated), a file of mixed and OCR pages (several OCR
pages in one reader batch). `PAGEROUTER_REAL_CORPUS=all` runs every file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pagerouter.cli.main import main
from pagerouter.render.output import has_control_chars

from .ray_cluster import REPO, RayStartCluster

pytestmark = pytest.mark.slow

REAL = REPO.parent / "shared" / "corpus" / "real"
SUBSET = [
    "large_prompt_hint3.pdf",  # text layer: control characters in 4 of 4 pages
    "edgar-rotated90.pdf",  # a rotated text-layer page
    "ambiguous.pdf",  # a scan the small reader's checks flag: the escalation pool
    "handwriting_bad_ocr.pdf",  # two OCR pages
    "most_content_in_image_form.pdf",  # mixed and OCR pages of one file, in one reader batch
]


def corpus_files() -> list[Path]:
    if os.environ.get("PAGEROUTER_REAL_CORPUS") == "all":
        return sorted(REAL.glob("*.pdf"))
    return [REAL / n for n in SUBSET]


_SECONDS = re.compile(r" in \d+(?:\.\d+)? s\b")


def comparable_json(text: str) -> str:
    def strip(x, key=""):
        if isinstance(x, dict):
            return {k: strip(v, k) for k, v in x.items() if k != "timings"}
        if isinstance(x, list):
            return [strip(v, key) for v in x]
        if key == "reason" and isinstance(x, str):
            return _SECONDS.sub(" in ? s", x)
        return x
    return json.dumps(strip(json.loads(text)), indent=2, ensure_ascii=False)


def test_ray_writes_the_bytes_convert_writes_on_the_real_corpus(tmp_path):
    if not REAL.is_dir():  # CI lays shared/ beside the checkout: a missing corpus fails, never skips
        pytest.fail(f"real corpus not found at {REAL}")
    src = tmp_path / "in"
    src.mkdir()
    files = corpus_files()
    for f in files:
        shutil.copy(f, src / f.name)
    conv = tmp_path / "conv"
    assert main(["convert", *map(str, sorted(src.iterdir())), "-o", str(conv), "--format", "both", "-q",
                 "--wait", "bulk"]) in (0, 1)
    out = tmp_path / "ray"
    with RayStartCluster(head_cpus=2, workers=[]) as cluster:
        r = subprocess.run([sys.executable, "-m", "pagerouter.cli.main", "batch", str(src), "-o", str(out), "-q",
                            "--ray", cluster.address], check=False, cwd=REPO, capture_output=True, text=True, timeout=1800,
                           env={**os.environ, "PYTHONPATH": str(REPO), "RAY_AUTH_MODE": "disabled"})
    assert r.returncode in (0, 1), r.stderr[-3000:]
    differ = []
    for f in files:
        md, js = (out / f.name).with_suffix(".md"), (out / f.name).with_suffix(".json")
        assert not has_control_chars(md.read_text()), f"{f.name}: control characters in the Ray run's Markdown"
        if md.read_bytes() != (conv / f.name).with_suffix(".md").read_bytes():
            differ.append(f"{f.name} (Markdown)")
        if comparable_json(js.read_text()) != comparable_json((conv / f.name).with_suffix(".json").read_text()):
            differ.append(f"{f.name} (JSON)")
    assert not differ, f"--ray differs from convert: {differ}"
