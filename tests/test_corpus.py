"""Robustness on the shared real corpus: every page of every file comes out with a status."""

from __future__ import annotations

import pytest

from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.intake.inputs import InputError, open_source
from pagerouter.ocr.text_stats import char_error_rate


@pytest.mark.slow
def test_every_real_page_comes_out_with_status(corpus_pdfs):
    """Triage + text layer on all 37 files (OCR off, so OCR pages must say needs_ocr)."""
    converter = Converter(PagerouterConfig.model_validate({"ocr": {"enabled": False}}))
    total, routes = 0, {}
    for path in corpus_pdfs:
        try:
            src = open_source(path)
        except InputError as exc:  # a clear error is an acceptable outcome for an unopenable file
            assert path.name in str(exc)
            continue
        numbers = list(range(1, src.page_count + 1))
        doc = converter.convert(src)
        assert [p.number for p in doc.pages] == numbers, path.name
        for p in doc.pages:
            total += 1
            routes[p.route] = routes.get(p.route, 0) + 1
            assert p.status in ("ok", "flagged", "failed")
            if p.status == "failed":
                assert p.error and path.name in p.error
            if p.route in ("ocr", "mixed"):
                assert "needs_ocr" in p.flags, f"{path.name} p{p.number}"
            if p.route == "text_layer" and p.status == "ok":
                assert all(b.engine == "pymupdf" and b.page == p.number for b in p.blocks)
        src.close()
    print(f"\nreal corpus: {total} pages, routes {routes}")
    assert total >= 100
    assert routes.get("ocr", 0) >= 5, "the corpus has scans: some pages must go to OCR"
    assert routes.get("text_layer", 0) >= 60, "most real pages are born digital"


@pytest.mark.slow
def test_real_scans_through_the_ocr_path(corpus_pdfs):
    """The real OCR path (rapid-layout, RapidOCR, checks, vote escalation) on real scans and
    lying layers: every page comes out with a status, OCR pages carry OCR provenance, and a
    page with visible text is not silently empty. Includes a 234 x 14295 pt page (skinnypage)
    that must not exhaust memory or crash the engines."""
    names = {"edgar_image.pdf", "some_ocr1.pdf", "small_page_size.pdf", "handwriting_bad_ocr.pdf", "olmo-page-1.pdf",
             "skinnypage.pdf"}
    files = [p for p in corpus_pdfs if p.name in names]
    assert len(files) == len(names)
    converter = Converter()
    docs = {}
    for path in files:
        src = open_source(path)
        count = src.page_count
        doc = docs[path.name] = converter.convert(src)
        src.close()
        assert len(doc.pages) == count
        for p in doc.pages:
            assert p.status in ("ok", "flagged"), (path.name, p.number, p.error)
            if p.route == "ocr":
                assert "needs_ocr" not in p.flags
                assert all(b.route in ("ocr", "escalation") and b.page == p.number for b in p.blocks)
                text = "".join(b.text for b in p.blocks)
                assert text.strip() or p.status == "flagged", f"{path.name} p{p.number}: empty OCR page not flagged"
    # a born-digital page with a broken font map (every letter shifted) goes to OCR and reads the
    # page's real text: passages transcribed from the rendered page, compared by character error rate
    doc = docs["olmo-page-1.pdf"]  # read above: page 1 is not converted a second time
    assert doc.pages[0].number == 1 and doc.pages[0].route == "ocr"
    text = " ".join(" ".join(b.text for b in doc.pages[0].blocks).split())
    for known in OLMO_PASSAGES:
        assert _window_cer(text, known) <= 0.03, (known, text)


OLMO_PASSAGES = [
    "Language models (LMs) have become ubiquitous in both NLP research and in commercial product offerings. "
    "As their commercial importance has surged, the most powerful models have become closed off, gated behind "
    "proprietary interfaces, with important details of their training data, architectures, and development undisclosed.",
    "We believe that full access to open language models for the research community is critical to the scientific "
    "study of these models, their strengths and weaknesses, and their biases and risks.",
]
"""olmo-page-1.pdf, page 1: the abstract's first two sentences and the first sentence of the introduction's second paragraph."""


def _window_cer(text: str, known: str) -> float:
    """Character error rate of `known` against the stretch of `text` where it should be:
    anchored on the longest common run of the two, the best of lengths len(known) +- 5 (so OCR
    inserting or dropping a few characters does not cut the stretch short or pad it)."""
    from difflib import SequenceMatcher

    m = SequenceMatcher(None, text, known, autojunk=False).find_longest_match(0, len(text), 0, len(known))
    start = max(0, m.a - m.b)
    return min(char_error_rate(known, text[start:start + len(known) + d]) for d in range(-5, 6))
