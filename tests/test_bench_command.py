"""`pagerouter bench` end to end on a tiny generated corpus (one born-digital page and one page of
each hard kind: a lying hidden layer, a scan without a layer, glyph-id garbage), with the real
router, PyMuPDF's text layer and bare RapidOCR; pymupdf4llm is made to fail its import."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
from PIL import Image

from pagerouter.bench.metrics import _proc_stats, cer_counts, edit_distance, normalise, process_tree_cpu
from pagerouter.cli.main import main


def _levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[:], i
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
    return row[-1]


def test_edit_distance_matches_the_textbook_recurrence():
    rng = random.Random(3)
    for _ in range(200):
        a = "".join(rng.choice("abé x") for _ in range(rng.randint(0, 12)))
        b = "".join(rng.choice("abé x") for _ in range(rng.randint(0, 12)))
        assert edit_distance(a, b) == _levenshtein(a, b), (a, b)
    assert edit_distance("kitten", "sitting") == 3


def test_cer_normalisation_ignores_layout_and_markup_not_words():
    assert normalise("# Title\n\nOne  **two**\nthree | four") == "Title One two three four"
    assert cer_counts("The basin flooded.", "## The basin\n\nflooded.") == (0, 18)
    assert cer_counts("The basin flooded.", "The basln flooded") == (2, 18)  # case, letters, punctuation count


BURN = ("import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass\n"
        "sys.stdout.write('x'); sys.stdout.flush(); time.sleep(30)")


def test_cpu_of_a_grandchild_counts_while_it_lives_and_after_it_is_reaped():
    # the router's MuPDF workers are grandchildren (forked by a fork server): RUSAGE_SELF and
    # RUSAGE_CHILDREN alone would miss them
    before = process_tree_cpu()
    shell = subprocess.Popen(["sh", "-c", f"{sys.executable} -c \"$0\"; true", BURN], stdout=subprocess.PIPE)
    try:
        assert shell.stdout.read(1) == b"x"  # the grandchild burnt 0.4 s and sleeps, alive
        live = process_tree_cpu() - before
        assert live >= 0.35
    finally:
        for pid, (ppid, _) in _proc_stats().items():
            if ppid == shell.pid:  # the grandchild this test started
                os.kill(pid, signal.SIGKILL)
        shell.wait()
    assert process_tree_cpu() - before >= live - 0.02  # reaped: moved into RUSAGE_CHILDREN, not lost


def test_descendants_walked_down_the_tree_are_the_scans_even_forked_by_another_thread():
    """`descendants_cpu` walks down from this process's threads' children files (a scan of every
    process cost 4-6 ms a reading on a Ray node): a grandchild that a worker thread started, as
    an isolation pool's fork server is, counts as the scan of every process counts it."""
    import threading

    from pagerouter.bench.metrics import _descendants_cpu_by_scan, descendants_cpu

    started, measured = [], threading.Event()

    def fork_and_live_on():  # the child is this thread's (its children file), not the main thread's
        started.append(subprocess.Popen(["sh", "-c", f"{sys.executable} -c \"$0\"; true", BURN],
                                        stdout=subprocess.PIPE))
        measured.wait(60)

    t = threading.Thread(target=fork_and_live_on)
    t.start()
    while not started:
        time.sleep(0.01)
    shell = started[0]
    try:
        assert shell.stdout.read(1) == b"x"
        walked, scanned = descendants_cpu(), _descendants_cpu_by_scan()
        assert walked >= 0.35 and abs(walked - scanned) <= 0.03, (walked, scanned)
    finally:
        measured.set()
        t.join()
        for pid, (ppid, _) in _proc_stats().items():
            if ppid == shell.pid:
                os.kill(pid, signal.SIGKILL)
        shell.wait()


def test_unknown_system_is_one_line_usage_error(tmp_path, capsys):
    assert main(["bench", "-o", str(tmp_path / "o"), "--systems", "router,nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown nope" in err[0] and "Traceback" not in err[0]


@pytest.mark.slow
def test_bench_on_tiny_generated_corpus(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pymupdf4llm", None)  # a fake failing import: "not installed"
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("bench:\n  cpu_core_hour_usd: 0.5\n  gpu_hour_usd: 3.0\n")
    out = tmp_path / "bench"
    code = main(["bench", "-o", str(out), "--generated-pages", "4", "--born-digital-share", "0.25", "--short-pages",
                 "--systems", "router,text_layer,rapidocr,pymupdf4llm", "--config", str(cfg)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads((out / "report.json").read_text())
    corpus = report["corpora"][0]
    assert corpus["kinds"] == {"born_digital": 1, "lying_layer": 1, "scan": 1, "glyph_garbage": 1}
    systems = report["systems"]

    # the missing optional system is skipped with its reason, the others ran
    assert systems["pymupdf4llm"] == {"skipped": systems["pymupdf4llm"]["skipped"]}
    assert "not installed" in systems["pymupdf4llm"]["skipped"]
    assert "pymupdf4llm: skipped: pymupdf4llm is not installed" in captured.err
    router, text, ocr = (systems[n]["generated"] for n in ("router", "text_layer", "rapidocr"))

    # text layer only trusts the lying layers; the router reads them; both read born-digital text
    assert text["cer_by_kind"]["lying_layer"] > 0.5
    assert text["cer_by_kind"]["glyph_garbage"] > 0.5
    assert text["cer_by_kind"]["scan"] == 1.0  # no layer: nothing read
    assert text["cer_by_kind"]["born_digital"] == 0.0
    for kind, cer in router["cer_by_kind"].items():
        assert cer < 0.1, (kind, cer)
    assert router["cer"] < 0.1 and text["cer"] > 0.4
    assert ocr["cer"] is not None  # measured (its value is RapidOCR's business, not asserted here)

    # the router's route mix is the corpus composition: one text-layer page, three OCR pages
    assert router["route_share"] == {"ocr": 0.75, "text_layer": 0.25}
    assert router["route_agreement"] == 1.0
    assert text["route_share"] == {"text_layer": 1.0} and ocr["route_share"] == {"ocr": 1.0}
    assert set(router["seconds_per_page_by_route"]) == {"ocr", "text_layer"}
    assert router["seconds_per_page_by_route"]["ocr"] > router["seconds_per_page_by_route"]["text_layer"]
    assert {"layout", "read"} <= set(router["stage_means_s"]["mean_s"])
    assert router["stage_means_s"]["pages"] == 3

    # cost is measured CPU seconds at the configured price (no GPU tier ran)
    for s in (router, text, ocr):
        assert s["pages"] == 4 and s["gpu_s"] == 0.0
        assert s["cost_per_million_usd"] == pytest.approx(s["cpu_s"] * 0.5 / 3600 / 4 * 1e6)
    assert router["cpu_s"] > 0.1 and ocr["cpu_s"] > 0.1  # OCR of three or four pages is real work
    assert ocr["latency_s"]["p50"] <= ocr["latency_s"]["p90"] <= ocr["latency_s"]["p99"]

    # the headline compares the router with OCR of every page
    assert "router vs OCR of every page (rapidocr) on generated" in captured.out
    assert "OCR route:" in captured.out and "on the same 3 pages" in captured.out
    md = (out / "report.md").read_text()
    assert "| router |" in md and "| rapidocr |" in md and "pymupdf4llm: pymupdf4llm is not installed" in md
    for name in ("throughput_vs_error.png", "latency.png", "route_mix.png"):
        with Image.open(out / "charts" / name) as im:
            im.load()
            assert im.width >= 400 and im.height >= 300
            lo, hi = im.convert("L").getextrema()
            assert hi - lo > 100  # drawn, not blank
        assert f"charts/{name}" in md


def test_bench_prices_do_not_change_the_batch_journal_hash():
    from pagerouter.cli.batch import config_hash
    from pagerouter.config import load_config

    plain = config_hash(load_config(), {})
    assert config_hash(load_config(overrides={"bench": {"cpu_core_hour_usd": 9.0}}), {}) == plain
    assert config_hash(load_config(overrides={"ocr": {"enabled": False}}), {}) != plain  # a real change still counts


def test_the_ocr_route_is_compared_with_the_baseline_on_the_same_pages():
    """Issue 23's second bar: the router's seconds per OCR'd page against the baseline's on
    those very pages (not its mean over every page), with both CERs on them."""
    from pagerouter.bench.runner import ocr_route_versus

    def page(file, n, route, s, edits, chars=100):
        return {"file": file, "page": n, "route": route, "seconds": s, "edits": edits, "ref_chars": chars}

    router = {"pages_detail": [page("a.pdf", 1, "text_layer", 0.001, 0), page("a.pdf", 2, "ocr", 1.0, 1),
                               page("b.pdf", 1, "mixed", 0.8, 0)]}
    base = {"pages_detail": [page("a.pdf", 1, "ocr", 3.0, 9), page("a.pdf", 2, "ocr", 2.0, 4),
                             page("b.pdf", 1, "ocr", 1.0, 2)]}
    o = ocr_route_versus(router, base)
    assert o["pages"] == 2
    assert o["router_s"] == pytest.approx(0.9) and o["baseline_s"] == pytest.approx(1.5)
    assert o["ratio"] == pytest.approx(0.6) and o["met"]
    assert o["router_cer"] == pytest.approx(1 / 200) and o["baseline_cer"] == pytest.approx(6 / 200)
    router["pages_detail"][1]["edits"] = 9  # now worse than the baseline on those pages: missed
    assert not ocr_route_versus(router, base)["met"]
    assert ocr_route_versus({"pages_detail": router["pages_detail"][:1]}, base) is None  # no OCR page
