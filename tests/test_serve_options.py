"""Per-request options against a real `pagerouter serve` (HTTP, gRPC and the OpenAPI).

One subprocess for the module with OCR on and the escalation tier off (nothing here needs it):
the options are validated at the front (422 / INVALID_ARGUMENT with error-code `bad_request`)
and do their work in the deployments: ocr=force makes the Triage replica send a born-digital
page to the Layout and SmallReader replicas, ocr=off flags a scan, images returns the figure
as a PNG. The in-process side is tests/test_request_options.py.
"""

from __future__ import annotations

import base64
import io
import json
import os
import tempfile
from pathlib import Path

import httpx
import pymupdf
import pytest
import yaml
from PIL import Image

from pagerouter.clients.errors import PagerouterClientError
from pagerouter.clients.grpc_client import PagerouterGrpcClient
from pagerouter.clients.http_client import PagerouterHttpClient
from pagerouter.bench import synth
from pagerouter.ocr.text_stats import char_error_rate
from tests.serve_fixtures import free_ports, pagerouter_serve_process
from tests.test_request_options import BORN, FIGURE_PT, SCAN, _figure_png

REPO = Path(__file__).resolve().parent.parent
CONFIG = {
    "ocr": {"escalation": {"enabled": False}, "pages_in_flight": 2},
    "serve": {"layout": {"batch_wait_timeout_s": 0.01, "num_cpus": 0.2},
              "small_reader": {"batch_wait_timeout_s": 0.01, "num_cpus": 0.2},
              "ingress": {"num_cpus": 0.1}},
}
OPTIONS = ("pages", "password", "filename", "wait", "escalation_wait_s", "ocr", "languages", "images", "format", "stream")


def SERVED(fn):  # noqa: N802 - a marker stack
    return pytest.mark.serve(pytest.mark.slow(fn))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("options")
    cfg = d / "serve.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    doc = pymupdf.open()
    synth.add_text_page(doc, BORN, title="Forced reading", size=(420, 300))
    synth.add_scanned_page(doc, SCAN, size=(320, 220), fontsize=14)
    page = doc.new_page(width=420, height=400)
    page.insert_text((40, 40), "A page with a figure below it and some words.", fontsize=11)
    page.insert_image(pymupdf.Rect(*FIGURE_PT), stream=_figure_png())
    pdf = d / "t.pdf"
    doc.save(pdf)
    doc.close()
    ray_tmp = tempfile.mkdtemp(prefix="propt", dir="/tmp")  # short: Ray's unix sockets live there
    http_port, grpc_port = free_ports(2)
    env = {**os.environ, "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp,
           "PYTHONPATH": str(REPO)}
    env.pop("PAGEROUTER_API_KEY", None)
    env.pop("PAGEROUTER_API_KEY_FILE", None)
    with pagerouter_serve_process(d, cfg, env, http_port, grpc_port, ray_tmp):
        yield {"http": f"http://127.0.0.1:{http_port}", "grpc": f"127.0.0.1:{grpc_port}", "pdf": pdf}


@SERVED
def test_http_refuses_unknown_and_bad_options_with_422(served):
    data = served["pdf"].read_bytes()
    with httpx.Client(base_url=served["http"], timeout=60) as c:
        for path, query, words in (
            ("/v1/convert", "colour=red", "unknown option `colour`; accepted options: "),
            ("/v1/convert", "ocr=sometimes", "ocr must be auto, force or off, not 'sometimes'"),
            ("/v1/convert", "stream=true&format=md", "NDJSON, which is JSON: ask for format=json"),
            ("/v1/convert", "languages=eng%2Bklingon", "klingon not installed"),
            ("/v1/convert", "pages=9-12", "page 9 requested"),
            ("/v1/pages", "stream=true", "unknown option `stream`"),
        ):
            r = c.post(f"{path}?{query}", content=data)
            assert r.status_code == 422, (path, query, r.text)
            err = r.json()["error"]
            assert words in err["message"] and err["request_id"], err
        form = c.post("/v1/convert", files={"file": ("t.pdf", data)}, data={"images": "lots"})
        assert form.status_code == 422 and "images='lots'" in form.json()["error"]["message"]
        assert c.post("/v1/convert?ocr=off", content=b"").status_code == 400  # no file: not an option


@SERVED
def test_http_options_do_their_work_in_the_graph(served):
    with PagerouterHttpClient(served["http"], timeout=120) as client:
        forced = client.convert(served["pdf"], pages="1", ocr="force")
        off = client.convert(served["pdf"], pages="2", ocr="off")
        figure = client.convert_page(served["pdf"], 3, images=True)
    page = forced.pages[0]
    assert page.route == "ocr" and {b.engine for b in page.blocks} == {"rapidocr"}, page.blocks
    assert char_error_rate("Forced reading " + BORN[0], " ".join(b.text for b in page.blocks)) < 0.05
    assert "rapidocr" in forced.engines
    scan = off.pages[0]
    assert scan.status == "flagged" and "ocr_off" in scan.flags and not any(b.text.strip() for b in scan.blocks)
    assert "rapidocr" not in off.engines
    png = next(b for b in figure.blocks if b.role == "figure").image_png_base64
    img = Image.open(io.BytesIO(base64.b64decode(png)))
    assert img.size[0] == pytest.approx(300 * 150 / 72, abs=3) and img.size[1] == pytest.approx(200 * 150 / 72, abs=3)


@SERVED
def test_grpc_validates_options_and_carries_them(served):
    with PagerouterGrpcClient(served["grpc"], timeout=120) as client:
        for kw, words in (({"ocr": "sometimes"}, "ocr must be auto, force or off"),
                          ({"languages": ["klingon"]}, "klingon not installed")):
            for call in (client.convert, client.convert_streamed):
                with pytest.raises(PagerouterClientError) as exc:
                    call(served["pdf"], **kw)
                assert exc.value.status == "INVALID_ARGUMENT" and exc.value.code == "bad_request", exc.value
                assert words in exc.value.message and "t.pdf" in exc.value.message
        with pytest.raises(PagerouterClientError) as exc:
            client.convert_page(served["pdf"], 1, ocr="never")
        assert exc.value.status == "INVALID_ARGUMENT" and exc.value.code == "bad_request"
        doc = client.convert(served["pdf"], pages="1", ocr="force", languages=["eng", "deu"])
        figure = client.convert_page(served["pdf"], 3, images=True)
    assert [p.route for p in doc.pages] == ["ocr"] and {b.engine for b in doc.pages[0].blocks} == {"rapidocr"}
    assert any("ocr=force requested" in r for r in doc.pages[0].triage.reasons)
    png = next(b for b in figure.blocks if b.role == "figure").image_png_base64  # through the proto
    assert Image.open(io.BytesIO(base64.b64decode(png))).format == "PNG"


@SERVED
def test_openapi_documents_bodies_parameters_and_errors(served):
    spec = httpx.get(f"{served['http']}/openapi.json", timeout=30).json()
    convert, pages = spec["paths"]["/v1/convert"]["post"], spec["paths"]["/v1/pages"]["post"]
    params = {p["name"]: p for p in convert["parameters"]}
    assert set(OPTIONS) <= set(params), sorted(params)
    assert params["ocr"]["schema"]["enum"] == ["auto", "force", "off"]
    assert params["format"]["schema"]["enum"] == ["json", "md"]
    assert params["stream"]["schema"]["type"] == params["images"]["schema"]["type"] == "boolean"
    assert "array" in json.dumps(params["languages"]["schema"]) and params["ocr"]["description"]
    body = convert["requestBody"]["content"]
    multipart = body["multipart/form-data"]["schema"]
    assert multipart["properties"]["file"]["format"] == "binary" and "file" in multipart["required"]
    assert set(OPTIONS) <= set(multipart["properties"])
    assert {"application/pdf", "image/*"} <= set(body)
    for status in ("401", "413", "422", "429", "503", "504"):
        assert "error" in json.dumps(convert["responses"][status]), status
    page_params = {p["name"]: p for p in pages["parameters"]}
    assert page_params["page"]["schema"]["type"] == "integer" and "stream" not in page_params
