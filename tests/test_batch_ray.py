"""`pagerouter batch --ray` on a real two-node Ray cluster (`ray start --head` + a worker node on
loopback, tests/ray_cluster.py): Ray Data over the same stage objects as `pagerouter convert`.

- a mixed corpus (born-digital files, one cut into several page ranges, and a scan) read and
  written through pyarrow's filesystem (`file://` URIs, a second local "bucket") gives the
  very Markdown `pagerouter convert` gives, and a Parquet manifest with every page;
- the driver killed with SIGKILL part-way, then the same command again: every file done once,
  every page in the manifest once, and the pages the killed run had finished (whole files, and
  the staged pages of a half-read file) are not converted again;
- every process of the worker node killed mid-run: the run ends with every page read;
- a pool asking for GPUs the cluster lacks is refused up front (Ray Data would wait forever).

Slow (a Ray cluster on 2 shared cores): one cluster for the module, a few small files.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pymupdf
import pytest

from pagerouter.batch.journal import read_records
from pagerouter.cli.main import main
from pagerouter.isolation import FAULT_ENV
from pagerouter.bench.synth import LOREM, add_blank_page, add_scanned_page, add_text_page

from .hostile_corpus import cmdline, descendants
from .ray_cluster import REPO, RayStartCluster

pytestmark = pytest.mark.slow

SCAN_LINES = ["Quarterly ledger", "Invoices paid in March", "Total due 4,210 euros"]


def _doc(path: Path, pages: int, tag: str, blank: bool = False) -> Path:
    d = pymupdf.open()
    for i in range(pages):
        add_text_page(d, [LOREM, f"{tag} page {i + 1} says its own words."], title=f"{tag} {i + 1}",
                      header=f"{tag} running head", footer=f"{i + 1}")
    if blank:
        add_blank_page(d)
    path.parent.mkdir(parents=True, exist_ok=True)
    d.save(path)
    return path


@pytest.fixture(scope="module")
def cluster():
    # a head that runs no task (as a large cluster's head is set up) and two workers: every actor of
    # the pool is on a worker, so the node-kill test can always kill one that holds a pool actor
    # (with CPUs on the head, Ray's SPREAD put all three there in about one run of two)
    with RayStartCluster(head_cpus=0, workers=[2, 2]) as c:
        yield c


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("rayb")
    bucket = root / "bucket" / "in"
    _doc(bucket / "report.pdf", 7, "Report")  # 3 ranges of 3, 3 and 1 pages
    _doc(bucket / "a" / "letter.pdf", 2, "Letter", blank=True)
    d = pymupdf.open()
    add_scanned_page(d, SCAN_LINES)
    add_text_page(d, ["A born-digital page after the scan."], title="Appendix")
    (bucket / "b").mkdir()
    d.save(bucket / "b" / "scan.pdf")
    cfg = root / "cfg.yaml"
    # three actors of the one CPU pool (as many as the three pools had), all on the two workers
    cfg.write_text("batch:\n  pages_per_range: 3\n  files_per_open_task: 2\n"
                   "  cpu_pool: {min_size: 3, max_size: 3, num_cpus: 0.25}\n")
    return root


def batch_cmd(cluster, inputs: list[str], out: str, cfg: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pagerouter.cli.main", "batch", *inputs, "-o", out, "--config", str(cfg), "-q",
            "--ray", cluster.address, *extra]


def run_batch(cmd: list[str], env: dict | None = None, timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


def converted(src: Path, outdir: Path, cfg: Path) -> tuple[str, dict]:
    assert main(["convert", str(src), "-o", str(outdir), "--format", "both", "-q", "--wait", "bulk",
                 "--config", str(cfg)]) in (0, 1)
    return (outdir / f"{src.stem}.md").read_text(), json.loads((outdir / f"{src.stem}.json").read_text())


def same_json(a, b, key: str = "") -> bool:
    """Equal but for timings, and for OCR confidences within 0.01: the small reader recognises the
    text lines of every page in its batch in one run (as in the served graph), which moves a
    line's confidence in the third decimal, never its text (the Markdown is compared as bytes)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(k == "timings" or same_json(a[k], b[k], k) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y, key) for x, y in zip(a, b))
    if key in ("confidence", "score") and isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 0.01
    return a == b


def manifest(out: Path):
    return pq.read_table(out / "pagerouter-batch.pages.parquet").to_pylist()


def test_same_markdown_as_convert_through_filesystem_uris(cluster, corpus, tmp_path):
    out = tmp_path / "out-bucket"
    # usage stats on, as on a user's machine (CI turns them off, and Ray Data then starts no usage actor anyway)
    r = run_batch(batch_cmd(cluster, [f"file://{corpus / 'bucket' / 'in'}"], f"file://{out}", corpus / "cfg.yaml"),
                  env={"RAY_USAGE_STATS_ENABLED": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    files = {"report": 7, "a/letter": 3, "b/scan": 2}
    for rel, n in files.items():
        src = corpus / "bucket" / "in" / f"{rel}.pdf"
        md, js = converted(src, tmp_path / "conv" / rel, corpus / "cfg.yaml")
        assert (out / f"{rel}.md").read_text() == md, rel
        got = json.loads((out / f"{rel}.json").read_text())
        assert same_json(got, js) and len(got["pages"]) == n, rel
    scan_md = (out / "b" / "scan.md").read_text()
    assert all(line in scan_md for line in SCAN_LINES), scan_md
    assert "Report 7" in (out / "report.md").read_text()
    rows = manifest(out)
    assert sorted((Path(r["path"]).name, r["page"]) for r in rows) == sorted(
        (f"{Path(rel).name}.pdf", p) for rel, n in files.items() for p in range(1, n + 1))
    by = {(Path(r["path"]).name, r["page"]): r for r in rows}
    assert by[("scan.pdf", 1)]["route"] == "ocr" and by[("report.pdf", 4)]["route"] == "text_layer"
    assert by[("scan.pdf", 1)]["engine"] and all(r["status"] in ("ok", "flagged") for r in rows)
    summary = json.loads((out / "pagerouter-batch.summary.json").read_text())
    assert summary["done"] == 3 and summary["pages"] == 12 and summary["cpu_seconds"] > 0
    assert summary["usd_per_million_pages"] > 0 and summary["time_to_first_output_s"] > 0
    # Ray Data's usage-report actor is never started by pagerouter's driver: it would live as long
    # as the cluster, a worker process at ~8 CPU-ms a second
    assert not [t for t in cluster_processes(cluster) if "UsageCollection" in t]


def cluster_processes(cluster) -> list[str]:
    """The command lines (Ray's process titles) of every process the cluster's nodes started."""
    roots = [p.pid for p in [cluster.head, *cluster.workers] if p is not None]
    return [cmdline(pid) for root in roots for pid in descendants(root)]



def test_a_pool_asking_for_gpus_the_cluster_lacks_is_refused_before_it_starts(cluster, corpus, tmp_path):
    cfg = tmp_path / "gpu.yaml"
    cfg.write_text("batch:\n  escalation: {num_gpus: 1}\n")
    r = run_batch(batch_cmd(cluster, [str(corpus / "bucket" / "in" / "report.pdf")], str(tmp_path / "out"), cfg))
    assert r.returncode == 2 and "batch.escalation.num_gpus is 1 but the Ray cluster's largest node has 0 GPUs" in r.stderr, r.stderr
    assert not list((tmp_path / "out").glob("*.md"))


def _wait_for(cond, proc: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {what}: {proc.stderr.read()[-3000:]}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _seen_when(cmd: list[str], env: dict, ready, seen, what: str) -> tuple[bool, int, str]:
    """Run `cmd` (`env` added); whether `seen()` held when `ready()` first did, then, at the run's
    end, its exit status and stderr."""
    proc = subprocess.Popen(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for(ready, proc, 300, what)
        got = seen()
        _, err = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:
            proc.kill()
    return got, proc.returncode, err


def _pool_actor(cmd: str) -> bool:
    """A process of the one CPU pool's actors (Ray titles it `ray::MapWorker(MapBatches(CpuPool))`)."""
    return cmd.startswith("ray::") and ("MapWorker" in cmd or "Stage" in cmd or "CpuPool" in cmd)


def _node_with_pool_actor(cluster) -> int | None:
    for i, worker in enumerate(cluster.workers):
        if worker is not None and any(_pool_actor(cmdline(p)) for p in descendants(worker.pid)):
            return i
    return None


def _staged_pages(out: Path) -> int:
    return sum(max(0, len(p.read_text().splitlines()) - 1) for p in (out / "pagerouter-batch.staging").glob("*.jsonl"))


def test_driver_killed_then_rerun_loses_nothing_and_converts_nothing_twice(cluster, tmp_path):
    src = tmp_path / "in"
    for i in range(4):
        _doc(src / f"small{i}.pdf", 2, f"Small{i}")
    _doc(src / "long.pdf", 10, "Long")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("ocr: {enabled: false}\nbatch: {pages_per_range: 2, files_per_open_task: 1}\n")
    out = tmp_path / "out"
    cmd = batch_cmd(cluster, [str(src)], str(out), cfg)
    env = {**os.environ, "PYTHONPATH": str(REPO), FAULT_ENV: "sleep0.5@page"}  # slow pages: the kill lands midway
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _wait_for(lambda: _staged_pages(out) >= 2, proc, 240, "a page of the long file was staged")
        os.kill(proc.pid, signal.SIGKILL)  # the driver, mid-run
    finally:
        proc.wait(timeout=30)
    first = read_records(out)
    kept_pages = _staged_pages(out) + sum(r["pages"] for r in first)
    assert kept_pages < 18, "the kill must land before the end"

    r = run_batch(cmd)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = read_records(out)
    assert sorted(Path(x["input"]).name for x in recs) == sorted([f"small{i}.pdf" for i in range(4)] + ["long.pdf"])
    assert all(x["status"] == "done" for x in recs), "each file exactly one record, all done"
    rows = manifest(out)
    assert sorted((Path(x["path"]).name, x["page"]) for x in rows) == sorted(
        [(f"small{i}.pdf", p) for i in range(4) for p in (1, 2)] + [("long.pdf", p) for p in range(1, 11)])
    summary = json.loads((out / "pagerouter-batch.summary.json").read_text())
    from_run1 = sum(1 for x in rows if x["run"] != summary["run"])
    assert from_run1 == kept_pages >= 2
    assert summary["pages_converted_by_pipeline"] == 18 - kept_pages, "no finished page converted again"
    assert not (out / "pagerouter-batch.staging").exists() or not list((out / "pagerouter-batch.staging").iterdir())
    md, _ = converted(src / "long.pdf", tmp_path / "conv", cfg)
    assert (out / "long.md").read_text() == md, "a file stitched from two runs reads as one conversion"


def test_a_document_is_written_when_its_last_page_is_done_not_at_the_end(cluster, corpus, tmp_path):
    """Streaming outputs: three one-page files and a 40-page file whose pages each take 0.5 s;
    the short files' outputs are written while the long file is still being read, not when the
    run ends. The pool as the corpus config has it (batch_size 4: a pool must not hold the
    short files' rows back until it has a full batch)."""
    src = tmp_path / "in"
    for i in range(3):
        _doc(src / f"short{i}.pdf", 1, f"Short{i}")
    _doc(src / "long.pdf", 40, "Long")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text((corpus / "cfg.yaml").read_text().replace("pages_per_range: 3", "pages_per_range: 20")
                   .replace("files_per_open_task: 2", "files_per_open_task: 1") + "ocr: {enabled: false}\n")
    out = tmp_path / "out"
    long_done_early, rc, err = _seen_when(batch_cmd(cluster, [str(src)], str(out), cfg), {FAULT_ENV: "sleep0.5@page"},
                                          lambda: out.exists() and any(out.glob("short*.md")), lambda: (out / "long.md").exists(),
                                          "a short file's output was written")
    assert rc == 0, err[-3000:]
    assert not long_done_early, "the short file's output must come before the long file's"
    assert sorted(p.name for p in out.glob("*.md")) == ["long.md", "short0.md", "short1.md", "short2.md"]


def test_finished_pages_are_written_before_the_ocr_pages_ahead_of_them_in_the_pool(cluster, corpus, tmp_path):
    """Finished pages do not wait for the pools (batch/early_pages.py): an 11-page scan and a
    born-digital file opened by one task leave it as one block, the scan's OCR rows ahead of
    the born-digital file's pages, and with the pool's batch of 4 the latter are a pool call
    of their own after every OCR page. Through the dataset alone the born-digital output was
    written after the scan's; posted early, it is written while the scan is still read. The
    page is taken once (it arrives twice): one record per file, every page once, same bytes."""
    src = tmp_path / "in"
    src.mkdir()
    d = pymupdf.open()
    for i in range(11):
        add_scanned_page(d, [f"Ledger sheet {i + 1}", *SCAN_LINES[1:]])
    d.save(src / "a_scan.pdf")
    _doc(src / "b_text.pdf", 2, "Text")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("batch:\n  pages_per_range: 20\n  files_per_open_task: 2\n"
                   "  cpu_pool: {min_size: 1, max_size: 1, num_cpus: 0.25, batch_size: 4}\n")
    out = tmp_path / "out"
    scan_done_first, rc, err = _seen_when(batch_cmd(cluster, [str(src)], str(out), cfg), {},
                                          lambda: (out / "b_text.md").exists(), lambda: (out / "a_scan.md").exists(),
                                          "the born-digital file's output")
    assert rc == 0, err[-3000:]
    assert not scan_done_first, "the born-digital file waited for the scan's OCR pages ahead of it"
    recs = read_records(out)
    assert sorted(Path(r["input"]).name for r in recs) == ["a_scan.pdf", "b_text.pdf"]
    assert all(r["status"] == "done" for r in recs)
    rows = manifest(out)
    assert sorted((Path(r["path"]).name, r["page"]) for r in rows) == (
        [("a_scan.pdf", n) for n in range(1, 12)] + [("b_text.pdf", 1), ("b_text.pdf", 2)])
    summary = json.loads((out / "pagerouter-batch.summary.json").read_text())
    assert summary["pages_converted_by_pipeline"] == 13, "a page that came twice was counted once"
    md, _ = converted(src / "b_text.pdf", tmp_path / "conv", cfg)
    assert (out / "b_text.md").read_text() == md


def test_worker_node_killed_mid_run_loses_no_page(cluster, corpus, tmp_path):
    src = tmp_path / "in"
    for i in range(3):
        _doc(src / f"doc{i}.pdf", 4, f"Doc{i}")
    (src / "scan.pdf").write_bytes((corpus / "bucket" / "in" / "b" / "scan.pdf").read_bytes())
    cfg = corpus / "cfg.yaml"
    out = tmp_path / "out"
    proc = subprocess.Popen(batch_cmd(cluster, [str(src)], str(out), cfg), cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO), FAULT_ENV: "sleep0.5@page"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for(lambda: _staged_pages(out) + len(read_records(out)) > 0 if out.exists() else False, proc, 240,
                  "the first pages came back")
        # the first worker node that holds a pool actor (on a loaded machine an actor may still be
        # starting, its process not yet titled, when the first pages are back)
        _wait_for(lambda: _node_with_pool_actor(cluster) is not None, proc, 120, "a pool actor on a worker node")
        node = _node_with_pool_actor(cluster)
        names = [cmdline(p) for p in descendants(cluster.workers[node].pid)]
        killed = cluster.kill_worker(node)
        print(f"\nkilled {len(killed)} processes of the worker node: "
              + "; ".join(sorted({n.split(' ')[0].rsplit('/', 1)[-1] for n in names if n})))
        _, err = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    assert any("raylet" in n for n in names) and any(n.startswith("ray::") for n in names), names
    assert any(_pool_actor(n) for n in names), f"no pool actor on the killed node: {names}"
    recs = read_records(out)
    assert len(recs) == 4 and all(r["status"] == "done" and r["page_status"]["failed"] == 0 for r in recs)
    assert len(manifest(out)) == 3 * 4 + 2
    for name in ("doc0", "doc1", "doc2", "scan"):  # every page as convert reads it: same status, same text
        md, js = converted(src / f"{name}.pdf", tmp_path / "conv", cfg)
        assert (out / f"{name}.md").read_text() == md, name
        got = json.loads((out / f"{name}.json").read_text())
        assert [p["status"] for p in got["pages"]] == [p["status"] for p in js["pages"]], name
