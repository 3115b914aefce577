"""The CPU OCR path end to end with real engines (RapidOCR, rapid-layout, rapid-table,
Tesseract for Cyrillic) on synthetic scans with known text."""

from __future__ import annotations

import re

import numpy as np
import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.config.ocr import OcrConfig, RenderTargetConfig
from pagerouter.convert.converter import Converter
from pagerouter.flow.engines import build_engine
from pagerouter.model import Block, TriageDecision
from pagerouter.ocr.raster import render_page, render_task
from pagerouter.ocr.task import make_ocr_task
from pagerouter.ocr.text_stats import char_error_rate as cer  # (reference, hypothesis), whitespace collapsed
from pagerouter.common.stages import LayoutEngine, SmallReader

LETTER = [
    "Scanned letter from the archive",
    "Dear reader, this page is a picture of text.",
    "It has no text layer at all, so it must be read",
    "by optical character recognition on the CPU.",
    "Invoice 2024-117: total due 1,250.00 EUR.",
]
GERMAN = [
    "Sehr geehrte Damen und Herren,",
    "die Größe der Übersendung beträgt fünf Kilogramm.",
    "Wir bitten um Prüfung und schnelle Rückmeldung.",
    "Mit freundlichen Grüßen aus München",
]
RUSSIAN = [
    "Уважаемые коллеги,",
    "эта страница является изображением текста.",
    "Просим проверить документ и ответить.",
    "С уважением, редакция журнала",
]


def page_text(reading) -> str:
    return "\n".join(b.text for b in reading.blocks if b.text)


@pytest.fixture(scope="module")
def cfg() -> OcrConfig:
    c = OcrConfig()
    c.escalation.enabled = False  # these tests measure the small reader path itself
    return c


@pytest.fixture(scope="module")
def ocr(cfg) -> Converter:
    return Converter(PagerouterConfig(ocr=cfg))


def run_page(ocr, cfg, doc, i=0, decision=None, text_blocks=()):
    task = make_ocr_task(doc[i], i + 1, "fixture.pdf", decision or TriageDecision(route="ocr"), list(text_blocks), cfg)
    return task, ocr.read_task(task)


def test_cer_helper():
    assert cer("abc", "abc") == 0
    assert cer("abcd", "abed") == 0.25
    assert cer("a  b\nc", "a b c") == 0
    assert cer("", "") == 0 and cer("", "x") == 1


def test_factories_build_protocol_engines(ocr):
    assert isinstance(ocr.engines.get("layout"), LayoutEngine)
    reader = ocr.engines.get("small_reader")
    assert isinstance(reader, SmallReader)
    assert reader.name == "rapidocr" and "PP-OCRv6" in reader.version


def test_unknown_kind_is_a_clear_error(cfg):
    bad = cfg.model_copy(deep=True)
    object.__setattr__(bad.layout, "kind", "nope")
    with pytest.raises(ValueError, match="ocr.layout.kind"):
        build_engine("layout", bad)
    bad = cfg.model_copy(deep=True)
    object.__setattr__(bad.small_reader, "kind", "nope")
    with pytest.raises(ValueError, match="small_reader.kind"):
        build_engine("small_reader", bad)


@pytest.mark.slow
def test_noisy_skewed_scan_reads_within_cer(ocr, cfg):
    doc = pymupdf.open()
    expected = synth.add_scanned_page(doc, LETTER, noise=0.06, blur=True, skew_deg=0.8, seed=3)
    task, reading = run_page(ocr, cfg, doc)
    got = page_text(reading)
    assert cer(expected, got) < 0.05, got
    b = reading.blocks[0]
    assert b.engine == "rapidocr" and b.route == "ocr" and b.engine_version
    assert 0.5 < b.confidence <= 1.0
    # bbox in page points, inside the page, near where the text was drawn (x=60 pt, y from 72 pt)
    x0, y0, x1, y1 = b.bbox
    assert 40 < x0 < 80 and 50 < y0 < 80 and x1 < task.width and y1 < task.height
    assert reading.rotation == 0


@pytest.mark.slow
@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_rotated_scan_is_detected_recorded_and_read_upright(ocr, cfg, rotate):
    doc = pymupdf.open()
    expected = synth.add_scanned_page(doc, LETTER, noise=0.03, rotate=rotate, seed=rotate)
    task, reading = run_page(ocr, cfg, doc)
    # the page image was turned `rotate` clockwise: it takes (360 - rotate) clockwise to undo
    assert reading.rotation == (360 - rotate) % 360
    orient = [c for c in reading.checks if c.name == "orientation"]
    assert orient and "rotate" in orient[0].reason
    assert cer(expected, page_text(reading)) < 0.05
    # blocks are in the upright frame: a portrait page again, text near its top-left
    x0, y0, _, _ = reading.blocks[0].bbox
    assert x0 < 120 and y0 < 120


def test_blank_scan_gives_empty_output(ocr, cfg):
    doc = pymupdf.open()
    synth.add_scanned_page(doc, [], noise=0.02)
    _, reading = run_page(ocr, cfg, doc)
    assert reading.blocks == []
    assert any(c.name == "blank" for c in reading.checks)


@pytest.mark.slow
@pytest.mark.parametrize("ruled", [True, False])
def test_scanned_table_becomes_markdown_table_with_cells(ocr, cfg, ruled):
    rows = [["Item", "Quantity", "Price"], ["Apples", "12", "3.40"], ["Pears", "7", "2.10"], ["Plums", "30", "5.75"]]
    doc = pymupdf.open()
    synth.add_table_page(doc, rows, title="Order summary", scanned=True, ruled=ruled)
    _, reading = run_page(ocr, cfg, doc)
    tables = [b for b in reading.blocks if b.role == "table"]
    assert len(tables) == 1, [(b.role, b.text) for b in reading.blocks]
    t = tables[0]
    assert t.cells is not None and len(t.cells) == 4 and all(len(r) == 3 for r in t.cells)
    flat = [c for r in t.cells for c in r]
    assert sum(cer(a, b) < 0.2 for a, b in zip([c for r in rows for c in r], flat)) >= 11
    assert t.text.startswith("| ") and "| --- |" in t.text
    assert not any(b.role == "paragraph" and "Apples" in b.text for b in reading.blocks)


@pytest.mark.slow
def test_two_columns_read_column_by_column(ocr, cfg):
    paras = [f"{w} paragraph talks about routing pages to cheap readers and keeping the cost of reading low."
             for w in ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet",
                       "Kilo", "Lima", "Mike", "November")]
    doc = pymupdf.open()
    synth.add_text_page(doc, paras, title="Two column report", columns=2, header="pagerouter sample", footer="7")
    _, reading = run_page(ocr, cfg, doc)  # read as an image: the text layer is not used
    text = page_text(reading)
    firsts = [text.find(w + " paragraph") for w in ("Alpha", "Bravo", "Kilo", "Lima", "November")]
    assert all(p >= 0 for p in firsts), text
    assert firsts == sorted(firsts)
    # page furniture stays at the ends (its role is the layout model's call)
    assert reading.blocks[0].text == "pagerouter sample" and reading.blocks[-1].text == "7"
    assert [b.order for b in reading.blocks] == list(range(len(reading.blocks)))


@pytest.mark.slow
def test_mixed_page_ocrs_only_the_picture_and_merges_in_order(ocr, cfg):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), "Text layer paragraph above the picture.", fontsize=12)
    pic = pymupdf.Rect(60, 150, 540, 330)
    png = synth.text_image(["Picture text inside the image", "Second line of the picture"], size=(480, 180), dpi=200)
    page.insert_image(pic, stream=png)
    page.insert_text((60, 420), "Text layer paragraph below the picture.", fontsize=12)
    mk = lambda text, y: Block(text=text, role="paragraph", bbox=(60, y - 12, 300, y + 3), page=1, engine="pymupdf",
                               route="text_layer", confidence=1.0)
    text_blocks = [mk("Text layer paragraph above the picture.", 80), mk("Text layer paragraph below the picture.", 420)]
    decision = TriageDecision(route="mixed", ocr_regions=[tuple(pic)], script="Latin")
    _, reading = run_page(ocr, cfg, doc, decision=decision, text_blocks=text_blocks)
    routes = [b.route for b in reading.blocks]
    assert routes[0] == "text_layer" and routes[-1] == "text_layer" and "ocr" in routes
    ocr_blocks = [b for b in reading.blocks if b.route == "ocr"]
    for b in ocr_blocks:  # OCR only inside the picture
        assert pic.x0 - 5 <= b.bbox[0] and b.bbox[2] <= pic.x1 + 5 and pic.y0 - 5 <= b.bbox[1] and b.bbox[3] <= pic.y1 + 5
    got = " ".join(b.text for b in ocr_blocks)
    assert cer("Picture text inside the image Second line of the picture", got) < 0.08
    assert "Text layer" not in got  # the text layer was not read twice


@pytest.mark.slow
def test_german_scan_keeps_umlauts_and_latin_script(ocr, cfg):
    doc = pymupdf.open()
    expected = synth.add_scanned_page(doc, GERMAN, noise=0.03)
    _, reading = run_page(ocr, cfg, doc)
    got = page_text(reading)
    assert cer(expected, got) < 0.05, got
    assert "Größe" in got and "Grüßen" in got
    script = [c for c in reading.checks if c.name == "script"][0]
    assert "Latin" in script.reason


@pytest.mark.slow
def test_russian_scan_is_read_in_cyrillic(ocr, cfg):
    """The shipped RapidOCR model has no Cyrillic: OSD finds the script and Tesseract (rus)
    reads the page."""
    doc = pymupdf.open()
    expected = synth.add_scanned_page(doc, RUSSIAN, noise=0.02)
    _, reading = run_page(ocr, cfg, doc)
    got = page_text(reading)
    assert cer(expected, got) < 0.08, got
    assert sum("\u0400" <= ch <= "\u04ff" for ch in got) > 0.8 * sum(ch.isalpha() for ch in got)
    assert any(c.name == "script_osd" and "Cyrillic" in c.reason for c in reading.checks)
    assert reading.blocks[0].engine == "tesseract"


@pytest.mark.slow
def test_known_cyrillic_text_layer_script_goes_straight_to_tesseract(ocr, cfg):
    doc = pymupdf.open()
    expected = synth.add_scanned_page(doc, RUSSIAN, noise=0.02)
    _, reading = run_page(ocr, cfg, doc, decision=TriageDecision(route="ocr", script="Cyrillic"))
    assert cer(expected, page_text(reading)) < 0.08
    assert not any(c.name == "script_osd" for c in reading.checks)


def test_latin_page_decoding_suppresses_cjk(ocr):
    """Masked CTC decoding: a frame whose best token is Han yields the best Latin token."""
    dec = ocr.engines.get("small_reader")._decoder
    chars = list(dec.character)
    han, a, b = chars.index("中"), chars.index("a"), chars.index("b")
    preds = np.zeros((1, 6, len(chars)), dtype=np.float32)
    for t, (best, second) in enumerate([(a, b), (0, 0), (han, b), (han, b), (0, 0), (a, b)]):
        preds[0, t, best] = 0.7
        preds[0, t, second] += 0.2
    from pagerouter.ocr.script_options import allowed_mask

    dec.mask = np.array(allowed_mask(tuple(chars), ("Latin", "Common")))
    dec.suppressed = 0
    try:
        (text, score), = dec(preds)[0]
    finally:
        dec.mask = None
    assert text == "aba" and "中" not in text
    assert score < 0.7  # the suppressed frame lowered the line's confidence
    assert dec.suppressed == 1
    unmasked, = dec(preds)[0]
    assert "中" in unmasked[0]  # without a page script nothing is suppressed


@pytest.mark.slow
def test_stray_cjk_on_a_latin_page_is_re_read_in_latin_and_recorded(ocr, cfg):
    """No script known beforehand: the page reads as Latin, so the line where the model
    emitted a Han character is re-recognised restricted to Latin, and the reading says so."""
    doc = pymupdf.open()
    synth.add_scanned_page(doc, LETTER[:4] + ["Total due 中 1,250.00 EUR."], noise=0.02)
    _, reading = run_page(ocr, cfg, doc)
    got = page_text(reading)
    assert not any("\u3000" <= ch <= "\u9fff" for ch in got), got
    # that line is set in the CJK fallback font (wide Latin spacing): compare without spaces
    assert "Totaldue1,250.00EUR." in got.replace(" ", "")
    assert cer(" ".join(LETTER[:4]), got[: len(" ".join(LETTER[:4]))]) < 0.05
    foreign = [c for c in reading.checks if c.name == "foreign_script_chars"]
    assert foreign and foreign[0].score >= 1
    assert reading.script == "Latin"
    # regression: the line re-read must not leave the engine in recognition-only mode
    doc2 = pymupdf.open()
    expected = synth.add_scanned_page(doc2, GERMAN, noise=0.02)
    _, after = run_page(ocr, cfg, doc2)
    assert cer(expected, page_text(after)) < 0.05


def test_make_ocr_task_packs_a_single_page_that_rerenders(cfg):
    doc = pymupdf.open()
    synth.add_blank_page(doc)
    synth.add_scanned_page(doc, ["Second page"], noise=0.0)
    task = make_ocr_task(doc[1], 2, "two.pdf", TriageDecision(route="ocr"), [], cfg)
    assert task.number == 2 and task.page_kind == "pdf"
    assert pymupdf.open(stream=task.page_bytes, filetype="pdf").page_count == 1
    assert abs(max(task.image.shape[:2]) - 842 * 170 / 72) <= 1  # the small reader's target: 170 DPI
    assert task.ink > 0
    img, zoom = render_task(task, RenderTargetConfig(dpi=72))
    assert img.shape[:2] == (842, 595) and zoom == 1.0


def test_render_targets_and_pixel_cap():
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    img, z = render_page(page, RenderTargetConfig(longest_side_px=1288))
    assert max(img.shape[:2]) == 1288 and img.dtype == np.uint8 and img.shape[2] == 3
    img, z = render_page(page, RenderTargetConfig(dpi=150))
    assert img.shape[:2] == (1650, 1275)
    poster = doc.new_page(width=14400, height=14400)  # 200 x 200 inches
    img, z = render_page(poster, RenderTargetConfig(dpi=300, max_pixels=4_000_000))
    assert img.shape[0] * img.shape[1] <= 4_000_000 and z < 300 / 72
    with pytest.raises(ValueError):
        RenderTargetConfig(dpi=72).zoom_for(0, 100)


def test_image_input_page_is_a_pdf_task(cfg):
    png = synth.text_image(["An image file page"], size=(300, 200), dpi=100)
    doc = pymupdf.open(stream=png)
    task = make_ocr_task(doc[0], 1, "scan.png", TriageDecision(route="ocr"), [], cfg)
    assert pymupdf.open(stream=task.page_bytes, filetype="pdf").page_count == 1
    assert re.fullmatch(r"pdf", task.page_kind)
