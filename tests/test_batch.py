"""`pagerouter batch` end to end on generated PDFs: inputs, outputs equal to `convert`, resume
after a real kill -9, --retry-failed, --shard, the summary. No Ray; OCR off via a config file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pymupdf
import pytest

from pagerouter.batch.inputs import in_shard, plan
from pagerouter.batch.journal import TMP_SUFFIX, read_records
from pagerouter.cli.main import main
from pagerouter.model import Document
from pagerouter.bench.synth import LOREM, add_blank_page, add_text_page

REPO = Path(__file__).resolve().parents[1]
N_PER_DIR = 15  # two folders: 30 small files


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("batch")
    for d in ("a", "b"):  # a/x0.pdf and b/x0.pdf: same names, must not collide
        (root / "in" / d).mkdir(parents=True)
        for i in range(N_PER_DIR):
            doc = pymupdf.open()
            add_text_page(doc, [LOREM, f"File {d}{i} has its own words."], title=f"Report {d}{i}")
            add_blank_page(doc)
            doc.save(root / "in" / d / f"x{i}.pdf")
    (root / "cfg.yaml").write_text("ocr:\n  enabled: false\n")
    return root


def batch(*args: str) -> int:
    return main(["batch", *args])


def records(outdir: Path) -> list[dict]:
    return read_records(outdir)


def strip_timings(data: dict) -> dict:
    for p in data["pages"]:
        p["timings"] = {}
    return data


def test_folder_glob_and_list_inputs_equal_convert(corpus, tmp_path, capsys):
    cfg = str(corpus / "cfg.yaml")
    folder = str(corpus / "in")
    out = tmp_path / "out"
    assert batch(folder, "-o", str(out), "--config", cfg, "-q") == 0
    for d in ("a", "b"):
        for i in range(N_PER_DIR):
            assert (out / d / f"x{i}.md").is_file() and (out / d / f"x{i}.json").is_file()
    # the same file through `pagerouter convert`: identical Markdown, identical JSON but for timings
    conv = tmp_path / "conv"
    src = str(corpus / "in" / "b" / "x3.pdf")
    assert main(["convert", src, "-o", str(conv), "--format", "both", "-q", "--config", cfg, "--wait", "bulk"]) == 0
    assert (out / "b" / "x3.md").read_text() == (conv / "x3.md").read_text()
    got = strip_timings(json.loads((out / "b" / "x3.json").read_text()))
    want = strip_timings(json.loads((conv / "x3.json").read_text()))
    assert got == want and "Report b3" in (out / "b" / "x3.md").read_text()

    # a glob and an @list file: only what they name, mirrored under their common folder
    out2 = tmp_path / "out2"
    listing = tmp_path / "list.txt"
    listing.write_text(f"# two from b\n{corpus / 'in' / 'b' / 'x1.pdf'}\n\n{corpus / 'in' / 'b' / 'x2.pdf'}\n")
    assert batch(str(corpus / "in" / "a" / "x1*.pdf"), f"@{listing}", "-o", str(out2), "--config", cfg, "-q") == 0
    names = sorted(str(p.relative_to(out2)) for p in out2.rglob("*.md"))
    assert names == ["a/x1.md", "a/x10.md", "a/x11.md", "a/x12.md", "a/x13.md", "a/x14.md", "b/x1.md", "b/x2.md"]


def test_resume_after_kill_9(corpus, tmp_path):
    out = tmp_path / "out"
    journal = out / "pagerouter-batch.journal.jsonl"
    cmd = [sys.executable, "-m", "pagerouter.cli.main", "batch", str(corpus / "in"), "-o", str(out), "--jobs", "1",
           "--config", str(corpus / "cfg.yaml"), "-q"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if journal.exists() and journal.read_text().count("\n") >= 3:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)  # the batch process itself, mid-run
    finally:
        proc.wait(timeout=30)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # then its orphaned MuPDF workers
        except ProcessLookupError:
            pass
    killed_at = len(records(out))
    assert 3 <= killed_at < 2 * N_PER_DIR, "the kill must land midway"
    stray = out / "a" / f"x0.md.s0of1{TMP_SUFFIX}"  # what a kill between write and rename leaves
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_text("half")

    assert batch(str(corpus / "in"), "-o", str(out), "--config", str(corpus / "cfg.yaml"), "-q") == 0
    recs = records(out)
    per_file: dict[str, int] = {}
    for r in recs:
        per_file[r["input"]] = per_file.get(r["input"], 0) + 1
    assert len(per_file) == 2 * N_PER_DIR and set(per_file.values()) == {1}, "each file exactly one record"
    assert all(r["status"] == "done" for r in recs)
    assert not list(out.rglob(f"*{TMP_SUFFIX}")), "no temp files left"
    pages = 0
    for r in recs:
        doc = Document.model_validate_json((out / r["outputs"][1]).read_text())
        assert [p.number for p in doc.pages] == [1, 2] and r["pages"] == 2
        assert (out / r["outputs"][0]).read_text().strip()
        pages += len(doc.pages)
    assert pages == 2 * 2 * N_PER_DIR  # none lost, none duplicated


def test_bad_inputs_fail_cleanly_and_retry_failed(corpus, tmp_path, capsys):
    bad = tmp_path / "in" / "bad.pdf"
    bad.parent.mkdir()
    bad.write_bytes(b"this is not a pdf")
    good = corpus / "in" / "a" / "x0.pdf"
    missing = tmp_path / "in" / "gone.pdf"
    out = tmp_path / "out"
    args = [str(bad), str(good), str(missing), "-o", str(out), "--config", str(corpus / "cfg.yaml")]
    assert batch(*args) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "bad.pdf" in err and "gone.pdf: no such file" in err
    by_input = {Path(r["input"]).name: r for r in records(out)}
    assert by_input["bad.pdf"]["status"] == "failed" and by_input["x0.pdf"]["status"] == "done"
    summary = json.loads((out / "pagerouter-batch.summary.json").read_text())
    assert summary["failed"] == 2 and {Path(f["input"]).name for f in summary["failed_files"]} == {"bad.pdf", "gone.pdf"}

    assert batch(*args, "-q") == 1  # a plain re-run leaves failed files alone
    assert len(records(out)) == 3
    assert batch(*args, "-q", "--retry-failed") == 1  # still bad: retried, recorded again
    again = [Path(r["input"]).name for r in records(out)[3:]]
    assert sorted(again) == ["bad.pdf", "gone.pdf"], "only the failed ones ran again"


def test_shards_partition_the_inputs(corpus, tmp_path):
    items = plan([str(corpus / "in")])
    parts = [{str(i.rel) for i in items if in_shard(i, (k, 2))} for k in range(2)]
    assert parts[0] and parts[1] and not parts[0] & parts[1]
    assert parts[0] | parts[1] == {str(i.rel) for i in items}
    out = tmp_path / "out"
    for s in ("0/2", "1/2"):
        assert batch(str(corpus / "in"), "-o", str(out), "--shard", s, "--config", str(corpus / "cfg.yaml"), "-q") == 0
    by_shard = [json.loads((out / f"pagerouter-batch.shard-{k}-of-2.journal.jsonl").read_text().splitlines()[0])
                for k in range(2)]
    assert by_shard[0]["rel"] in parts[0] and by_shard[1]["rel"] in parts[1]
    rels = [r["rel"] for r in read_records(out)]
    assert sorted(rels) == sorted(parts[0] | parts[1]) and len(rels) == len(set(rels))
    assert main(["batch", "x", "-o", str(out), "--shard", "2/2"]) == 2  # usage error


def test_summary_matches_outputs(corpus, tmp_path):
    out = tmp_path / "out"
    assert batch(str(corpus / "in" / "a"), "-o", str(out), "--config", str(corpus / "cfg.yaml"), "-q") == 0
    summary = json.loads((out / "pagerouter-batch.summary.json").read_text())
    routes: dict[str, int] = {}
    for j in out.rglob("x*.json"):
        for p in json.loads(j.read_text())["pages"]:
            routes[p["route"]] = routes.get(p["route"], 0) + 1
    assert {k: v["pages"] for k, v in summary["routes"].items()} == routes
    assert summary["pages"] == sum(routes.values()) == summary["pages_this_run"] == 2 * N_PER_DIR
    assert summary["done"] == N_PER_DIR and summary["failed"] == 0 and summary["pages_per_s"] > 0


def test_endpoint_uses_the_http_client(corpus, tmp_path, monkeypatch):
    """--endpoint through pagerouter.clients.http_client.PagerouterHttpClient (replaced here by an in-process
    stand-in that converts locally: no server, no Ray) with --wait bulk and the file's name."""
    import pagerouter.clients.http_client as http_client
    from pagerouter.config import load_config
    from pagerouter.convert.converter import Converter

    calls = []

    class FakeClient:
        def __init__(self, url, timeout, retry=None):
            self.conv = Converter(load_config(corpus / "cfg.yaml"))
            calls.append(("init", url))

        def convert(self, data, **kw):
            calls.append(("convert", kw["filename"], kw["wait"]))
            kw.pop("filename")
            return self.conv.convert(data, name=calls[-1][1], **kw)

        def close(self):
            self.conv.close()

    monkeypatch.setattr(http_client, "PagerouterHttpClient", FakeClient)
    out = tmp_path / "out"
    src = corpus / "in" / "b" / "x5.pdf"
    assert batch(str(src), "-o", str(out), "--endpoint", "http://127.0.0.1:1", "--config", str(corpus / "cfg.yaml"), "-q") == 0
    assert calls[0] == ("init", "http://127.0.0.1:1") and calls[1] == ("convert", str(src), "bulk")
    assert "Report b5" in (out / "x5.md").read_text()
    assert records(out)[0]["mode"] == "http"


def test_usage_errors(corpus, tmp_path, capsys):
    """Exit 2, one line: two inputs writing one output; a live run of the same shard holds the journal."""
    from pagerouter.batch.journal import Journal

    clash = tmp_path / "clash"
    clash.mkdir()
    (clash / "x.pdf").write_bytes((corpus / "in" / "a" / "x0.pdf").read_bytes())
    (clash / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    assert batch(str(clash), "-o", str(tmp_path / "o1"), "-q") == 2
    assert "would both write x.md/.json" in capsys.readouterr().err
    out = tmp_path / "o2"
    out.mkdir()
    held = Journal(out, (0, 1))
    try:
        assert batch(str(corpus / "in" / "a" / "x0.pdf"), "-o", str(out), "-q") == 2
        assert "another `pagerouter batch` run" in capsys.readouterr().err
    finally:
        held.close()


def test_local_reads_file_uris_like_paths(corpus, tmp_path):
    """`--local` (no Ray) reads a filesystem URI input through pyarrow (`file://` here: its local
    filesystem) and writes what the same folder given as a path writes; a rerun skips the URI's
    done files, and a missing URI fails in the words a missing path fails in."""
    cfg = str(corpus / "cfg.yaml")
    folder = corpus / "in" / "b"
    by_path, by_uri = tmp_path / "path", tmp_path / "uri"
    assert batch(str(folder), "-o", str(by_path), "--config", cfg, "-q") == 0
    assert batch(f"file://{folder}", "-o", str(by_uri), "--config", cfg, "-q", "--local") == 0
    names = sorted(str(p.relative_to(by_path)) for p in by_path.glob("x*.*"))
    assert len(names) == 2 * N_PER_DIR and names == sorted(str(p.relative_to(by_uri)) for p in by_uri.glob("x*.*"))
    for name in names:
        if name.endswith(".md"):
            assert (by_uri / name).read_text() == (by_path / name).read_text(), name
        else:  # the same document, but for timings
            got, want = (strip_timings(json.loads((d / name).read_text())) for d in (by_uri, by_path))
            assert got == want and got["source"] == name.replace(".json", ".pdf"), name
    recs = records(by_uri)
    assert {r["input"] for r in recs} == {f"file://{folder}/x{i}.pdf" for i in range(N_PER_DIR)}
    assert all(r["status"] == "done" for r in recs)

    assert batch(f"file://{folder}", "-o", str(by_uri), "--config", cfg, "-q") == 0  # a rerun: nothing converted
    assert len(records(by_uri)) == N_PER_DIR
    summary = json.loads((by_uri / "pagerouter-batch.summary.json").read_text())
    assert summary["converted_this_run"] == 0 and summary["skipped"] == N_PER_DIR

    gone = tmp_path / "gone"
    assert batch(f"file://{tmp_path}/gone.pdf", "-o", str(gone), "--config", cfg, "-q") == 1
    assert batch(str(tmp_path / "gone.pdf"), "-o", str(gone / "p"), "--config", cfg, "-q") == 1
    (by_uri_err,), (by_path_err,) = records(gone), records(gone / "p")
    assert by_uri_err["error"] == f"file://{tmp_path}/gone.pdf: no such file"
    assert by_path_err["error"] == f"{tmp_path}/gone.pdf: no such file"


def test_local_jobs_share_the_cores_between_their_model_sessions(monkeypatch):
    """`--local --jobs N`: each job's converter gets cores // N onnxruntime threads per model
    session (at least 1), not a thread per core each; one job keeps onnxruntime's own, and an
    explicit `ocr.onnx_threads` stays."""
    from pagerouter.cli.batch import _job_share
    from pagerouter.config import PagerouterConfig

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    cfg = PagerouterConfig()
    assert _job_share(cfg, 2).ocr.onnx_threads == 4
    assert _job_share(cfg, 3).ocr.onnx_threads == 2
    assert _job_share(cfg, 16).ocr.onnx_threads == 1
    assert _job_share(cfg, 1) is cfg and cfg.ocr.onnx_threads == 0
    assert _job_share(PagerouterConfig.model_validate({"ocr": {"onnx_threads": 6}}), 2).ocr.onnx_threads == 6
