"""The ingress triages small requests itself (deployments/fast_path.py, issue 23).

A request naming at most `serve.ingress_triage_max_pages` pages of a small upload is opened
and triaged in the ingress's own isolation workers, not through the Triage deployment: the
page must be exactly what the in-process Converter gives, its problems worded the same, and
the path it took visible in the ingress's counters (never in timing).
The first tests need no Ray (an IngressCore with no Triage handle at all: any call to it would
fail); the last one runs the real graph over HTTP and gRPC (tests/serve_fixtures.py).
"""

from __future__ import annotations

import asyncio

import pymupdf
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from pagerouter.deployments.fast_path import bounded_page_count, triaged_in_ingress
from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.config.serve import ServeConfig

pytest_plugins = ["tests.serve_fixtures"]  # serve_session, for the served test at the end

PARA = "Born-digital text of an ordinary report page, read from its text layer by the ingress. " * 4


def _text_pdf(pages: int, password: str | None = None) -> bytes:
    doc = pymupdf.open()
    for i in range(pages):
        synth.add_text_page(doc, [PARA, f"Closing sentence of page {i + 1}."], title=f"Section {i + 1}")
    if password:
        data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw=password, user_pw=password)
    else:
        data = doc.tobytes()
    doc.close()
    return data


def _cfg() -> PagerouterConfig:
    return PagerouterConfig()


def _core(cfg: PagerouterConfig | None = None, triage=None):
    from pagerouter.deployments.ingress import IngressCore

    return IngressCore((cfg or _cfg()).model_dump(), triage, None, None, None)


def _same(a, b) -> bool:
    return a.model_dump(exclude={"timings"}) == b.model_dump(exclude={"timings"})


def test_bounded_page_count():
    assert [bounded_page_count(s) for s in ("1", " 3 ", "1-3,7", "-3", "2,2")] == [1, 1, 4, 3, 2]
    for open_ended in (None, "", "5-", "1,4-", "x", "1-2-3"):
        assert bounded_page_count(open_ended) is None, open_ended


def test_which_requests_the_ingress_triages():
    s = ServeConfig(ingress_triage_max_pages=4, ingress_triage_max_mb=1)
    assert triaged_in_ingress(s, 10_000, "1") and triaged_in_ingress(s, 10_000, "1-4")
    assert not triaged_in_ingress(s, 10_000, "1-5")  # too many pages
    assert not triaged_in_ingress(s, 10_000, None)  # a whole document: any length
    assert not triaged_in_ingress(s, 2 * 1024 * 1024, "1")  # too large an upload
    assert not triaged_in_ingress(ServeConfig(ingress_triage_max_pages=0), 10, "1")  # turned off


def test_ingress_triaged_page_is_the_in_process_page():
    """No Triage handle exists here: the page can only have come from the ingress's own walk."""
    from pagerouter.convert.converter import Converter

    data = _text_pdf(3)
    core = _core()
    with Converter(_cfg()) as conv:
        expected = conv.convert(data, name="report.pdf", pages="2")
    doc = asyncio.run(core.collect(data, "report.pdf", None, "2"))
    assert [p.number for p in doc.pages] == [2]
    assert doc.pages[0].route == "text_layer" and doc.pages[0].status == "ok"
    assert _same(doc.pages[0], expected.pages[0])
    assert "Closing sentence of page 2." in " ".join(b.text for b in doc.pages[0].blocks)
    assert core.stats() == {"triage": {"ingress": 1}}


def test_ingress_triage_problems_name_the_file_like_the_triage_deployment():
    core = _core()
    bad = asyncio.run(core.collect(b"%PDF-1.7 truncated", "broken.pdf", None, "1"))
    assert bad.code == "bad_input" and bad.message.startswith("broken.pdf:")
    past = asyncio.run(core.collect(_text_pdf(2), "two.pdf", None, "3"))
    assert past.code == "bad_pages" and "two.pdf" in past.message and "2 pages" in past.message
    locked = asyncio.run(core.collect(_text_pdf(1, password="s3cret"), "locked.pdf", None, "1"))
    assert locked.code == "bad_input" and "locked.pdf" in locked.message
    assert "--password" not in locked.message  # worded for an API caller
    ok = asyncio.run(core.collect(_text_pdf(1, password="s3cret"), "locked.pdf", "s3cret", "1"))
    assert ok.pages[0].status == "ok"
    assert core.stats() == {"triage": {"ingress": 4}}


def test_http_page_route_answers_without_the_triage_deployment():
    core = _core()
    api = FastAPI()
    from pagerouter.deployments.http_errors import install_error_handlers

    install_error_handlers(api)
    api.router.add_route("/v1/pages", core.convert_page_http, methods=["POST"])
    data = _text_pdf(2)
    with TestClient(api, raise_server_exceptions=False) as client:
        r = client.post("/v1/pages?page=2&filename=memo.pdf", content=data)
        assert r.status_code == 200, r.text
        assert r.json()["number"] == 2 and r.json()["route"] == "text_layer" and r.json()["status"] == "ok"
        r = client.post("/v1/pages?page=7&filename=memo.pdf", content=data)
        assert r.status_code == 422 and r.json()["error"]["code"] == "bad_pages"
        assert "memo.pdf" in r.json()["error"]["message"]
    assert core.stats() == {"triage": {"ingress": 2}}


class _RecordingTriage:
    """A Triage handle that records the calls it gets and streams nothing useful."""

    def __init__(self):
        self.calls: list[tuple] = []
        self.outcomes = self

    def options(self, stream: bool):
        return self

    def remote(self, *args):
        from pagerouter.wire.items import InputProblem

        self.calls.append(args)
        return _OneItemStream(InputProblem("bad_input", "from the Triage deployment", "x.pdf"))


class _OneItemStream:
    def __init__(self, item):
        self.items = [item]

    def __aiter__(self):
        return self

    async def __anext__(self):
        if not self.items:
            raise StopAsyncIteration
        return self.items.pop()

    def cancel(self) -> None:
        pass


def test_whole_documents_and_long_selections_go_to_the_triage_deployment():
    triage = _RecordingTriage()
    core = _core(triage=triage)
    data = _text_pdf(6)
    for pages in (None, "1-5", "2-"):
        got = asyncio.run(core.collect(data, "long.pdf", None, pages))
        assert got.message == "from the Triage deployment"
    assert [c[3] for c in triage.calls] == [None, "1-5", "2-"]
    cfg = _cfg()
    cfg.serve.ingress_triage_max_pages = 0  # turned off: even one page goes to Triage
    off = _core(cfg, triage=triage)
    assert asyncio.run(off.collect(data, "long.pdf", None, "1")).message == "from the Triage deployment"
    assert core.stats() == {"triage": {"deployment": 3}} and off.stats() == {"triage": {"deployment": 1}}


def test_first_health_check_warms_both_triage_paths_once():
    """The first walk through the Triage deployment cost ~1 s: Serve's first health check pays it."""
    triage = _RecordingTriage()
    core = _core(triage=triage)

    async def checks():
        await core.check_health()
        await core.check_health()  # warms once, never again
        await core._warming

    asyncio.run(checks())
    assert [c[1] for c in triage.calls] == ["warm-up.pdf"]
    assert core._local_pages is not None and core._local_pages.started >= 1  # the ingress's own workers too
    assert core.stats() == {"triage": {}}  # a warm-up is no request


# -- the real graph ---------------------------------------------------------------------------
@pytest.mark.serve
@pytest.mark.slow
def test_served_born_digital_page_takes_one_hop_over_http_and_grpc(serve_session, tmp_path):
    from pagerouter.clients.grpc_client import PagerouterGrpcClient
    from pagerouter.clients.http_client import PagerouterHttpClient
    from pagerouter.convert.converter import Converter
    from pagerouter.render.output import to_markdown
    from tests.serve_fixtures import CALL_TIMEOUT_S, main_app_config

    data = _text_pdf(3)
    cfg = PagerouterConfig.model_validate(main_app_config())
    with Converter(cfg) as conv:
        local = conv.convert(data, name="report.pdf", pages="2")
    ingress = serve_session.handle("Ingress")
    before = ingress.stats.remote().result(timeout_s=CALL_TIMEOUT_S)["triage"]
    with PagerouterHttpClient(serve_session.http_url, timeout=CALL_TIMEOUT_S) as h, \
            PagerouterGrpcClient(serve_session.grpc_target, timeout=CALL_TIMEOUT_S) as g:
        pages = [h.convert_page(data, 2, filename="report.pdf"), g.convert_page(data, 2, filename="report.pdf")]
        md = h.convert_markdown(data, filename="report.pdf", pages="2")
        whole = h.convert(data, filename="report.pdf")  # a whole document: through Triage
    after = ingress.stats.remote().result(timeout_s=CALL_TIMEOUT_S)["triage"]
    for page in pages:
        assert page.route == "text_layer" and page.status == "ok"
        assert _same(page, local.pages[0])
    assert md == to_markdown(local, cfg.output)
    assert _same(whole.pages[1], local.pages[0])
    # Ingress replicas may be several: the counters of the one that answered moved; sum over
    # the replica we asked is enough when there is one (the test app runs one ingress).
    assert after.get("ingress", 0) - before.get("ingress", 0) == 3, (before, after)
    assert after.get("deployment", 0) - before.get("deployment", 0) == 1, (before, after)
