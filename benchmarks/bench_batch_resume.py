"""A real `pagerouter batch` killed with -9 half way, then resumed: pages lost and duplicated.

    python benchmarks/bench_batch_resume.py [CORPUS_DIR] [--out DIR] [--jobs 2] [--kill-at 0.5]
        [--config YAML] [--endpoint URL | --grpc HOST:PORT]

Runs the batch in its own process group, waits until the journal holds `--kill-at` of the
files, SIGKILLs the whole group (the batch and its MuPDF workers, as an OOM killer or a lost
machine would), then runs the same command again to the end. Checks against the inputs
themselves, not against the journal's own counts: every input has exactly one `done` record,
its JSON holds exactly the input's page numbers once each, its Markdown is there, and no temp
file is left. Prints the figures (pages lost, duplicated, files converted twice because they
were in flight at the kill, seconds and pages/s of each run).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout  # noqa: E402

skip_pymupdf_layout()  # a process of ours, as the CLI's: PyMuPDF's unused layout model is not built

import pymupdf  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "real"
JOURNAL = "pagerouter-batch.journal.jsonl"
TMP_SUFFIX = ".pagerouter-tmp"


def _records(out: Path) -> list[dict]:
    recs = []
    path = out / JOURNAL
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass  # a line torn by the kill
    return recs


def _page_count(pdf: Path) -> int:
    with pymupdf.open(pdf) as doc:
        return doc.page_count


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--out", type=Path, help="output dir (default: a new temp dir)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--kill-at", type=float, default=0.5, help="share of files done when the kill lands")
    ap.add_argument("--config", type=Path)
    ap.add_argument("--endpoint")
    ap.add_argument("--grpc")
    a = ap.parse_args()
    inputs = sorted(a.corpus.rglob("*.pdf"))
    if not inputs:
        print(f"{a.corpus}: no PDFs", file=sys.stderr)
        return 2
    out = a.out or Path(tempfile.mkdtemp(prefix="pr-resume-"))
    cmd = [sys.executable, "-m", "pagerouter.cli.main", "batch", str(a.corpus), "-o", str(out), "--jobs", str(a.jobs), "-q"]
    for flag, value in (("--config", a.config), ("--endpoint", a.endpoint), ("--grpc", a.grpc)):
        if value:
            cmd += [flag, str(value)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    kill_after = max(1, int(len(inputs) * a.kill_at))

    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None and len(_records(out)) < kill_after:
        time.sleep(0.1)
    if proc.poll() is not None:
        print(f"the batch ended (rc {proc.returncode}) before {kill_after} files were done", file=sys.stderr)
        return 1
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    first_s = time.monotonic() - t0
    at_kill = _records(out)
    stray = sorted(str(p.relative_to(out)) for p in out.rglob(f"*{TMP_SUFFIX}"))

    t1 = time.monotonic()
    rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL).returncode
    second_s = time.monotonic() - t1
    recs = _records(out)

    done = [r for r in recs if r.get("status") == "done"]
    per_input = Counter(os.path.realpath(r["input"]) for r in done)
    lost = duplicated = expected_pages = written_pages = 0
    problems = []
    for pdf in inputs:
        n = _page_count(pdf)
        expected_pages += n
        key = os.path.realpath(pdf)
        if per_input[key] != 1:
            problems.append(f"{pdf.name}: {per_input[key]} done records")
        rec = next((r for r in done if os.path.realpath(r["input"]) == key), None)
        if rec is None:
            lost += n
            continue
        md, js = (out / p for p in rec["outputs"])
        numbers = Counter(p["number"] for p in json.loads(js.read_text())["pages"])
        written_pages += sum(numbers.values())
        lost += sum(1 for k in range(1, n + 1) if numbers[k] == 0)
        duplicated += sum(c - 1 for c in numbers.values() if c > 1) + sum(c for k, c in numbers.items() if not 1 <= k <= n)
        if not md.exists():
            problems.append(f"{pdf.name}: Markdown missing")
    left_tmp = list(out.rglob(f"*{TMP_SUFFIX}"))
    in_flight = len({r["input"] for r in done}) - len({r["input"] for r in at_kill if r.get("status") == "done"})
    print(f"corpus: {a.corpus} ({len(inputs)} files, {expected_pages} pages), out: {out}")
    print(f"run 1: killed with SIGKILL after {first_s:.1f} s, {len(at_kill)} files in the journal"
          f" ({sum(r.get('pages', 0) for r in at_kill)} pages); temp files left by the kill: {len(stray)}")
    print(f"run 2 (resume): rc {rc}, {second_s:.1f} s, converted {in_flight} files"
          f" ({len(inputs) - len(at_kill)} were not done at the kill)")
    print(f"pages expected {expected_pages}, written {written_pages}, lost {lost}, duplicated {duplicated};"
          f" temp files left at the end: {len(left_tmp)}")
    total_s = first_s + second_s
    print(f"both runs: {total_s:.1f} s, {expected_pages / total_s:.2f} pages/s")
    for p in problems:
        print("PROBLEM:", p)
    return 0 if not (lost or duplicated or problems or left_tmp) else 1


if __name__ == "__main__":
    sys.exit(main())
