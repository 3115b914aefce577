"""Opening inputs and the one-line errors for bad ones."""

from __future__ import annotations

import io

import pymupdf
import pytest
from PIL import Image

from pagerouter.intake.inputs import InputError, open_source, parse_pages
from pagerouter.bench.synth import add_text_page
from pagerouter.ocr.text_stats import char_error_rate

from .conftest import save_pdf


def _pdf_bytes(pages: int = 3) -> bytes:
    doc = pymupdf.open()
    for i in range(pages):
        add_text_page(doc, [f"Page {i + 1} text. The quick brown fox jumps over the lazy dog."])
    return doc.tobytes()


def test_opens_pdf(tmp_path):
    p = tmp_path / "a.pdf"
    p.write_bytes(_pdf_bytes(3))
    src = open_source(p)
    assert src.page_count == 3 and src.kind == "pdf" and src.opened_with == "pymupdf"


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "TIFF", "BMP", "GIF", "WEBP"])
def test_opens_images_as_pages(tmp_path, fmt):
    img = Image.new("RGB", (300, 200), "white")
    p = tmp_path / f"a.{fmt.lower()}"
    img.save(p, format=fmt)
    src = open_source(p)
    assert src.kind == "image" and src.page_count == 1
    assert src.doc[0].rect.width > 0


@pytest.mark.slow
def test_a_webp_page_is_read_by_ocr(tmp_path):
    """PyMuPDF's wheels cannot decode WebP: the page must still be read, not fail or come back blank."""
    from pagerouter.convert.converter import Converter

    truth = "Invoice 2417 is due on 3 March"
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=120)
    page.insert_text((30, 60), truth, fontsize=18)
    pix = page.get_pixmap(dpi=200)
    p = tmp_path / "scan.webp"
    Image.frombytes("RGB", (pix.width, pix.height), pix.samples).save(p, "WEBP", lossless=True)
    with Converter() as conv:
        result = conv.convert(p)
    (read,) = result.pages
    assert read.status == "ok" and read.route == "ocr", (read.status, read.route, read.error)
    assert char_error_rate(" ".join(b.text for b in read.blocks), truth) < 0.1


def test_multipage_tiff(tmp_path):
    frames = [Image.new("L", (200, 100), c) for c in (255, 200, 150)]
    p = tmp_path / "multi.tiff"
    frames[0].save(p, save_all=True, append_images=frames[1:])
    assert open_source(p).page_count == 3


def _err(tmp_path, name: str, data: bytes | None, **kw) -> InputError:
    p = tmp_path / name
    if data is not None:
        p.write_bytes(data)
    with pytest.raises(InputError) as ei:
        open_source(p, **kw)
    msg = str(ei.value)
    assert name in msg and "\n" not in msg  # one line, names the file
    return ei.value


def test_missing_file(tmp_path):
    assert "no such file" in _err(tmp_path, "nope.pdf", None).message


def test_not_a_pdf(tmp_path):
    assert "not a PDF" in _err(tmp_path, "notes.pdf", b"hello, I am a text file\n" * 10).message


def test_empty_file(tmp_path):
    assert "empty" in _err(tmp_path, "empty.pdf", b"").message


def test_truncated_pdf_is_repaired_and_keeps_what_survived(tmp_path):
    """A PDF cut in half: MuPDF repairs it (this is deterministic for a given file, so the test
    says what happens rather than accepting either outcome): all 3 pages are listed, the first
    page's text, which lies before the cut, comes out exactly; the cut pages' content is gone."""
    data = _pdf_bytes(3)
    p = tmp_path / "trunc.pdf"
    p.write_bytes(data[: len(data) // 2])
    src = open_source(p)
    assert src.opened_with == "pymupdf" and src.page_count == 3
    texts = [page.get_text() for page in src.doc]
    assert char_error_rate("Page 1 text. The quick brown fox jumps over the lazy dog.", texts[0]) == 0.0
    assert texts[1:] == ["", ""]


def test_garbage_after_header_is_corrupt(tmp_path):
    err = _err(tmp_path, "corrupt.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 40)
    assert "corrupt" in err.message or "no pages" in err.message


def test_encrypted_pdf(tmp_path):
    doc = pymupdf.open()
    add_text_page(doc, ["secret text"])
    p = tmp_path / "enc.pdf"
    doc.save(p, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="owner")
    assert "password" in _err(tmp_path, "enc.pdf", None).message
    assert "wrong" in _err(tmp_path, "enc.pdf", None, password="bad").message
    src = open_source(p, password="pw")
    assert "secret text" in src.doc[0].get_text()


def test_zero_page_pdf(tmp_path):
    # A syntactically valid PDF whose page tree is empty.
    data = (
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
        b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
        b"trailer<</Root 1 0 R>>\n%%EOF\n"
    )
    assert "no pages" in _err(tmp_path, "zero.pdf", data).message


def test_pypdf_fallback_is_used_when_pymupdf_fails(tmp_path, monkeypatch):
    """If PyMuPDF can't open a file, pypdf's rewrite is tried before giving up."""
    data = _pdf_bytes(2)
    real_open = pymupdf.open
    calls = {"n": 0}

    def flaky_open(*a, **kw):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("simulated MuPDF failure")
        return real_open(*a, **kw)

    monkeypatch.setattr(pymupdf, "open", flaky_open)
    p = tmp_path / "x.pdf"
    p.write_bytes(data)
    src = open_source(p)
    assert src.opened_with == "pypdf" and src.page_count == 2


@pytest.mark.parametrize(
    "spec,expected",
    [(None, [1, 2, 3, 4, 5]), ("1-3,5", [1, 2, 3, 5]), ("2", [2]), ("4-", [4, 5]), ("-2", [1, 2]), ("3,1,3", [1, 3])],
)
def test_parse_pages(spec, expected):
    assert parse_pages(spec, 5) == expected


@pytest.mark.parametrize("spec", ["0", "3-1", "x", "9", "1-2-3"])
def test_parse_pages_rejects(spec):
    with pytest.raises(InputError):
        parse_pages(spec, 5, "doc.pdf")


def test_save_pdf_helper(tmp_path):
    doc = pymupdf.open()
    doc.new_page()
    assert save_pdf(doc, tmp_path / "b.pdf").exists()


def test_raw_bytes_input():
    src = open_source(data=_pdf_bytes(1), name="upload.pdf")
    assert src.name == "upload.pdf" and src.page_count == 1
    buf = io.BytesIO()
    Image.new("RGB", (50, 50)).save(buf, format="PNG")
    assert open_source(data=buf.getvalue(), name="-").kind == "image"


def test_a_selection_is_read_for_its_syntax_alone_before_any_document():
    from pagerouter.intake.inputs import is_page_selection

    assert [s for s in ("1-3,7", "10-", "-3", "2-1", "0") if not is_page_selection(s)] == []  # ranges: the file's error
    assert [s for s in ("x", "1,,2", "1-2-3", "3 4", "") if is_page_selection(s)] == []
