"""The Python API where Python users run it: scripts, notebooks (a running event loop) and async apps.

Real conversions of a born-digital PDF whose text is known; the text that comes back is compared
with it (character error rate and word order), never counted.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from pathlib import Path

import pymupdf
import pytest

from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.ocr.text_stats import char_error_rate

TITLE = "Quarterly Report"
BODY = [
    "Revenue grew in every region during the third quarter.",
    "The board approved the new warehouse in Rotterdam.",
]


@pytest.fixture(scope="module")
def report_pdf(tmp_path_factory) -> Path:
    """A two-page born-digital PDF: its text layer is the truth the tests compare against."""
    path = tmp_path_factory.mktemp("api") / "report.pdf"
    doc = pymupdf.open()
    for line in BODY:
        page = doc.new_page()
        page.insert_text((72, 72), TITLE if line is BODY[0] else "Appendix", fontsize=20)
        page.insert_text((72, 120), line, fontsize=11)
    doc.save(path)
    doc.close()
    return path


@pytest.fixture(scope="module")
def converter():
    # the text layer alone reads this file: no OCR engine needs loading
    with Converter(PagerouterConfig.model_validate({"ocr": {"enabled": False}})) as conv:
        yield conv


def _words(text: str) -> list[str]:
    return [w.strip(".#*-") for w in text.split() if w.strip(".#*-")]  # Markdown marks and the page separator are not words


def _assert_reads_the_report(doc) -> None:
    assert [p.number for p in doc.pages] == [1, 2]
    assert [p.status for p in doc.pages] == ["ok", "ok"]
    for page, (head, line) in zip(doc.pages, [(TITLE, BODY[0]), ("Appendix", BODY[1])]):
        got = "\n".join(b.text for b in page.blocks)
        want = f"{head}\n{line}"
        assert char_error_rate(want, got) < 0.02, got
        assert _words(got) == _words(want)  # word order, whole page


def test_the_sync_call_works_inside_a_running_event_loop(converter, report_pdf):
    """What a Jupyter cell does: the cell's code runs while the kernel's loop is running. Before,
    `convert` called `asyncio.run` there and raised RuntimeError."""
    callers: list[threading.Thread] = []

    async def cell():
        asyncio.get_running_loop()  # the notebook's loop is running here
        callers.append(threading.current_thread())
        return converter.convert(report_pdf)

    doc = asyncio.run(cell())
    _assert_reads_the_report(doc)
    assert callers == [threading.main_thread()]


def test_iter_pages_streams_inside_a_running_event_loop(converter, report_pdf):
    async def cell():
        return [p for p in converter.iter_pages(report_pdf)]

    pages = asyncio.run(cell())
    assert [p.number for p in pages] == [1, 2]
    assert _words("\n".join(b.text for b in pages[1].blocks)) == _words(f"Appendix {BODY[1]}")


def test_iter_pages_closed_early_inside_a_loop_leaves_no_thread(converter, report_pdf):
    before = {t.name for t in threading.enumerate()}

    async def cell():
        it = converter.iter_pages(report_pdf)
        first = next(it)
        it.close()
        return first

    first = asyncio.run(cell())
    assert first.number == 1
    left = {t.name for t in threading.enumerate()} - before
    assert not any(name.startswith("pagerouter-sync") for name in left), left


def test_the_sync_call_without_a_loop_and_await_in_an_async_app(converter, report_pdf):
    doc = converter.convert(report_pdf)
    _assert_reads_the_report(doc)
    assert [p.blocks for p in converter.iter_pages(report_pdf)] == [p.blocks for p in doc.pages]

    async def handler():
        return await converter.convert_async(report_pdf.read_bytes(), name="upload.pdf")

    doc = asyncio.run(handler())
    _assert_reads_the_report(doc)
    assert doc.source == "upload.pdf"


# ------------------------------------------------------------------ the package-level API
NO_OCR = PagerouterConfig.model_validate({"ocr": {"enabled": False}})


def test_pagerouter_convert_from_a_path_bytes_and_a_file_object(report_pdf):
    import pagerouter

    from_path = pagerouter.convert(report_pdf, config=NO_OCR)
    _assert_reads_the_report(from_path)
    assert from_path.source == "report.pdf"
    from_bytes = pagerouter.convert(report_pdf.read_bytes(), name="upload.pdf", pages="2", config=NO_OCR)
    assert from_bytes.source == "upload.pdf" and [p.number for p in from_bytes.pages] == [2]
    assert from_bytes.pages[0].blocks == from_path.pages[1].blocks
    with open(report_pdf, "rb") as f:
        from_file = pagerouter.convert(f, config=NO_OCR)
    assert from_file.source == "report.pdf"
    assert [p.blocks for p in from_file.pages] == [p.blocks for p in from_path.pages]


def test_pagerouter_convert_stays_callable_once_the_converter_module_is_imported(report_pdf):
    """`pagerouter.convert` is the `pagerouter/convert/` package itself, called: importing its
    submodules (which rebinds the package attribute) cannot shadow it."""
    import pagerouter
    import pagerouter.convert.converter

    assert pagerouter.convert.converter.Converter is pagerouter.Converter
    doc = pagerouter.convert(report_pdf.read_bytes(), config=NO_OCR, pages="1")
    assert _words(doc.to_markdown()) == _words(f"{TITLE} {BODY[0]}")


def test_the_package_level_call_shows_its_typed_options():
    import inspect
    import typing

    import pagerouter

    sig = inspect.signature(pagerouter.convert)
    assert list(sig.parameters)[:1] == ["source"]
    assert {"pages", "password", "ocr", "languages", "images", "wait", "config"} <= set(sig.parameters)
    # the names its annotations use only for type checkers
    hints = typing.get_type_hints(pagerouter.convert.convert, localns={
        "PagerouterConfig": pagerouter.PagerouterConfig, "Document": pagerouter.Document})
    assert typing.get_args(hints["ocr"]) == (typing.Literal["auto", "force", "off"], type(None))
    conv_hints = typing.get_type_hints(Converter.convert)
    assert conv_hints["ocr"] == hints["ocr"]
    assert not any(p.kind is p.VAR_KEYWORD for p in inspect.signature(Converter.convert).parameters.values())


def test_a_bad_option_or_text_mode_file_is_one_clear_error(report_pdf):
    import pagerouter

    with pytest.raises(ValueError, match="ocr"):
        pagerouter.convert(report_pdf, ocr="sometimes", config=NO_OCR)
    with open(report_pdf, encoding="latin-1") as f, pytest.raises(TypeError, match="binary mode"):
        pagerouter.convert(f, config=NO_OCR)


def test_document_exports_are_the_renderers_output(converter, report_pdf):
    import json

    from pagerouter.render.output import to_json, to_markdown

    doc = converter.convert(report_pdf)
    md = doc.to_markdown()
    assert md == to_markdown(doc)
    assert _words(md) == _words(f"{TITLE} {BODY[0]} Appendix {BODY[1]}")
    assert doc.to_json() == to_json(doc)
    back = json.loads(doc.to_json(indent=None))
    assert [b["text"] for b in back["pages"][1]["blocks"]] == [b.text for b in doc.pages[1].blocks]


def test_import_pagerouter_imports_no_converter_until_used():
    import subprocess
    import sys

    code = ("import sys, pagerouter\n"
            "print(sorted(m for m in sys.modules if m.startswith(('pagerouter.', 'pymupdf', 'pydantic'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[]"


@pytest.fixture
def http_folder(tmp_path):
    """A real HTTP server (http.server in a thread) serving `tmp_path`; yields (folder, base URL)."""
    import functools
    import http.server

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_pagerouter_convert_reads_url_like_sources_through_fsspec(report_pdf, http_folder):
    import fsspec

    import pagerouter

    folder, base = http_folder
    (folder / "served report.pdf").write_bytes(report_pdf.read_bytes())
    want = pagerouter.convert(report_pdf, config=NO_OCR)
    (folder / "local #1.pdf").write_bytes(report_pdf.read_bytes())
    for url in ((folder / "local #1.pdf").resolve().as_uri(), f"{base}/served%20report.pdf"):
        doc = pagerouter.convert(url, config=NO_OCR)
        _assert_reads_the_report(doc)
        assert [p.blocks for p in doc.pages] == [p.blocks for p in want.pages]
    with fsspec.open("memory://inbox/report.pdf", "wb") as f:  # fsspec's in-memory filesystem
        f.write(report_pdf.read_bytes())
    with pagerouter.Converter(NO_OCR) as conv:
        doc = conv.convert("memory://inbox/report.pdf", pages="2")
    assert [p.number for p in doc.pages] == [2] and doc.pages[0].blocks == want.pages[1].blocks


def test_a_url_that_cannot_be_read_is_one_input_error_naming_it(http_folder):
    import pagerouter

    _, base = http_folder
    cases = {
        f"{base}/missing.pdf": "no such file",
        "file:///nonexistent/dir/x.pdf": "no such file",
        "nosuchscheme://bucket/x.pdf": "cannot open this URL",
    }
    for url, why in cases.items():
        with pytest.raises(pagerouter.InputError) as info:
            pagerouter.convert(url, config=NO_OCR)
        assert str(info.value).startswith(url) and why in str(info.value), str(info.value)
    if importlib.util.find_spec("s3fs") is None:  # the scheme's backend is not installed: the error names it
        with pytest.raises(pagerouter.InputError, match="s3://bucket/x.pdf: cannot open this URL: .*s3fs"):
            pagerouter.convert("s3://bucket/x.pdf", config=NO_OCR)
    with pytest.raises(pagerouter.InputError, match="upload.pdf: no such file"):
        pagerouter.convert(f"{base}/missing.pdf", name="upload.pdf", config=NO_OCR)
