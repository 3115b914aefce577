"""The one in-process Converter: pages in order, progress, streaming, errors, engines, layering.

Real engines (PyMuPDF, rapid-layout, RapidOCR) run here; nothing imports Ray.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.flow.engines import ENGINE_KINDS, EngineSet, build_engine
from pagerouter.intake.inputs import InputError
from pagerouter.ocr.text_stats import char_error_rate
from pagerouter.common.stages import Escalator, LayoutEngine, SmallReader

REPO = Path(__file__).resolve().parent.parent

SCANNED = ["Invoice number 4711", "Total due 99 EUR"]  # what conftest.mixed_pdf scanned


@pytest.fixture(scope="module")
def converter() -> Converter:
    return Converter()


@pytest.mark.slow
def test_pages_stream_in_order_with_progress_and_engines_used(converter, mixed_pdf):
    seen: list[tuple[int, int, int]] = []
    doc = converter.convert(mixed_pdf, progress=lambda page, done, total: seen.append((page.number, done, total)))
    assert [p.route for p in doc.pages] == ["text_layer", "ocr", "blank"]
    assert seen == [(1, 1, 3), (2, 2, 3), (3, 3, 3)]
    assert doc.source == "mixed.pdf" and doc.page_count == 3
    scanned = "\n".join(b.text for b in doc.pages[1].blocks)
    assert char_error_rate("\n".join(SCANNED), scanned) < 0.05, scanned
    # engines that actually read this document, and nothing else (no escalation ran)
    assert set(doc.engines) == {"pymupdf", "rapid_layout", "rapidocr"}
    # the same pages, one by one, from the streaming iterator
    streamed = list(converter.iter_pages(mixed_pdf))
    strip = lambda pages: [p.model_dump(exclude={"timings"}) for p in pages]  # noqa: E731
    assert strip(streamed) == strip(doc.pages)


def test_selection_bytes_password_and_bad_input(tmp_path, mixed_pdf):
    conv = Converter(PagerouterConfig.model_validate({"ocr": {"enabled": False}}))
    doc = conv.convert(mixed_pdf, pages="1,3")
    assert [p.number for p in doc.pages] == [1, 3] and doc.page_count == 3
    from_bytes = conv.convert(mixed_pdf.read_bytes(), name="upload.pdf", pages="1")
    assert from_bytes.source == "upload.pdf"
    assert from_bytes.pages[0].blocks == doc.pages[0].blocks
    with pytest.raises(InputError, match="page 7 requested"):
        conv.convert(mixed_pdf, pages="7")
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"nothing like a pdf")
    with pytest.raises(InputError, match=r"junk\.pdf: not a PDF"):
        conv.convert(junk)
    with pytest.raises(InputError, match="no such file"):
        conv.convert(tmp_path / "missing.pdf")
    locked = tmp_path / "locked.pdf"
    d = pymupdf.open()
    synth.add_text_page(d, ["Secret words on a locked page."])
    d.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="pw")
    d.close()
    with pytest.raises(InputError, match="password is needed"):
        conv.convert(locked)
    assert "Secret words" in conv.convert(locked, password="pw").pages[0].blocks[0].text


def test_ocr_page_without_ocr_is_flagged_never_empty_ok(mixed_pdf):
    doc = Converter(PagerouterConfig.model_validate({"ocr": {"enabled": False}})).convert(mixed_pdf, pages="2")
    (page,) = doc.pages
    assert page.route == "ocr" and page.status == "flagged" and "needs_ocr" in page.flags
    assert set(doc.engines) == {"pymupdf"}


def test_closing_the_stream_early_stops_the_conversion(tmp_path):
    d = pymupdf.open()
    for i in range(30):
        synth.add_text_page(d, [f"Page {i} says something long enough to be read as a paragraph of text."])
    d.save(tmp_path / "long.pdf")
    conv = Converter(PagerouterConfig.model_validate({"ocr": {"enabled": False}}))
    it = conv.iter_pages(tmp_path / "long.pdf")
    first = [next(it).number for _ in range(2)]
    it.close()
    assert first == [1, 2]


def test_engines_by_role_follow_config_and_are_built_once():
    cfg = PagerouterConfig().ocr
    assert set(ENGINE_KINDS) == {"layout", "small_reader", "escalation"}
    engines = EngineSet(cfg)
    layout = engines.get("layout")
    assert isinstance(layout, LayoutEngine) and engines.get("layout") is layout
    assert isinstance(engines.get("escalation"), Escalator)
    none_cfg = cfg.model_copy(deep=True)
    none_cfg.layout.kind = "none"
    assert build_engine("layout", none_cfg).name == "none"
    bad = cfg.model_copy(deep=True)
    object.__setattr__(bad.escalation, "kind", "nope")
    with pytest.raises(ValueError, match=r"ocr\.escalation\.kind 'nope' is not a known escalation engine"):
        build_engine("escalation", bad)
    assert isinstance(EngineSet(cfg, prebuilt={"small_reader": layout}).get("small_reader"), LayoutEngine)
    assert not isinstance(layout, SmallReader)


def test_core_package_imports_without_ray():
    """Every module of the core package imports without loading Ray (Ray lives in deployments/
    and graph/), and a born-digital `pagerouter convert` never imports Ray or an OCR model."""
    code = (
        "import importlib, pkgutil, sys, pagerouter\n"
        "mods = [m.name for m in pkgutil.walk_packages(pagerouter.__path__, 'pagerouter.')\n"
        "        if m.name.split('.')[1] not in pagerouter.SERVING_FOLDERS]  # installed, they sit inside\n"
        "for m in mods: importlib.import_module(m)\n"
        "print(json.dumps({'n': len(mods), 'ray': sorted(k for k in sys.modules if k == 'ray' or k.startswith('ray.'))}))\n"
    )
    out = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, cwd=REPO,
                         timeout=120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["n"] > 30 and got["ray"] == []


def test_cli_convert_of_a_born_digital_page_loads_no_ray_and_no_model(tmp_path):
    d = pymupdf.open()
    synth.add_text_page(d, ["A born-digital page read from its text layer alone."])
    d.save(tmp_path / "one.pdf")
    code = (
        "import sys\n"
        "from pagerouter.cli.main import main\n"
        f"rc = main(['convert', {str(tmp_path / 'one.pdf')!r}, '-q'])\n"
        "heavy = [m for m in ('ray', 'rapidocr', 'rapid_layout', 'rapid_table') if m in sys.modules]\n"
        "print('HEAVY', heavy, rc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert "A born-digital page read from its text layer alone." in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "HEAVY [] 0", out.stdout + out.stderr


def test_a_proven_hidden_ocr_layer_is_the_page_text_and_a_wrong_one_is_ocrd(tmp_path):
    """A scan whose invisible OCR layer is right keeps the layer (no OCR: exact text); one whose
    layer says something else is OCR'd."""
    lines = [
        "The committee reviewed the quarterly figures and agreed",
        "that the new routing policy reduced the cost of reading",
        "each page. Most documents in the archive were born digital,",
        "so their embedded text could be used directly. Scanned",
        "letters, however, needed optical character recognition.",
    ] * 2
    wrong = [" ".join(reversed(ln.split())) for ln in lines]
    d = pymupdf.open()
    synth.add_scanned_page(d, lines, hidden_text="\n".join(lines), noise=0.02, dpi=150)
    synth.add_scanned_page(d, lines, hidden_text="\n".join(wrong), noise=0.02, dpi=150)
    d.save(tmp_path / "hidden.pdf")
    doc = Converter(PagerouterConfig.model_validate({"ocr": {"escalation": {"enabled": False}}})).convert(
        tmp_path / "hidden.pdf"
    )
    right, bad = doc.pages
    assert right.route == "text_layer" and right.triage.hidden_layer, right.triage.reasons
    assert "sampled lines agree" in right.triage.reasons[0]
    text = "\n".join(b.text for b in right.blocks)
    assert char_error_rate("\n".join(lines), text) < 0.01, text
    assert bad.route == "ocr" and "disagrees with the picture" in bad.triage.reasons[0]
    assert char_error_rate("\n".join(lines), "\n".join(b.text for b in bad.blocks)) < 0.1
