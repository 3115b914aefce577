"""Limits, back-pressure and "nothing lost" against a real `pagerouter serve` (HTTP and gRPC).

One `pagerouter serve` subprocess for the module: OCR off, tiny limits, a short request budget,
and slow pages from the isolation workers' test-only fault hook (`sleep0.8@page`: every page takes
0.8 s more to triage, a test double for hard pages), so concurrency and timeouts are exercised
on purpose. Requests come from distinct loopback addresses (127.0.0.x) where the per-client
limit must not interfere.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import httpx
import pymupdf
import pytest
import yaml

from pagerouter.clients.errors import PagerouterClientError
from pagerouter.clients.grpc_client import PagerouterGrpcClient
from pagerouter.bench import synth
from pagerouter.isolation import FAULT_ENV
from tests.serve_fixtures import free_ports, pagerouter_serve_process

REPO = Path(__file__).resolve().parent.parent
SLOW_S = 0.8
REQUEST_TIMEOUT_S = 9.0
MARGIN_S = 2.0
CONFIG = {
    "ocr": {"enabled": False},
    "limits": {"max_pages": 14, "max_page_side_pt": 3000, "max_page_chars": 3000,
               "max_requests_per_client": 2, "max_in_flight_requests": 8, "retry_after_s": 2},
    "serve": {"escalation_timeout_s": 1, "escalation_timeout_bulk_s": 1, "page_timeout_s": 2,
              "deadline_margin_s": MARGIN_S, "request_timeout_s": REQUEST_TIMEOUT_S, "max_queued_requests": 1,
              "ingress": {"max_ongoing_requests": 3, "num_cpus": 0.1}},
}
PROSE = "A page of plain prose that the text layer reads without any trouble at all, sentence after sentence. "


def SERVED(fn):  # noqa: N802 - a marker stack
    return pytest.mark.serve(pytest.mark.slow(fn))


def _pdf(path: Path, pages: int, size=synth.A4) -> Path:
    doc = pymupdf.open()
    for i in range(pages):
        synth.add_text_page(doc, [f"Page {i + 1}. " + PROSE * 3], size=size)
    doc.save(path)
    doc.close()
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("limits")
    cfg = d / "serve.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    ray_tmp = tempfile.mkdtemp(prefix="prlim", dir="/tmp")  # short: Ray's unix sockets live there
    http_port, grpc_port = free_ports(2)
    env = {**os.environ, "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": ray_tmp,
           "PYTHONPATH": str(REPO), FAULT_ENV: f"sleep{SLOW_S}@page"}
    env.pop("PAGEROUTER_API_KEY", None)
    env.pop("PAGEROUTER_API_KEY_FILE", None)
    info = {"http": f"http://127.0.0.1:{http_port}", "grpc": f"127.0.0.1:{grpc_port}", "dir": d,
            "small": _pdf(d / "small.pdf", 2), "long": _pdf(d / "long.pdf", 14), "many": _pdf(d / "many.pdf", 15),
            "poster": _pdf(d / "poster.pdf", 1, size=(3100, 600)), "err": d / "serve.err"}
    with pagerouter_serve_process(d, cfg, env, http_port, grpc_port, ray_tmp):
        yield info


def _post(url: str, pdf: Path, source: str = "127.0.0.1", **params) -> httpx.Response:
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=60) as c:
        return c.post(url + "/v1/convert", content=pdf.read_bytes(), params={"filename": pdf.name, **params})


@SERVED
def test_limits_exceeded_over_http_grpc_and_cli(served):
    r = _post(served["http"], served["many"])
    assert r.status_code == 413, r.text
    err = r.json()["error"]
    assert err["code"] == "too_many_pages" and "many.pdf" in err["message"] and "limit of 14" in err["message"]
    with PagerouterGrpcClient(served["grpc"], timeout=60) as client:
        with pytest.raises(PagerouterClientError) as exc:
            client.convert(served["many"])
    assert exc.value.status == "RESOURCE_EXHAUSTED" and "limit of 14" in exc.value.message
    # A page over the page-box limit fails alone, with file and page, before it is read.
    r = _post(served["http"], served["poster"])
    page = r.json()["pages"][0]
    assert r.status_code == 200 and page["status"] == "failed"
    assert "poster.pdf: page 1" in page["error"] and "page too large" in page["error"]
    cli = subprocess.run(
        [sys.executable, "-m", "pagerouter.cli.main", "client", "convert", str(served["many"]), "--url", served["http"]],
        capture_output=True, text=True, cwd=REPO, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    lines = [ln for ln in cli.stderr.splitlines() if ln.strip()]
    assert cli.returncode != 0 and len(lines) == 1 and "many.pdf" in lines[0] and "limit of 14" in lines[0]


@SERVED
def test_per_client_limit_and_back_pressure(served):
    # One client, three at once (0.3 s apart: Serve's router may refuse simultaneous arrivals at its
    # queue bound), two allowed: the third is refused by the ingress with 429 + Retry-After.
    def staggered(i):
        time.sleep(0.3 * i)
        return _post(served["http"], served["small"])

    with ThreadPoolExecutor(3) as pool:
        same = list(pool.map(staggered, range(3)))
    codes = sorted(r.status_code for r in same)
    assert codes.count(200) >= 2 and 429 in codes, codes
    refused = next(r for r in same if r.status_code == 429)
    assert refused.headers["retry-after"] == "2" and refused.json()["error"]["code"] == "too_many_requests"
    # Nine clients at once against an ingress that runs 3 and queues 1: the rest get 503 + Retry-After
    # at once instead of waiting (none is refused as "the same client"), and the admitted ones succeed.
    t0 = time.monotonic()
    with ThreadPoolExecutor(9) as pool:
        many = list(pool.map(lambda i: _post(served["http"], served["small"], f"127.0.0.{20 + i}"), range(9)))
    codes = sorted(r.status_code for r in many)
    # Serve's router may refuse a few more than strictly necessary when requests arrive together.
    assert set(codes) <= {200, 503} and codes.count(200) >= 1 and 503 in codes, codes
    busy = next(r for r in many if r.status_code == 503)
    assert busy.headers.get("retry-after") == "2", busy.headers
    assert all(len(r.json()["pages"]) == 2 for r in many if r.status_code == 200)
    assert time.monotonic() - t0 < 30


@SERVED
def test_stream_cut_by_the_request_budget_names_the_missing_pages(served):
    """14 pages x 0.8 s do not fit the 7 s the ingress has: the stream ends with an error line."""
    with httpx.Client(timeout=60) as c:
        with c.stream("POST", served["http"] + "/v1/convert", content=served["long"].read_bytes(),
                      params={"filename": "long.pdf", "stream": "true"}) as r:
            assert r.status_code == 200
            lines = [__import__("json").loads(ln) for ln in r.iter_lines() if ln.strip()]
    pages = [ln["page"]["number"] for ln in lines if ln["type"] == "page"]
    last = lines[-1]
    assert last["type"] == "error" and last["error"]["code"] == "timeout", last
    assert 0 < len(pages) < 14 and last["missing_pages"] == [n for n in range(1, 15) if n not in pages]
    assert f"pages not delivered: {pages[-1] + 1}-14" in last["error"]["message"]
    # The shipped client prints that line (not "cannot reach the server").
    cli = subprocess.run(
        [sys.executable, "-m", "pagerouter.cli.main", "client", "convert", str(served["long"]), "--url", served["http"],
         "--stream"], capture_output=True, text=True, cwd=REPO, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert cli.returncode != 0 and "pages not delivered" in cli.stderr and "cannot reach" not in cli.stderr, cli.stderr


@SERVED
def test_timeouts_answer_504_json_and_deadline_exceeded(served):
    r = _post(served["http"], served["long"], "127.0.0.3")
    assert r.status_code == 504 and r.headers["content-type"].startswith("application/json"), (r.status_code, r.text)
    err = r.json()["error"]
    assert err["code"] == "timeout" and "long.pdf" in err["message"] and "pages not converted" in err["message"]
    with PagerouterGrpcClient(served["grpc"], timeout=60) as client:
        got = []
        with pytest.raises(PagerouterClientError) as exc:
            for item in client.stream(served["long"]):
                got.append(item)
    assert exc.value.status == "DEADLINE_EXCEEDED" and "pages not delivered" in exc.value.message
    assert 0 < len(got) < 14
    assert exc.value.status != grpc.StatusCode.OK.name


@SERVED
def test_the_shipped_clients_finish_every_file_the_server_first_refuses(served):
    """Four files at once from one client over each protocol: the server admits two (the per-client
    limit) and refuses the rest with 429 / RESOURCE_EXHAUSTED + retry-after 2 (or the queue's 503 /
    UNAVAILABLE); the clients wait what the server asks and come back, so every file converts."""
    from pagerouter.clients.http_client import PagerouterHttpClient

    def over_http(i):
        with PagerouterHttpClient(served["http"], timeout=60) as c:
            return c.convert(served["small"], filename=f"h{i}.pdf")

    def over_grpc(i):
        with PagerouterGrpcClient(served["grpc"], timeout=60) as c:
            return c.convert(served["small"], filename=f"g{i}.pdf")

    for send in (over_http, over_grpc):
        t0 = time.monotonic()
        with ThreadPoolExecutor(4) as pool:
            docs = list(pool.map(send, range(4)))
        assert [len(d.pages) for d in docs] == [2] * 4 and all(p.status == "ok" for d in docs for p in d.pages)
        # two of them at least were refused and waited the 2 s Retry-After before their own 2 x 0.8 s pages
        assert time.monotonic() - t0 >= CONFIG["limits"]["retry_after_s"] + 2 * SLOW_S, send.__name__
