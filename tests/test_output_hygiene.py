"""No control characters leave pagerouter on any route (pagerouter.render.output (output hygiene), applied where
every page leaves pipeline.convert_pages), and a page that keeps a rejected reading says so in
its Markdown. The text-layer page is real (PyMuPDF); the VLM's answers are scripted (FAKE
engine: random-weight models read nothing), RapidOCR and layout run for real."""

from __future__ import annotations

import json

import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.flow.engines import EngineSet
from pagerouter.render.output import to_json, to_markdown
from pagerouter.render.output import clean_text, has_control_chars
from tests.vlm_fakes import PromptRoutedFakeVlmEngine, ScriptedOutput


def strings(value):
    """Every string in a JSON value (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def assert_clean(doc) -> str:
    md = to_markdown(doc)
    assert not has_control_chars(md), repr(md)
    dirty = [s for s in strings(json.loads(to_json(doc))) if has_control_chars(s)]
    assert not dirty, dirty[:3]
    return md


def test_clean_text_keeps_newline_and_tab_only():
    assert clean_text("a\x14b\x07c\td\r\ne\rf\x00g\x9b\ufffd\ufffd\ufffdh") == "abc\td\ne\nfg\ufffdh"
    assert clean_text("plain text") == "plain text"


def test_a_lone_surrogate_is_dropped_so_the_json_encodes():
    """Found by the fuzz run: a damaged font gave page text a lone surrogate and the document's
    JSON could not be encoded as UTF-8."""
    from pagerouter.model import Block, Page
    from pagerouter.render.output import clean_model

    page = Page(number=1, status="ok", route="text_layer",
                blocks=[Block(role="paragraph", text="broken \udc86 text", bbox=(0, 0, 10, 10), page=1,
                              engine="pymupdf", route="text_layer", confidence=1.0)])
    clean_model(page)
    assert page.blocks[0].text == "broken  text"
    page.model_dump_json().encode("utf-8")  # raised UnicodeEncodeError before


@pytest.mark.parametrize("bad", [chr(i) for i in [*range(0x20), *range(0x7F, 0xA0)] if chr(i) not in "\n\t"]
                         + ["\ufffd\ufffd", "\ud800"])
def test_every_character_clean_text_changes_is_caught_deep_in_a_page(bad):
    """clean_model skips pages whose JSON shows nothing to clean; that shortcut must never miss a
    character the walk would change, in a nested block, a dict value or a dict key."""
    from pagerouter.model import Block, Page
    from pagerouter.render.output import clean_model

    block = Block(role="paragraph", text=f"a{bad}b", bbox=(0, 0, 10, 10), page=1, engine="pymupdf",
                  route="text_layer", confidence=1.0)
    page = Page(number=1, status="ok", route="text_layer", blocks=[block], timings={f"k{bad}": 1.0})
    clean_model(page)
    assert page.blocks[0].text == clean_text(f"a{bad}b") != f"a{bad}b"
    assert list(page.timings) == [clean_text(f"k{bad}")]


def test_text_layer_page_loses_its_control_characters(tmp_path):
    path = tmp_path / "ctrl\x07name.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    for i, line in enumerate(["The quarterly report\x14 shows that revenue rose by twelve percent.",
                              "Costs fell in every region\x07 except the north, where they held."]):
        page.insert_text((72, 72 + 16 * i), line, fontsize=11)
    doc.save(path)
    out = Converter(PagerouterConfig()).convert(path)
    assert out.pages[0].route == "text_layer" and out.source == "ctrlname.pdf"
    md = assert_clean(out)
    assert "The quarterly report shows that revenue rose" in md


@pytest.mark.slow
def test_vlm_fallback_keeps_a_rejected_reading_marked_and_clean(tmp_path):
    """The region VLM's only answer is garbage with control characters, cut off at the limit: the
    page keeps it (never lost), flagged, marked in the Markdown, without the control characters."""
    path = tmp_path / "scan.pdf"
    doc = pymupdf.open()
    synth.add_scanned_page(doc, ["Invoice number 4711", "Total due 99 EUR"], size=(320, 220), fontsize=14)
    doc.save(path)
    garbage = ScriptedOutput("Invoice\x14 47\x0711 kkkk\ufffd\ufffd\ufffd\ufffd Total\x1b due", "length",
                             completion_tokens=4096)
    fake = PromptRoutedFakeVlmEngine({"OCR:": [garbage]})
    cfg = PagerouterConfig.model_validate({"ocr": {"small_reader": {"kind": "vlm"}, "escalation": {"enabled": False}}})
    conv = Converter(cfg)
    from pagerouter.vlm.reader_region import VlmRegionReader

    conv.engines = EngineSet(cfg.ocr, prebuilt={"small_reader": VlmRegionReader(cfg.ocr, engine=fake)})
    out = conv.convert(path)
    page = out.pages[0]
    assert page.status == "flagged" and "vlm_regions" in page.flags
    assert all(not a.accepted for a in page.attempts)
    md = assert_clean(out)
    assert "<!-- page 1 flagged vlm_regions" in md and "failed its checks" in md
    assert "Invoice 4711" in md and "\ufffd\ufffd" not in md
