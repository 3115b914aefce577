"""A hidden-layer line the picture contradicts is replaced by its reading, and only when sound.

No model here: the proof's decisions on given readings (`_replaceable`), the text dict edit
(`replace_lines`) and the provenance of the blocks holding a replaced line (`mark_proof_reads`).
The end-to-end cases (a layer that says "may sublet" over a picture that says "may not sublet",
wrong amounts) are in test_nothing_lost_net.py and test_nothing_lost.py.
"""

from __future__ import annotations

import pymupdf

from pagerouter.model import Block
from pagerouter.textlayer.proof_reads import READ_BY_PROOF, mark_proof_reads
from pagerouter.triage.layer_proof import SampledLine, _norm, _replaceable, replace_lines
from pagerouter.ocr.text_stats import char_error_rate


def _sampled(layer, read, conf, word=False):
    return SampledLine(layer, read, char_error_rate(_norm(layer), _norm(read)), conf, word=word, bbox=(72, 100, 400, 112))


def test_a_confident_reading_of_the_same_line_is_replaceable_and_others_are_not():
    assert _replaceable(_sampled("The tenant may sublet the premises", "The tenant may not sublet the premises", 0.97))
    assert _replaceable(_sampled("Total due 1,520.00 EUR", "Total due 1,250.00 EUR", 0.95))
    # the recogniser doubts its reading: the page is OCR'd instead
    assert not _replaceable(_sampled("The tenant may sublet the premises", "The tenant may not sublet the premises", 0.7))
    # the crop held another line (the box is off its text): not this line's reading
    assert not _replaceable(_sampled("The tenant may sublet the premises", "Rent is due on the first day", 0.99))
    # a digit word's crop catches its neighbours: never stands in for the layer
    assert not _replaceable(_sampled("1,520.00", "1,250.00", 0.99, word=True))
    assert not _replaceable(_sampled("The tenant may sublet", "", 0.99))


def _layer_page():
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 110), "The tenant may", fontsize=11, render_mode=3)
    page.insert_text((150, 110), "sublet the premises", fontsize=11, fontname="tiro", render_mode=3)  # a span of its own
    page.insert_text((72, 140), "Rent is due on the first day", fontsize=11, render_mode=3)
    return doc, page


def test_replace_lines_puts_the_reading_in_place_of_the_layers_words_on_that_row_only():
    from pagerouter.common.pagetext import extract_textdict

    doc, page = _layer_page()
    td = extract_textdict(page)
    row = SampledLine("The tenant may sublet the premises", "The tenant may not sublet the premises", 0.0, 0.97,
                      bbox=(72, 99, 260, 113))
    assert replace_lines(td, [row]) == 2
    spans = [s for b in td["blocks"] for ln in b.get("lines", ()) for s in ln["spans"]]
    texts = [s["text"] for s in spans if s["text"]]
    assert texts == ["The tenant may not sublet the premises", "Rent is due on the first day"]
    marked = [s for s in spans if READ_BY_PROOF in s]
    assert len(marked) == 2 and marked[0][READ_BY_PROOF]["layer"] == "The tenant may sublet the premises"
    assert marked[0][READ_BY_PROOF]["engine"] == "rapidocr"


def test_the_block_holding_a_replaced_line_names_the_recogniser_and_the_others_stay_the_layers():
    from pagerouter.common.pagetext import extract_textdict

    doc, page = _layer_page()
    td = extract_textdict(page)
    replace_lines(td, [SampledLine("The tenant may sublet the premises", "The tenant may not sublet the premises",
                                   0.0, 0.93, bbox=(72, 99, 260, 113))])
    common = dict(page=1, engine="pymupdf", engine_version="x", route="text_layer", confidence=1.0)
    blocks = [Block(text="The tenant may not sublet the premises", role="paragraph", bbox=(72, 99, 270, 114), **common),
              Block(text="Rent is due on the first day", role="paragraph", bbox=(72, 129, 230, 144), **common),
              Block(text="", role="figure", bbox=(0, 0, 612, 792), **common)]
    out = mark_proof_reads(blocks, td, page)
    assert (out[0].engine, out[0].route, out[0].confidence) == ("rapidocr", "ocr", 0.93)
    assert "hidden-layer proof" in out[0].engine_version
    assert [(b.engine, b.route) for b in out[1:]] == [("pymupdf", "text_layer")] * 2
