"""Robustness on the shared real corpus: every page of every file comes out with a status."""

from __future__ import annotations

import asyncio

import pytest

from pagerouter.config import PagerouterConfig
from pagerouter.inputs import InputError, open_source
from pagerouter.local import convert_source_async


@pytest.mark.slow
def test_every_real_page_comes_out_with_status(corpus_pdfs):
    """Triage + text layer on all 37 files (OCR off, so OCR pages must say needs_ocr)."""
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}})
    total, routes = 0, {}
    for path in corpus_pdfs:
        try:
            src = open_source(path)
        except InputError as exc:  # a clear error is an acceptable outcome for an unopenable file
            assert path.name in str(exc)
            continue
        numbers = list(range(1, src.page_count + 1))
        doc = asyncio.run(convert_source_async(src, cfg, numbers))
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
