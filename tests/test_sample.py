"""The README's main job: `pagerouter convert` on the bundled mixed sample, end to end with
the real engines (PyMuPDF, rapid-layout, RapidOCR; Tesseract if escalation runs)."""

from __future__ import annotations

import json
import re

import pytest

from pagerouter.cli.main import main
from pagerouter.bench.synth import make_mixed_sample


def _words(text: str) -> str:
    return " ".join(re.findall(r"[\w.,:-]+", text))


@pytest.mark.slow
def test_sample_routes_and_text(repo_root, tmp_path, capsys):
    sample = repo_root / "samples" / "mixed-sample.pdf"
    code = main(["convert", str(sample), "-o", str(tmp_path), "--format", "both"])
    err = capsys.readouterr().err
    assert code == 0
    data = json.loads((tmp_path / "mixed-sample.json").read_text())
    assert [p["route"] for p in data["pages"]] == ["text_layer", "ocr", "ocr", "text_layer", "blank"]
    md = _words((tmp_path / "mixed-sample.md").read_text())
    for expected in [
        "Quarterly routing report",
        "Dear reader, this page is a picture of text.",
        "Invoice 2024-117",  # top-of-page lines of a sparse scan are body text, not a running header
        "Total due: 1,250.00 EUR",
        "Two columns",
    ]:
        assert expected in md, expected
    assert "lorem ipsum" not in md, "the lying hidden text layer must not be used"
    assert "pagerouter sample" not in md, "running header kept out of the body"
    ocr_blocks = [b for p in data["pages"] if p["route"] == "ocr" for b in p["blocks"]]
    assert ocr_blocks and all(b["engine"] in ("rapidocr", "vote", "tesseract") for b in ocr_blocks)
    assert "text_layer" in err and "ocr" in err and "blank" in err  # the route summary


def test_sample_file_is_what_the_generator_makes(repo_root, tmp_path):
    """The bundled sample is reproducible from scripts/make_sample.py (same pages, same text)."""
    import pymupdf

    fresh = tmp_path / "fresh.pdf"
    make_mixed_sample(str(fresh))
    a, b = pymupdf.open(repo_root / "samples" / "mixed-sample.pdf"), pymupdf.open(fresh)
    assert a.page_count == b.page_count == 5
    for pa, pb in zip(a, b):
        assert pa.get_text() == pb.get_text()
        assert len(pa.get_images()) == len(pb.get_images())
