"""CPU escalation: Tesseract really runs, engines failing or empty never lose the page, and a
noisy scan comes out voted (engine `vote`, witnesses listed, route `escalation`)."""

from __future__ import annotations

import os
import shutil

import pymupdf
import pytest

from pagerouter import synth
from pagerouter.config.ocr import OcrConfig
from pagerouter.model import Block, TriageDecision
from pagerouter.ocr.task import make_ocr_task
from pagerouter.ocr.escalate import VoteEscalator
from pagerouter.ocr.lines import OcrLine
from pagerouter.ocr.text_stats import char_error_rate
from pagerouter.stages import Reading

HAS_TESSERACT = shutil.which("tesseract") is not None
# CI installs tesseract-ocr: there a missing binary must fail these tests, not skip them.
SKIP_NO_TESSERACT = not HAS_TESSERACT and not os.environ.get("CI")
LINES = [
    "Quarterly report on routing",
    "The committee reviewed the quarterly figures and agreed that",
    "the new routing policy reduced the cost of reading each page.",
    "Most documents in the archive were born digital, so their",
    "embedded text could be used directly. Invoice 2024-117.",
]
GOOD = " ".join(LINES)


def _task(cfg: OcrConfig, **scan_kw):
    doc = pymupdf.open()
    ref = synth.add_scanned_page(doc, LINES, **scan_kw)
    return make_ocr_task(doc[0], 1, "scan.pdf", TriageDecision(route="ocr"), [], cfg), ref


@pytest.fixture(scope="module")
def cfg():
    return OcrConfig()


@pytest.fixture(scope="module")
def clean_task(cfg):
    return _task(cfg, noise=0.03, dpi=150)


def _block(text, conf=0.6, bbox=(50.0, 60.0, 560.0, 160.0)):
    return Block(text=text, role="paragraph", bbox=bbox, page=1, engine="rapidocr", route="ocr", confidence=conf)


class FakeLineReader:
    """Stands in for the high-resolution RapidOCR: returns given text as one line per entry,
    stacked inside the page area the first reading's block covers."""

    name = "rapidocr"
    version = "fake"

    def __init__(self, texts):
        self.texts = texts

    def read_image_lines(self, image, script=None):
        h, w = image.shape[:2]
        y0 = h * 70 / 842
        step = h * 16 / 842
        return [OcrLine((w * 60 / 595, y0 + i * step, w * 500 / 595, y0 + i * step + step * 0.8), t, 0.97)
                for i, t in enumerate(self.texts)]


class FakeTesseract:
    """Stands in for Tesseract: raises, or returns nothing."""

    version = "fake"
    last_notes: list[str] = []

    def __init__(self, fail: bool):
        self.fail = fail

    def read_task_lines(self, task, rotation=0, script=None):
        if self.fail:
            raise RuntimeError("Tesseract process timeout")
        return [], 0.0


@pytest.mark.slow
@pytest.mark.skipif(SKIP_NO_TESSERACT, reason="tesseract-ocr not installed (outside CI)")
def test_tesseract_reads_a_rendered_scan(cfg, clean_task):
    from pagerouter.ocr.reader_tesseract import TesseractReader

    task, ref = clean_task
    reader = TesseractReader(cfg)
    lines, seconds = reader.read_task_lines(task, 0, "Latin")
    text = "\n".join(ln.text for ln in lines)
    assert char_error_rate(ref, text) <= 0.03, text
    assert all(0 <= ln.bbox[0] < ln.bbox[2] <= task.width and 0 <= ln.bbox[1] < ln.bbox[3] <= task.height for ln in lines)
    assert lines[0].extra["words"] and "300 DPI" in reader.last_notes[-1]
    # the per-script table is filtered to installed packs, and what is missing is said
    c2 = cfg.model_copy(deep=True)
    c2.scripts.table["Latin"].tesseract_langs = "eng+fra"
    lang, note = TesseractReader(c2).languages_for("Latin")
    if "fra" not in reader.langs:
        assert lang == "eng" and "not installed: fra" in note


@pytest.mark.slow
@pytest.mark.skipif(SKIP_NO_TESSERACT, reason="tesseract-ocr not installed (outside CI)")
def test_tesseract_cuts_tall_renders_into_strips(cfg, clean_task):
    from pagerouter.ocr.reader_tesseract import TesseractReader

    task, ref = clean_task
    c2 = cfg.model_copy(deep=True)
    c2.escalation.tesseract_max_side_px = 1500  # the 300-DPI A4 render is 3508 px tall
    reader = TesseractReader(c2)
    lines, _ = reader.read_task_lines(task, 0, "Latin")
    assert any("strips" in n for n in reader.last_notes)
    assert char_error_rate(ref, "\n".join(ln.text for ln in lines)) <= 0.05


def test_failing_and_empty_engines_do_not_lose_the_page(cfg, clean_task):
    task, _ = clean_task
    loop = " ".join(["the value of the account"] * 30)
    first = Reading(blocks=[_block(loop)], engine="rapidocr")
    for fake in (FakeTesseract(fail=True), FakeTesseract(fail=False)):
        esc = VoteEscalator(cfg, rapid=FakeLineReader(LINES), tesseract=fake)
        out = esc.escalate(task, first)
        # the looping first reading is dropped by its own checks; tesseract failed or read nothing;
        # the one usable witness is non-empty, so the page comes out of it
        assert [b.text for b in out.blocks] == [GOOD]
        b = out.blocks[0]
        assert (b.engine, b.route, b.witnesses) == ("rapidocr_hires", "escalation", ["rapidocr_hires"])
        assert b.bbox == first.blocks[0].bbox  # per-block geometry kept
        reasons = {c.name: c.reason for c in out.checks}
        assert "dropped" in reasons["witness_rapidocr"] and "repetition" in reasons["witness_rapidocr"]
        assert ("timeout" in reasons["witness_tesseract"]) if fake.fail else ("empty_output" in reasons["witness_tesseract"])
        assert not out.flagged


def test_two_agreeing_witnesses_vote(cfg, clean_task):
    task, _ = clean_task
    first = Reading(blocks=[_block(GOOD.replace("committee", "cornmittee"), conf=0.7)], engine="rapidocr")
    esc = VoteEscalator(cfg, rapid=FakeLineReader(LINES), tesseract=FakeTesseract(fail=True))
    out = esc.escalate(task, first)
    b = out.blocks[0]
    # two witnesses: ties go to the first in engine order (rapidocr_hires), agreement < 1
    assert b.engine == "vote" and b.witnesses == ["rapidocr_hires", "rapidocr"] and b.text == GOOD
    assert 0.9 < b.confidence < 1.0


def test_nothing_usable_keeps_the_first_reading_flagged(cfg, clean_task):
    task, _ = clean_task
    first = Reading(blocks=[_block(" ".join(["again and again"] * 40))], engine="rapidocr")
    out = VoteEscalator(cfg, rapid=FakeLineReader([]), tesseract=FakeTesseract(fail=False)).escalate(task, first)
    assert [b.text for b in out.blocks] == [first.blocks[0].text]
    esc_check = next(c for c in out.checks if c.name == "escalation")
    assert not esc_check.passed and "fell back to rapidocr" in esc_check.reason
    assert out.flagged


def test_missing_tesseract_is_said(cfg, clean_task):
    task, _ = clean_task
    c2 = cfg.model_copy(deep=True)
    c2.escalation.tesseract_cmd = "/nonexistent/tesseract"
    first = Reading(blocks=[_block(GOOD, conf=0.5)], engine="rapidocr")
    out = VoteEscalator(c2, rapid=FakeLineReader(LINES)).escalate(task, first)
    assert "tesseract" in next(c.reason for c in out.checks if c.name == "escalation").split("unavailable:")[1]
    assert out.blocks[0].text == GOOD


@pytest.mark.slow
@pytest.mark.skipif(SKIP_NO_TESSERACT, reason="tesseract-ocr not installed (outside CI)")
def test_noisy_scan_end_to_end_is_voted(cfg):
    """Real engines: first reading by the small reader, then RapidOCR hi-res + Tesseract vote.
    CER bound: <= 0.05 on a blurred, noisy 150-DPI scan of 8 pt text."""
    from pagerouter.engines import EngineSet
    from pagerouter.ocr.checks import check_reading

    task, ref = _task(cfg, noise=0.1, blur=True, dpi=150, fontsize=8)
    engines = EngineSet(cfg)
    layout = engines.get("layout").detect_batch([task])[0]
    first = engines.get("small_reader").read_batch([task], [layout])[0]
    first.checks += check_reading(task, first, cfg.checks)
    out = engines.get("escalation").escalate(task, first)
    text_blocks = [b for b in out.blocks if b.role != "figure"]
    assert text_blocks and all(b.route == "escalation" for b in text_blocks)
    assert all(b.engine == "vote" for b in text_blocks)
    assert all(set(b.witnesses) >= {"tesseract", "rapidocr"} for b in text_blocks)
    after = "\n".join(b.text for b in text_blocks)
    assert char_error_rate(ref, after) <= 0.05, after
    assert "escalation_tesseract" in out.timings
