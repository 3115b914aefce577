"""Per-request options (pagerouter/flow/options.py), in process: the one model's validation,
and each option doing its work for real through the Converter, the CLI and the local HTTP front
(no Ray: the ingress core over a FastAPI TestClient with a fake Triage that records its calls).
The served graph (HTTP + gRPC + OpenAPI) is tests/test_serve_options.py."""

from __future__ import annotations

import asyncio
import base64
import io
from pathlib import Path

import pymupdf
import pytest
from PIL import Image, ImageDraw

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.intake.inputs import open_source
from pagerouter.ocr.text_stats import char_error_rate
from pagerouter.flow.pipeline import DocumentTriage
from pagerouter.flow.options import OptionError, PageOptions, RequestOptions

REPO = Path(__file__).resolve().parent.parent
BORN = ["The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs."]
SCAN = ["Invoice number 4711", "Total due 99 EUR"]
GERMAN = ["Die Größe der Äpfel über", "schöne grüne Bäume"]
FIGURE_PT = (60, 80, 360, 280)  # a 300 x 200 pt picture


def _figure_png() -> bytes:
    img = Image.new("RGB", (300, 200), "white")
    draw = ImageDraw.Draw(img)
    draw.rectangle((20, 20, 280, 180), fill=(200, 30, 30))
    draw.ellipse((60, 40, 200, 160), fill=(20, 20, 200))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture(scope="module")
def pdf() -> bytes:
    """Page 1 born-digital, page 2 a scan (no text layer), page 3 text and a picture."""
    doc = pymupdf.open()
    synth.add_text_page(doc, BORN, title="Forced reading", size=(420, 300))
    synth.add_scanned_page(doc, SCAN, size=(320, 220), fontsize=14)
    page = doc.new_page(width=420, height=400)
    page.insert_text((40, 40), "A page with a figure below it and some words.", fontsize=11)
    page.insert_image(pymupdf.Rect(*FIGURE_PT), stream=_figure_png())
    data = doc.tobytes()
    doc.close()
    return data


@pytest.fixture(scope="module")
def converter():
    with Converter() as conv:
        yield conv


# ---------------------------------------------------------------------- the model
@pytest.mark.parametrize("fields, words", [
    ({"colour": "red"}, "unknown option `colour`; accepted options: "),
    ({"ocr": "sometimes"}, "ocr must be auto, force or off, not 'sometimes'"),
    ({"format": "docx"}, "format must be json or md, not 'docx'"),
    ({"stream": "maybe"}, "stream='maybe'"),
    ({"stream": "true", "format": "md"}, "NDJSON, which is JSON: ask for format=json"),
    ({"pages": "a-b"}, "'a-b' is not a page selection"),
    ({"languages": "eng+d;e"}, "'d;e' is not a Tesseract language pack name"),
    ({"escalation_wait_s": "inf"}, "escalation_wait_s='inf'"),
    ({"images": "lots"}, "images='lots'"),
])
def test_bad_options_are_named_with_their_value(fields, words):
    with pytest.raises(OptionError) as err:
        RequestOptions.from_fields(fields)
    assert words in err.value.message, err.value.message
    assert "\n" not in err.value.message
    if "colour" in fields:
        for name in ("pages", "ocr", "languages", "images", "format", "stream", "wait"):
            assert name in err.value.message


def test_good_options_parse_from_text_fields():
    opts = RequestOptions.from_fields({"ocr": "force", "languages": "eng+deu", "images": "1", "stream": "true",
                                       "pages": "-3", "password": "", "escalation_wait_s": "2.5"})
    assert (opts.ocr, opts.languages, opts.images, opts.stream, opts.pages) == ("force", ["eng", "deu"], True, True, "-3")
    assert opts.password is None and opts.escalation_wait_s == 2.5
    assert RequestOptions.from_fields({"languages": "eng,deu"}).languages == ["eng", "deu"]
    assert PageOptions.from_fields({"page": "4"}).selection() == "4"
    with pytest.raises(OptionError, match="unknown option `stream`"):  # not an option of one page
        PageOptions.from_fields({"stream": "true"})
    with pytest.raises(OptionError, match="page="):
        PageOptions.from_fields({"page": "two"})
    secret = "hunter2-not-shown"
    with pytest.raises(OptionError) as err:
        RequestOptions.from_fields({"password": {"x": secret}})
    assert secret not in err.value.message


def test_uninstalled_language_packs_are_named():
    RequestOptions(languages=["eng", "deu"]).check_languages(frozenset({"eng", "deu"}))
    with pytest.raises(OptionError) as err:
        RequestOptions(languages=["eng", "klingon", "elvish"]).check_languages(frozenset({"eng", "deu"}))
    assert "klingon, elvish not installed" in err.value.message and "installed packs: deu, eng" in err.value.message


# ---------------------------------------------------------------------- each option, for real
@pytest.mark.slow
def test_ocr_force_reads_a_born_digital_page_by_ocr(converter, pdf):
    auto = converter.convert(pdf, name="t.pdf", pages="1").pages[0]
    forced = converter.convert(pdf, name="t.pdf", pages="1", ocr="force").pages[0]
    assert auto.route == "text_layer" and {b.engine for b in auto.blocks} == {"pymupdf"}
    assert forced.route == "ocr" and forced.status == "ok"
    assert {b.engine for b in forced.blocks} == {"rapidocr"} and {b.route for b in forced.blocks} == {"ocr"}
    assert any("ocr=force requested" in r for r in forced.triage.reasons)
    text = " ".join(b.text for b in forced.blocks)
    assert char_error_rate("Forced reading " + BORN[0], text) < 0.05, text


def test_ocr_off_flags_a_scanned_page_instead_of_reading_it(pdf):
    with Converter() as conv:  # OCR engines are never built: ocr=off must not need them
        doc = conv.convert(pdf, name="t.pdf", pages="1-2", ocr="off")
        assert not conv.engines._built
    born, scan = doc.pages
    assert born.status == "ok" and born.route == "text_layer"
    assert scan.status == "flagged" and "ocr_off" in scan.flags and scan.route == "ocr"
    check = next(c for c in scan.checks if c.name == "ocr_off")
    assert not check.passed and "t.pdf: page 2" in check.reason and "ocr=off" in check.reason
    assert not any(b.text.strip() for b in scan.blocks)  # a scan has no text layer: nothing invented


def test_images_return_the_figure_as_png_of_its_size(converter, pdf):
    plain = converter.convert(pdf, name="t.pdf", pages="3").pages[0]
    assert all(b.image_png_base64 is None for b in plain.blocks)
    page = converter.convert(pdf, name="t.pdf", pages="3", images=True).pages[0]
    figures = [b for b in page.blocks if b.role == "figure"]
    assert len(figures) == 1 and figures[0].bbox == pytest.approx(FIGURE_PT, abs=1)
    png = Image.open(io.BytesIO(base64.b64decode(figures[0].image_png_base64)))
    assert png.format == "PNG"
    assert png.size[0] == pytest.approx(300 * 150 / 72, abs=3) and png.size[1] == pytest.approx(200 * 150 / 72, abs=3)
    r, g, b = png.convert("RGB").getpixel((png.size[0] // 2, png.size[1] // 2))
    assert b > 150 and r < 80  # the blue ellipse sits in the middle: it is the picture, not a blank crop
    assert all(b.image_png_base64 is None for b in page.blocks if b.role != "figure")


@pytest.mark.slow
def test_languages_reach_tesseract_through_the_task():
    """The request's packs ride on the OcrTask: deu reads the umlauts eng cannot."""
    from pagerouter.ocr.reader_tesseract import TesseractReader
    from pagerouter.flow.pipeline import convert_pages
    from pagerouter.common.stages import OcrCalls

    doc = pymupdf.open()
    synth.add_scanned_page(doc, GERMAN, size=(360, 200), fontsize=16)
    src = open_source(data=doc.tobytes(), name="de.pdf")
    cfg = PagerouterConfig()
    seen = []

    async def layout(task):
        seen.append(task.languages)
        raise RuntimeError("stop here")  # only the task's way to the stages is under test

    async def pages(langs):
        outcomes = [DocumentTriage(cfg).triage_one(src, 1)]

        async def gen():
            for o in outcomes:
                yield o
        calls = OcrCalls(layout=layout, read=None)
        return [p async for p in convert_pages(gen(), "de.pdf", cfg, calls, languages=langs)]

    asyncio.run(pages(("deu",)))
    assert seen == [("deu",)]
    reader = TesseractReader(cfg.ocr)
    task = DocumentTriage(cfg).triage_one(src, 1).task
    read = {}
    for langs in (("eng",), ("deu",)):
        task.languages = langs
        lines, _ = reader.read_task_lines(task)
        read[langs] = " ".join(ln.text for ln in lines)
        assert f"tesseract languages {langs[0]} (requested)" in reader.last_notes[0]
    assert char_error_rate(" ".join(GERMAN), read[("deu",)]) < 0.05, read
    assert "ö" in read[("deu",)] and "ü" in read[("deu",)]
    assert char_error_rate(" ".join(GERMAN), read[("eng",)]) > char_error_rate(" ".join(GERMAN), read[("deu",)])


def test_cli_flags_refuse_bad_options_in_one_line(tmp_path, pdf, capsys):
    from pagerouter.cli.main import main

    path = tmp_path / "t.pdf"
    path.write_bytes(pdf)
    assert main(["convert", str(path), "-q", "--lang", "klingon"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert "--lang: klingon not installed; installed packs:" in err and "Traceback" not in err
    assert main(["convert", str(path), "-q", "--ocr", "off", "--pages", "2", "--format", "json", "--embed-images"]) == 0
    out, err = capsys.readouterr()
    assert '"ocr_off"' in out and '"status": "flagged"' in out


# ---------------------------------------------------------------------- local HTTP front (no Ray)
class FakeTriage:
    """Records what the ingress asks of Triage; answers one text page."""

    def __init__(self):
        self.calls: list[tuple] = []
        outer = self

        class _Outcomes:
            def options(self, **kw):
                return self

            def remote(self, *args):
                outer.calls.append(args)
                return _stream()

        self.outcomes = _Outcomes()


def _stream():
    from pagerouter.model import Document, Page
    from pagerouter.flow.pipeline import TriageOutcome
    from pagerouter.wire.items import DocumentHead

    class S:
        def __init__(self):
            self.items = [DocumentHead(Document(source="a.pdf", page_count=1), [1]),
                          TriageOutcome(Page(number=1, status="ok", route="text_layer"))]

        def __aiter__(self):
            return self

        async def __anext__(self):
            if not self.items:
                raise StopAsyncIteration
            return self.items.pop(0)

        def cancel(self):
            pass

    return S()


def test_http_options_are_validated_with_422_before_any_work():
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from pagerouter.deployments.ingress import IngressCore, install_error_handlers

    triage = FakeTriage()
    # every request goes to the (fake) Triage deployment, so the options it is handed can be read;
    # the ingress's own triage of small requests (deployments/fast_path.py) has its own tests
    cfg = PagerouterConfig(ocr={"enabled": False}, serve={"ingress_triage_max_pages": 0})
    core = IngressCore(cfg.model_dump(), triage, None, None, None)
    api = FastAPI()
    install_error_handlers(api)
    api.router.add_route("/v1/convert", core.convert_http, methods=["POST"])
    api.router.add_route("/v1/pages", core.convert_page_http, methods=["POST"])
    with TestClient(api, raise_server_exceptions=False) as client:
        for path, query, words in (
            ("/v1/convert", "colour=red", "unknown option `colour`; accepted options: password, filename"),
            ("/v1/convert", "ocr=sometimes", "ocr must be auto, force or off, not 'sometimes'"),
            ("/v1/convert", "stream=true&format=md", "NDJSON, which is JSON"),
            ("/v1/convert", "languages=klingon", "klingon not installed"),
            ("/v1/pages", "format=md", "unknown option `format`"),
            ("/v1/pages", "images=lots", "images='lots'"),
        ):
            r = client.post(f"{path}?{query}", content=b"%PDF-1.7")
            assert r.status_code == 422, (path, query, r.text)
            err = r.json()["error"]
            assert err["code"] == "bad_request" and words in err["message"] and set(err) == {"code", "message", "request_id"}
        form = client.post("/v1/convert", files={"file": ("a.pdf", b"%PDF-1.7")}, data={"ocr": "never"})
        assert form.status_code == 422 and "'never'" in form.json()["error"]["message"]
        assert triage.calls == [], "a bad option is refused before Triage is asked"
        ok = client.post("/v1/convert?ocr=force&images=true&filename=a.pdf", content=b"%PDF-1.7")
        assert ok.status_code == 200, ok.text
        page = client.post("/v1/pages?ocr=off&page=1", content=b"%PDF-1.7")
        assert page.status_code == 200, page.text
        empty = client.post("/v1/convert?ocr=force", content=b"")
        assert empty.status_code == 400  # not an option: no upload at all
    # the options reach Triage: (data, name, password, selection, ocr, images)
    assert triage.calls[0][1:] == ("a.pdf", None, None, "force", True)
    assert triage.calls[1][3:] == ("1", "off", False)


def test_ocr_page_figures_are_cut_from_the_task_render():
    """An OCR page's figure comes from its OCR render (the ingress never runs MuPDF): the crop
    is the figure's box at the render's scale, and it holds the picture's pixels."""
    import numpy as np

    from pagerouter.flow.figure_export import crop_figures
    from pagerouter.model import Block, Page, TriageDecision
    from pagerouter.common.stages import OcrTask

    image = np.full((400, 300, 3), 255, np.uint8)  # a 150 x 200 pt page at 2 px/pt
    image[100:200, 40:240] = (10, 200, 10)  # the figure: (20, 50, 120, 100) pt
    task = OcrTask("s.pdf", 1, 150, 200, TriageDecision(route="ocr"), image, 2.0, b"")
    fig = Block(text="", role="figure", bbox=(20, 50, 120, 100), page=1, engine="rapid_layout", route="ocr",
                confidence=0.9)
    text = Block(text="x", role="paragraph", bbox=(0, 0, 10, 10), page=1, engine="rapidocr", route="ocr", confidence=1)
    page = Page(number=1, status="ok", route="ocr", blocks=[fig, text])
    crop_figures(page, task)
    png = Image.open(io.BytesIO(base64.b64decode(fig.image_png_base64)))
    assert png.size == (200, 100) and png.convert("RGB").getpixel((100, 50)) == (10, 200, 10)
    assert text.image_png_base64 is None
