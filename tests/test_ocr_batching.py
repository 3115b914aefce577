"""Batched reading (one recognition run over the text lines of several pages) reads exactly
what page-by-page reading reads, and a bad page in a batch fails only itself. Real RapidOCR
and rapid-layout on synthetic scans with known text; no Ray."""

from __future__ import annotations

import dataclasses

import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config.ocr import OcrConfig
from pagerouter.flow.engines import EngineSet, batch_call_isolated
from pagerouter.model import TriageDecision
from pagerouter.ocr.task import make_ocr_task
from pagerouter.ocr.text_stats import char_error_rate as cer

PAGES = [
    ["Alpha page of the batch test", "Invoice 2024-117: total due 1,250.00 EUR.", "Please quote AB-7731."],
    ["Bravo page reads its own words", "Scanned letter from the archive", "received on 12 March 2024."],
    ["Charlie closes the batch", "optical character recognition on the CPU", "in one batched run"],
]


def text_of(reading) -> str:
    return "\n".join(b.text for b in reading.blocks if b.text)


@pytest.fixture(scope="module")
def setup():
    cfg = OcrConfig()
    cfg.escalation.enabled = False
    engines = EngineSet(cfg)
    doc = pymupdf.open()
    expected = [synth.add_scanned_page(doc, lines, noise=0.02, seed=k, size=(420, 300)) for k, lines in enumerate(PAGES)]
    tasks = [make_ocr_task(doc[i], i + 1, f"p{i}.pdf", TriageDecision(route="ocr", script="Latin"), [], cfg)
             for i in range(len(PAGES))]
    layouts = engines.get("layout").detect_batch(tasks)
    return engines, tasks, layouts, expected


@pytest.mark.slow
def test_batched_reading_equals_page_by_page(setup):
    engines, tasks, layouts, expected = setup
    reader = engines.get("small_reader")
    one_by_one = [reader.read_batch([t], [lay])[0] for t, lay in zip(tasks, layouts)]
    calls = []
    rec = reader.engine._load_rec_model()
    inner = type(rec).__call__

    def counting(self, args):  # counts recogniser runs: the batch must be ONE run for all pages
        calls.append(len(args.img))
        return inner(self, args)

    type(rec).__call__ = counting
    try:
        batched = reader.read_batch(tasks, layouts)
    finally:
        type(rec).__call__ = inner
    assert len(calls) == 1 and calls[0] >= 3 * len(tasks), calls  # all pages' lines in one run
    for exp, single, both in zip(expected, one_by_one, batched):
        assert text_of(both) == text_of(single)
        assert cer(exp, text_of(both)) < 0.05, text_of(both)
        assert [b.bbox for b in both.blocks] == [b.bbox for b in single.blocks]
    # word order inside each page and page identity: page 2's words are not page 1's
    assert "Bravo" in text_of(batched[1]) and "Bravo" not in text_of(batched[0])


@pytest.mark.slow
def test_a_bad_page_in_a_batch_fails_alone(setup):
    """One batch call for the good case; when it raises, page by page, so the bad page's error
    goes to its own caller only and the good pages are read."""
    engines, tasks, layouts, expected = setup
    reader = engines.get("small_reader")
    broken = dataclasses.replace(tasks[1], image=None, number=9)  # its render is missing: reading it raises
    results = batch_call_isolated(reader.read_batch, [tasks[0], broken, tasks[2]], [layouts[0], layouts[1], layouts[2]])
    assert isinstance(results[1], Exception) and not isinstance(results[0], Exception)
    assert cer(expected[0], text_of(results[0])) < 0.05 and cer(expected[2], text_of(results[2])) < 0.05
