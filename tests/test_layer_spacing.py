"""Issue 34: a page OCR'd although it carries a hidden OCR layer (the cost rule found OCR the
cheaper way, or the proof refused the layer) takes the layer's word spacing where the reading
holds the layer's characters (`ocr/layer_spacing.py`). On the code before it, RapidOCR's "a55"
for the layer's "a 55" stayed in an `ok` page (`lost_cases` layer_cost-short_lines-2; the
sweep in test_nothing_lost runs that page end to end)."""

from __future__ import annotations

import numpy as np
import pymupdf
import pytest

from pagerouter.common.stages import OcrTask, Reading
from pagerouter.model import Block, HiddenText, TriageDecision
from pagerouter.ocr.layer_spacing import apply_layer_spacing, respace

HIDDEN_SHARE = 0.5  # triage.max_invisible_text_share's default


@pytest.mark.parametrize("reading, layer, want", [
    ("Pay a55 fee", "Pay a 55 fee", "Pay a 55 fee"),  # a narrow space before a number, lost by OCR
    ("the man ager said", "the manager said", "the manager said"),  # a space OCR put inside a word
    ("first line ends\nsecond begins", "first line ends second begins", "first line ends\nsecond begins"),
])
def test_the_layer_s_spacing_where_the_characters_agree(reading, layer, want):
    assert respace(reading, layer)[0] == want


def test_characters_the_layer_does_not_hold_stay_as_read():
    # a layer of an earlier revision: its words never enter the reading, only spaces move
    assert respace("The tenant may sublet the house", "The tenant may not sublet the house")[0] == \
        "The tenant may sublet the house"
    # a wrong digit in the reading is the reading's to keep (its checks judge it), respaced or not
    got, _ = respace("Pay a56 fee", "Pay a 55 fee")
    assert got.replace(" ", "") == "Paya56fee"
    assert respace("totally different", "nothing alike") == ("totally different", 0)


def _task(page_bytes: bytes, share: float, hidden: list[HiddenText] | None = None) -> OcrTask:
    decision = TriageDecision(route="ocr", scores={"invisible_text_share": share}, reasons=["test"],
                              hidden_text=hidden or [])
    return OcrTask(source="t.pdf", number=1, width=612, height=792, decision=decision,
                   image=np.zeros((8, 8, 3), np.uint8), scale=1.0, page_bytes=page_bytes)


def _page(rotation: int = 0) -> tuple[bytes, tuple[float, float, float, float]]:
    """A page whose hidden layer reads "Pay a 55 fee to the clerk", and that line's displayed box."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Pay a 55 fee to the clerk", fontsize=11, render_mode=3)
    page.set_rotation(rotation)
    box = pymupdf.Rect(68, 86, 240, 104) * page.rotation_matrix
    return doc.tobytes(), tuple(box)


def _reading(text: str, box) -> Reading:
    return Reading(blocks=[Block(text=text, role="paragraph", bbox=box, page=1, engine="rapidocr", route="ocr",
                                 confidence=0.9)])


@pytest.mark.parametrize("rotation", [0, 90])
def test_an_ocr_block_takes_the_hidden_layer_s_spacing(rotation):
    pdf, box = _page(rotation)
    reading = _reading("Pay a55 fee to the clerk", box)
    check = apply_layer_spacing(_task(pdf, 1.0), reading, HIDDEN_SHARE)
    assert reading.blocks[0].text == "Pay a 55 fee to the clerk"
    assert check is not None and check.passed and check.name == "layer_spacing" and check.score == 1


def test_a_page_without_a_hidden_layer_and_text_not_shown_are_not_used():
    pdf, box = _page()
    reading = _reading("Pay a55 fee to the clerk", box)
    # the layer is visible (a damaged visible layer sent to OCR): its spacing is not evidence
    assert apply_layer_spacing(_task(pdf, 0.0), reading, HIDDEN_SHARE) is None
    # text triage found not shown on the page is never used, not even for its spaces
    hidden = [HiddenText(bbox=box, text="Pay a 55 fee to the clerk", reason="white on white")]
    assert apply_layer_spacing(_task(pdf, 1.0, hidden), reading, HIDDEN_SHARE) is None
    assert reading.blocks[0].text == "Pay a55 fee to the clerk"


def test_a_block_elsewhere_on_the_page_is_not_respaced_from_it():
    pdf, _ = _page()
    reading = _reading("Pay a55 fee to the clerk", (72, 400, 240, 420))
    assert apply_layer_spacing(_task(pdf, 1.0), reading, HIDDEN_SHARE) is None
    assert reading.blocks[0].text == "Pay a55 fee to the clerk"
