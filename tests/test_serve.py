"""The Ray Serve graph, for real: Ray Serve, HTTP and gRPC on loopback, real engines.

One Serve session for the whole module (tests/serve_fixtures.py); every client call has a
timeout. Order matters only for the LargeReader scale-to-zero test, which waits for zero first.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import yaml

from pagerouter.clients.errors import PagerouterClientError
from pagerouter.clients.grpc_client import AsyncPagerouterGrpcClient, PagerouterGrpcClient
from pagerouter.clients.http_client import AsyncPagerouterHttpClient, PagerouterHttpClient
from tests.serve_fixtures import (
    CALL_TIMEOUT_S,
    GPU_ESCALATION_TIMEOUT_S,
    REPO,
    build_escalating_pdf,
    build_mixed_pdf,
    build_scans_pdf,
    comparable,
    main_app_config,
    wait_for,
)

pytest_plugins = ["tests.serve_fixtures"]
pytestmark = [pytest.mark.serve, pytest.mark.slow]


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("serve_docs")
    cfg = d / "pagerouter.yaml"
    cfg.write_text(yaml.safe_dump(main_app_config()))
    return {
        "mixed": build_mixed_pdf(d / "mixed.pdf"),
        "escalating": build_escalating_pdf(d / "escalating.pdf"),
        "scans": build_scans_pdf(d / "scans.pdf", 3),
        "config": cfg,
    }


@pytest.fixture(scope="module")
def http(serve_session):
    with PagerouterHttpClient(serve_session.http_url, timeout=CALL_TIMEOUT_S) as c:
        yield c


@pytest.fixture(scope="module")
def grpc_client(serve_session):
    with PagerouterGrpcClient(serve_session.grpc_target, timeout=CALL_TIMEOUT_S) as c:
        yield c


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pagerouter.cli.main", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


# -- one document, five ways ----------------------------------------------------------------
def test_same_document_over_http_stream_grpc_and_in_process(docs, http, grpc_client):
    pdf = docs["mixed"]
    via_http = http.convert(pdf, filename=str(pdf))
    assert [p.route for p in via_http.pages] == ["text_layer", "ocr", "blank", "text_layer"]
    assert all(p.status == "ok" for p in via_http.pages), [p.flags for p in via_http.pages]
    assert "4711" in " ".join(b.text for b in via_http.pages[1].blocks)
    streamed = list(http.stream(pdf, filename=str(pdf)))
    assert [type(i).__name__ for i in streamed] == ["Page"] * 4 + ["Document"]
    via_http_stream = http.convert_streamed(pdf, filename=str(pdf))
    via_grpc = grpc_client.convert(pdf, filename=str(pdf))
    via_grpc_stream = grpc_client.convert_streamed(pdf, filename=str(pdf))
    cli = _cli("convert", str(pdf), "--format", "json", "-q", "--config", str(docs["config"]))
    assert cli.returncode == 0, cli.stderr
    from pagerouter.model import Document

    in_process = Document.model_validate_json(cli.stdout)
    expected = comparable(via_http)
    for name, other in [("http stream", via_http_stream), ("grpc", via_grpc), ("grpc stream", via_grpc_stream),
                        ("in-process", in_process)]:
        assert comparable(other) == expected, f"{name} differs from HTTP"


def test_client_cli_prints_what_convert_prints(serve_session, docs):
    pdf = str(docs["mixed"])
    local = _cli("convert", pdf, "-q", "--config", str(docs["config"]))
    over_http = _cli("client", "convert", pdf, "--url", serve_session.http_url, "--timeout", "120")
    over_grpc = _cli("client", "convert", pdf, "--grpc", serve_session.grpc_target, "--stream", "--timeout", "120")
    assert local.returncode == over_http.returncode == over_grpc.returncode == 0, over_grpc.stderr
    assert "Invoice" in local.stdout
    assert over_http.stdout == local.stdout
    assert over_grpc.stdout == local.stdout


def test_single_page_http_and_grpc(docs, http, grpc_client):
    pdf = docs["mixed"]
    whole = http.convert(pdf, filename=str(pdf))
    page = http.convert_page(pdf, page=2, filename=str(pdf))
    assert page.number == 2 and page.route == "ocr"
    assert [b.text for b in page.blocks] == [b.text for b in whole.pages[1].blocks]
    assert http.last_request_id
    gpage = grpc_client.convert_page(pdf, page=4, filename=str(pdf))
    assert gpage.number == 4 and gpage.model_dump(exclude={"timings"}) == whole.pages[3].model_dump(exclude={"timings"})
    assert grpc_client.last_request_id


def test_async_clients_match_sync(serve_session, docs, http):
    pdf = docs["mixed"]
    expected = comparable(http.convert(pdf, filename=str(pdf)))

    async def run():
        async with AsyncPagerouterHttpClient(serve_session.http_url, timeout=CALL_TIMEOUT_S) as h, \
                AsyncPagerouterGrpcClient(serve_session.grpc_target, timeout=CALL_TIMEOUT_S) as g:
            return await asyncio.gather(
                h.convert(pdf, filename=str(pdf)), h.convert_streamed(pdf, filename=str(pdf)),
                g.convert(pdf, filename=str(pdf)), g.convert_streamed(pdf, filename=str(pdf)),
            )

    for doc in asyncio.run(asyncio.wait_for(run(), CALL_TIMEOUT_S)):
        assert comparable(doc) == expected


# -- batching -------------------------------------------------------------------------------
def test_concurrent_requests_are_batched(serve_session, docs):
    layout = serve_session.handle("Layout")
    reader = serve_session.handle("SmallReader")
    before_l = layout.stats.remote().result(timeout_s=30)
    before_r = reader.stats.remote().result(timeout_s=30)
    pdf = docs["scans"]

    def one(_):
        with PagerouterHttpClient(serve_session.http_url, timeout=CALL_TIMEOUT_S) as c:
            return c.convert(pdf)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(4)))
    assert all(p.route == "ocr" and p.status == "ok" for d in results for p in d.pages)
    texts = {tuple(b.text for p in d.pages for b in p.blocks) for d in results}
    assert len(texts) == 1, "batching changed what was read"

    def grown(before, after):
        return {int(k): v - before["batch_sizes"].get(k, 0) for k, v in after["batch_sizes"].items()
                if v - before["batch_sizes"].get(k, 0) > 0}

    new_l = grown(before_l, layout.stats.remote().result(timeout_s=30))
    new_r = grown(before_r, reader.stats.remote().result(timeout_s=30))
    assert sum(k * v for k, v in new_l.items()) == 12  # 4 requests x 3 pages, each detected once
    assert max(new_l) > 1, f"layout never saw a batch > 1: {new_l}"
    assert max(new_r) > 1, f"small reader never saw a batch > 1: {new_r}"


# -- the escalation tier --------------------------------------------------------------------
def test_large_reader_wakes_from_zero_and_sleeps_again(serve_session, docs, http):
    wait_for(lambda: serve_session.replicas("LargeReader") == 0, 60, "LargeReader at zero replicas")
    t0 = time.monotonic()
    doc = http.convert(docs["escalating"])
    woke_in = time.monotonic() - t0
    p1, p2, p3 = doc.pages
    assert p1.route == "text_layer" and p1.status == "ok"
    assert "escalate" in p2.timings, "the repeated-line scan should have been escalated"
    names = {c.name for c in p2.checks}
    assert "escalation_timeout" not in names and "escalation_error" not in names, p2.checks
    assert p3.status == "ok" and "escalate" not in p3.timings
    assert serve_session.handle("LargeReader").stats.remote().result(timeout_s=30)["calls"] >= 1
    wait_for(lambda: serve_session.replicas("LargeReader") == 0, 90, "LargeReader back at zero after idling")
    print(f"\nescalated document in {woke_in:.1f} s (LargeReader cold start included)")


def test_unschedulable_large_reader_falls_back_flagged(serve_session, docs):
    """The `gpu` app's LargeReader asks for a GPU: escalations time out, the page keeps its
    first reading, flagged; other pages are unaffected and stream out before it (HTTP, gRPC).
    The wait fields travel: over HTTP an explicit 60 s is capped at the interactive bound; over
    gRPC a bulk request asks for a shorter explicit wait, which is used."""
    from pagerouter.model import Page

    def arrivals(items) -> tuple[list, dict[int, float]]:
        t0, got, when = time.monotonic(), [], {}
        for item in items:
            got.append(item)
            if isinstance(item, Page):
                when[item.number] = time.monotonic() - t0
        return got, when

    with PagerouterHttpClient(serve_session.gpu_http_url, timeout=CALL_TIMEOUT_S) as c:
        http_items, http_when = arrivals(c.stream(docs["escalating"], escalation_wait_s=60))
    grpc_wait_s = GPU_ESCALATION_TIMEOUT_S - 1
    with PagerouterGrpcClient(serve_session.grpc_target, timeout=CALL_TIMEOUT_S, application="gpu") as g:
        grpc_items, grpc_when = arrivals(g.stream(docs["escalating"], wait="bulk", escalation_wait_s=grpc_wait_s))
    from pagerouter.clients.http_client import assemble

    for items, when, bound, why in ((http_items, http_when, GPU_ESCALATION_TIMEOUT_S, "capped at the interactive"),
                                    (grpc_items, grpc_when, grpc_wait_s, "requested wait, bulk bound 900 s")):
        p1, p2, p3 = assemble(items).pages
        assert p2.status == "flagged" and "escalation_timeout" in p2.flags, p2.flags
        timeout_check = next(c for c in p2.checks if c.name == "escalation_timeout")
        assert timeout_check.threshold == bound and why in timeout_check.reason, timeout_check
        assert p2.timings["escalate"] >= bound * 0.9
        assert p2.blocks, "the small reader's reading is kept"
        assert p1.status == "ok" and p1.route == "text_layer" and not p1.flags
        assert p3.status == "ok" and not p3.flags, (p3.error, p3.flags)
        # streamed as finished: page 1 is out long before page 2's escalation gives up
        assert when[1] < when[2] - bound * 0.5, when
        assert when[2] < bound + 60
    assert serve_session.replicas("LargeReader", app="gpu") == 0


# -- bad input ------------------------------------------------------------------------------
def _error_of(resp: httpx.Response) -> dict:
    body = resp.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "request_id"}, body
    assert body["error"]["request_id"] and body["error"]["request_id"] == resp.headers["x-request-id"]
    return body["error"]


@pytest.mark.parametrize(
    "path, kwargs, status, code",
    [
        ("/v1/convert", {"content": b""}, 400, "empty_upload"),
        ("/v1/convert", {"content": b"this is not a pdf at all"}, 422, "bad_input"),
        ("/v1/convert", {"content": b"%PDF-1.7\n broken beyond repair"}, 422, "bad_input"),
        ("/v1/convert?pages=9-12", {"file": "mixed"}, 422, "bad_pages"),
        ("/v1/convert?format=docx", {"file": "mixed"}, 422, "bad_request"),
        ("/v1/convert?stream=maybe", {"file": "mixed"}, 422, "bad_request"),
        ("/v1/convert?wait=forever", {"file": "mixed"}, 422, "bad_request"),
        ("/v1/convert?colour=red", {"file": "mixed"}, 422, "bad_request"),
        ("/v1/convert?stream=true&format=md", {"file": "mixed"}, 422, "bad_request"),
        ("/v1/convert?stream=true", {"content": b"GIF89a not really"}, 422, "bad_input"),
        ("/v1/pages?page=0", {"file": "mixed"}, 422, "bad_pages"),
        ("/v1/pages?page=-3", {"file": "mixed"}, 422, "bad_pages"),
        ("/v1/pages?page=two", {"file": "mixed"}, 422, "bad_request"),
        ("/v1/pages?page=99", {"file": "mixed"}, 422, "bad_pages"),
        ("/v1/nothing", {"content": b"x"}, 404, "not_found"),
    ],
)
def test_bad_uploads_are_4xx_with_one_error_shape(serve_session, docs, path, kwargs, status, code):
    content = docs["mixed"].read_bytes() if kwargs.get("file") else kwargs["content"]
    resp = httpx.post(serve_session.http_url + path, content=content, timeout=CALL_TIMEOUT_S)
    assert resp.status_code == status, resp.text
    assert _error_of(resp)["code"] == code


def test_bad_multipart_and_grpc_bad_input(serve_session, grpc_client):
    resp = httpx.post(serve_session.http_url + "/v1/convert", data={"pages": "1"}, files={"other": ("x", b"")},
                      timeout=CALL_TIMEOUT_S)
    assert resp.status_code == 400 and _error_of(resp)["code"] in ("empty_upload", "bad_request")
    with pytest.raises(PagerouterClientError) as err:
        grpc_client.convert(b"not a pdf", filename="junk.bin")
    assert err.value.status == "INVALID_ARGUMENT" and err.value.code == "bad_input"
    assert "junk.bin" in err.value.message
    with pytest.raises(PagerouterClientError) as err:
        list(grpc_client.stream(b"", filename="empty.pdf"))
    assert err.value.status == "INVALID_ARGUMENT"


def test_grpc_single_page_below_one_is_invalid_argument(serve_session, docs, grpc_client):
    """Page -3 is refused, not read as the range "-3" (pages 1-3) and answered with page 1."""
    with pytest.raises(PagerouterClientError) as err:
        grpc_client.convert_page(docs["mixed"], page=-3, filename="mixed.pdf")
    assert err.value.status == "INVALID_ARGUMENT" and err.value.code == "bad_pages"
    assert "page -3" in err.value.message


def test_multipart_upload_with_form_options(serve_session, docs):
    pdf = docs["mixed"]
    resp = httpx.post(serve_session.http_url + "/v1/convert", files={"file": ("mixed.pdf", pdf.read_bytes(),
                      "application/pdf")}, data={"pages": "1,4", "format": "md"}, timeout=CALL_TIMEOUT_S)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("text/markdown")
    assert "Served" in resp.text and "Invoice" not in resp.text


def test_health_and_effective_config(serve_session):
    h = httpx.get(serve_session.http_url + "/healthz", timeout=30)
    assert h.status_code == 200 and h.json()["status"] == "ok"
    cfg = httpx.get(serve_session.http_url + "/v1/config", timeout=30).json()
    assert cfg["ocr"]["pages_in_flight"] == 8
    assert cfg["serve"]["escalation_timeout_s"] == 90
    assert cfg["serve"]["escalation_timeout_bulk_s"] == 900
    gpu_cfg = httpx.get(serve_session.gpu_http_url + "/v1/config", timeout=30).json()
    assert gpu_cfg["serve"]["escalation_timeout_s"] == GPU_ESCALATION_TIMEOUT_S


# -- observability --------------------------------------------------------------------------
def test_stage_spans_carry_page_number_and_route(serve_session, docs, http):
    http.convert(docs["mixed"])
    spans_dir = Path(serve_session.session_dir) / "logs" / "serve" / "spans"

    def stage_spans():
        found = {}
        for f in spans_dir.glob("*.json"):
            text = f.read_text(errors="replace")
            for chunk in text.split("\n}\n"):
                if '"name": "pagerouter.' not in chunk:
                    continue
                try:
                    span = json.loads(chunk + "\n}")
                except json.JSONDecodeError:
                    continue
                found.setdefault(span["name"], []).append(span["attributes"])
        return found if {"pagerouter.triage", "pagerouter.layout", "pagerouter.read"} <= set(found) else None

    spans = wait_for(stage_spans, 30, "stage spans in Serve's span files")
    layout = spans["pagerouter.layout"]
    assert all(a["page.route"] in ("ocr", "mixed") and isinstance(a["page.number"], int) for a in layout)
    assert any(a["page.number"] == 2 for a in layout)
    assert any(a["page.route"] == "text_layer" for a in spans["pagerouter.triage"])


def test_custom_metrics_are_exported(serve_session, docs, http):
    http.convert(docs["mixed"])

    def scrape():
        try:
            text = httpx.get(serve_session.metrics_url, timeout=10).text
        except httpx.HTTPError:
            return None
        wanted = ("pagerouter_pages", "pagerouter_stage_latency_s", "pagerouter_batch_size")
        return text if all(w in text for w in wanted) else None

    text = wait_for(scrape, 60, "pagerouter metrics on Ray's metrics endpoint", interval=2)
    pages = [ln for ln in text.splitlines() if ln.startswith("ray_pagerouter_pages") and 'route="ocr"' in ln]
    assert pages and any('status="ok"' in ln for ln in pages)
    assert 'stage="layout"' in text and 'stage="triage"' in text


def test_pagerouter_serve_command_serves_and_stops_on_ctrl_c(tmp_path, docs):
    """`pagerouter serve` in a subprocess: its own local Ray, answers HTTP, exits 0 on SIGINT."""
    import signal

    from tests.serve_fixtures import free_ports

    http_port, grpc_port = free_ports(2)
    cfg = tmp_path / "serve.yaml"
    cfg.write_text(yaml.safe_dump({"ocr": {"enabled": False}}))
    env = {**__import__("os").environ, "RAY_ADDRESS": "local", "RAY_AUTH_MODE": "disabled"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pagerouter.cli.main", "serve", "--config", str(cfg), "--http-port", str(http_port),
         "--grpc-port", str(grpc_port), "--num-cpus", "4"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        def healthy():
            try:
                return httpx.get(f"http://127.0.0.1:{http_port}/healthz", timeout=5).status_code == 200
            except httpx.HTTPError:
                assert proc.poll() is None, proc.stderr.read()[-2000:]
                return False

        wait_for(healthy, 300, "pagerouter serve to answer /healthz", interval=1)
        with PagerouterGrpcClient(f"127.0.0.1:{grpc_port}", timeout=60) as g:
            page = g.convert_page(docs["mixed"], page=1)
        assert page.route == "text_layer" and page.status == "ok"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err[-2000:]
        assert "serving in" in err and "stopping" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
