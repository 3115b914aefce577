"""Limits, deadlines and retries as plain logic (no Ray): config checks of the timeouts, the page
limits through the in-process converter and the CLI, the ingress's admission, deadline and
stage-retry helpers, and the HTTP client's reading of a stream's closing error line."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest
from pydantic import ValidationError

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig, load_config

REPO = Path(__file__).resolve().parent.parent


# -- timeouts compose -----------------------------------------------------------------------
def test_default_timeouts_compose():
    s = PagerouterConfig().serve
    assert s.request_timeout_s > s.page_timeout_s + s.deadline_margin_s
    assert s.page_timeout_s > s.escalation_timeout_bulk_s
    assert s.ingress_deadline_s() == s.request_timeout_s - s.deadline_margin_s
    for f in sorted((REPO / "configs").glob("serve*.yaml")):
        c = load_config(f).serve  # every shipped config passes the check
        assert c.request_timeout_s is None or c.request_timeout_s > c.page_timeout_s


def test_request_budget_must_exceed_page_budget():
    with pytest.raises(ValidationError, match=r"request_timeout_s \(600\) must exceed page_timeout_s"):
        PagerouterConfig.model_validate({"serve": {"request_timeout_s": 600}})  # the old default
    with pytest.raises(ValidationError, match="1200 \\+ 5 = 1205"):
        PagerouterConfig.model_validate({"serve": {"request_timeout_s": 1205}})
    # a page's timeout covers its escalation: a long escalation bound needs no larger request budget
    PagerouterConfig.model_validate({"serve": {"escalation_timeout_s": 400, "request_timeout_s": 1500}})
    ok = PagerouterConfig.model_validate({"serve": {"request_timeout_s": None}}).serve
    assert ok.ingress_deadline_s() is None


# -- page limits, in process and in the CLI -------------------------------------------------
def _pdf(path: Path, pages: int = 1, size=synth.A4, words: int = 0) -> Path:
    doc = pymupdf.open()
    for i in range(pages):
        text = [f"Page {i + 1} says hello."] + ([" ".join(["word"] * words)] if words else [])
        synth.add_text_page(doc, text, size=size)
    doc.save(path)
    doc.close()
    return path


def _converter(**limits):
    from pagerouter.convert.converter import Converter

    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"enabled": False},
                                           "limits": limits})
    return Converter(cfg)


def test_page_count_limit_refuses_before_reading(tmp_path):
    from pagerouter.intake.inputs import InputError, PageLimitError

    pdf = _pdf(tmp_path / "many.pdf", pages=5)
    conv = _converter(max_pages=3)
    with pytest.raises(PageLimitError, match=r"many.pdf: 5 pages to convert, more than the limit of 3") as err:
        conv.convert(pdf)
    assert isinstance(err.value, InputError) and err.value.code == "too_many_pages"
    assert [p.number for p in conv.convert(pdf, pages="2-4").pages] == [2, 3, 4]  # a selection fits


def test_page_box_and_text_limits_fail_that_page_only(tmp_path):
    big = tmp_path / "big.pdf"
    doc = pymupdf.open()
    prose = "A normal page of plain prose that a text layer reads without any trouble at all. " * 4
    synth.add_text_page(doc, [prose])
    synth.add_text_page(doc, [prose], size=(14400 + 72, 800))  # 201 inches wide
    synth.add_text_page(doc, ["Lots of words. " + "word " * 600])
    doc.save(big)
    doc.close()
    out = _converter(max_page_side_pt=14400, max_page_chars=2000).convert(big)
    ok, poster, wordy = out.pages
    assert ok.status != "failed" and "normal page of plain prose" in " ".join(b.text for b in ok.blocks)
    assert poster.status == "failed" and "big.pdf: page 2" in poster.error and "page too large" in poster.error
    assert "14400 pt" in poster.error and not poster.blocks
    assert wordy.status == "failed" and "page 3" in wordy.error and "too much text" in wordy.error


def test_cli_names_file_for_too_many_pages(tmp_path):
    pdf = _pdf(tmp_path / "many.pdf", pages=4)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("ocr: {enabled: false}\nlimits: {max_pages: 2}\n")
    r = subprocess.run([sys.executable, "-m", "pagerouter.cli.main", "convert", str(pdf), "--config", str(cfg)],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "many.pdf" in lines[0] and "limit of 2" in lines[0], r.stderr


# -- ingress helpers ------------------------------------------------------------------------
def test_admission_bounds_clients_and_the_replica():
    from pagerouter.service.admission import Admission, Refused
    from pagerouter.config.limits import LimitsConfig

    adm = Admission(LimitsConfig(max_requests_per_client=2, max_in_flight_requests=3, retry_after_s=7))
    a1, a2 = adm.acquire("a"), adm.acquire("a")
    with pytest.raises(Refused) as err:
        adm.acquire("a")
    assert err.value.status == 429 and err.value.code == "too_many_requests" and err.value.retry_after_s == 7
    assert err.value.grpc_code.name == "RESOURCE_EXHAUSTED"
    b1 = adm.acquire("b")
    with pytest.raises(Refused) as err:
        adm.acquire("c")
    assert err.value.status == 503 and err.value.code == "overloaded" and err.value.grpc_code.name == "UNAVAILABLE"
    a1()
    a1()  # idempotent
    c1 = adm.acquire("c")
    for r in (a2, b1, c1):
        r()
    assert adm.total == 0 and adm.per_client == {}


def test_peer_host():
    from pagerouter.service.client_identity import peer_host

    assert peer_host("ipv4:127.0.0.2:5555") == "127.0.0.2"
    assert peer_host("ipv6:[::1]:5555") == "::1"
    assert peer_host("10.0.0.1") == "10.0.0.1"


def test_deadline_and_missing_pages():
    from pagerouter.intake.inputs import pages_text as missing_pages_text
    from pagerouter.service.deadline import RequestTimeout, until_deadline

    assert missing_pages_text([3, 4, 5, 9, 11, 12]) == "3-5,9,11-12"
    assert missing_pages_text([]) == ""

    async def slow():
        for i in range(10):
            await asyncio.sleep(0.05)
            yield i

    async def run(seconds):
        got = []
        loop = asyncio.get_running_loop()
        try:
            async for i in until_deadline(slow(), loop.time() + seconds if seconds else None, seconds):
                got.append(i)
        except RequestTimeout as exc:
            return got, exc
        return got, None

    got, exc = asyncio.run(run(0.18))
    assert 1 <= len(got) < 10 and "0.18 s" in str(exc)
    assert asyncio.run(run(None)) == (list(range(10)), None)


def test_stage_call_retries_once_when_the_replica_died():
    from ray.exceptions import RayActorError

    from pagerouter.deployments.stage_calls import ReplicaDied, stage_call

    calls = []

    async def dies_once():
        calls.append(1)
        if len(calls) == 1:
            raise RayActorError()
        return "read"

    assert asyncio.run(stage_call(dies_once)) == "read" and len(calls) == 2

    async def always_dies():
        calls.append(1)
        raise RayActorError()

    calls.clear()
    with pytest.raises(ReplicaDied) as died:  # one line naming the crash, Ray's report as its cause
        asyncio.run(stage_call(always_dies))
    assert len(calls) == 2 and "died (RayActorError" in str(died.value) and "\n" not in str(died.value)

    async def bug():
        calls.append(1)
        raise ValueError("engine bug")

    calls.clear()
    with pytest.raises(ValueError):
        asyncio.run(stage_call(bug))
    assert len(calls) == 1  # only a dead replica is retried

    from ray.exceptions import RayTaskError

    async def engine_raised_in_replica():
        try:
            raise ValueError("fake engine failure")
        except ValueError as exc:  # what a handle call raises: Ray's multi-line traceback wrapper
            raise RayTaskError("run", "Traceback (most recent call last):\n  ...", exc).as_instanceof_cause()

    with pytest.raises(ValueError) as raised:
        asyncio.run(stage_call(engine_raised_in_replica))
    assert str(raised.value) == "fake engine failure"  # the engine's own one-line reason for the page


def test_client_reports_a_streams_error_line():
    from pagerouter.clients.errors import PagerouterClientError
    from pagerouter.clients.http_client import _stream_item, assemble

    line = ('{"type":"error","error":{"code":"timeout","message":"a.pdf: the request did not finish; '
            'pages not delivered: 9-12","request_id":"r1"},"missing_pages":[9,10,11,12]}')
    with pytest.raises(PagerouterClientError) as err:
        _stream_item(line)
    assert err.value.status == 504 and "pages not delivered: 9-12" in str(err.value)
    with pytest.raises(PagerouterClientError, match="ended after 0 pages without its closing document line"):
        assemble([])


def test_page_clock_starts_when_work_starts_not_while_queued():
    """A page that waits 0.6 s for a replica, then works 0.3 s, fits a 0.5 s page budget when the
    calls report when work started (the served graph's do); counted from the queue it would not."""
    from pagerouter.flow.pipeline import _timed_flow
    from pagerouter.common.stages import LayoutResult, OcrCalls, page_work_started

    cfg = PagerouterConfig.model_validate({"serve": {
        "escalation_timeout_s": 0.1, "escalation_timeout_bulk_s": 0.1, "page_timeout_s": 0.5,
        "request_timeout_s": None}})

    class ReadReached(Exception):
        pass

    async def layout(task):
        await asyncio.sleep(0.6)  # queued: all replicas busy
        page_work_started()
        await asyncio.sleep(0.3)  # the work itself
        return LayoutResult(rotation=0, regions=[])

    async def read(task, lay):
        raise ReadReached  # the page got past layout within its budget

    with pytest.raises(ReadReached):
        asyncio.run(_timed_flow(None, OcrCalls(layout=layout, read=read, reports_start=True), cfg))
    with pytest.raises(TimeoutError):
        asyncio.run(_timed_flow(None, OcrCalls(layout=layout, read=read), cfg))


def test_pages_of_a_dead_triage_replica_are_asked_for_again_once():
    """The ingress core with a Triage stand-in whose replica dies after page 2: pages 3-4 come
    from a second walk; a second death ends the request with the error (never a silent gap)."""
    from ray.exceptions import RayActorError

    from pagerouter.deployments.ingress import IngressCore
    from pagerouter.model import Document, Page
    from pagerouter.flow.pipeline import TriageOutcome
    from pagerouter.wire.items import DocumentHead

    class Stream:
        def __init__(self, numbers, die_after=None):
            self.items = [DocumentHead(Document(source="a.pdf", page_count=4), numbers)]
            self.items += [TriageOutcome(Page(number=n, status="ok", route="text_layer")) for n in numbers]
            self.die_after, self.served, self.cancelled = die_after, 0, False

        def __aiter__(self):
            return self

        async def __anext__(self):
            if self.die_after is not None and self.served > self.die_after:
                raise RayActorError()
            if not self.items:
                raise StopAsyncIteration
            self.served += 1
            return self.items.pop(0)

        def cancel(self):
            self.cancelled = True

    class Triage:
        def __init__(self, deaths):
            self.deaths, self.selections, self.outcomes = deaths, [], self

        def options(self, stream):
            return self

        def remote(self, data, name, password, pages, *options):  # options: ocr, images
            self.selections.append(pages)
            numbers = [1, 2, 3, 4] if pages is None else [int(p) for p in pages.split("-")]
            numbers = list(range(numbers[0], numbers[-1] + 1))
            dies = len(self.selections) <= self.deaths
            return Stream(numbers, die_after=2 if dies and pages is None else (0 if dies else None))

    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}}).model_dump()
    triage = Triage(deaths=1)
    doc = asyncio.run(IngressCore(cfg, triage, None, None, None).collect(b"%PDF", "a.pdf", None, None))
    assert [p.number for p in doc.pages] == [1, 2, 3, 4] and triage.selections == [None, "3-4"]
    triage = Triage(deaths=2)
    with pytest.raises(RayActorError):
        asyncio.run(IngressCore(cfg, triage, None, None, None).collect(b"%PDF", "a.pdf", None, None))
    assert triage.selections == [None, "3-4"]


def test_content_stream_bomb_is_refused_before_mupdf_parses_it(tmp_path):
    """A page whose nested-deflate content decodes past limits.max_content_stream_mb is `failed` at once,
    naming the limit, in the pre-scan and in triage alike; the other pages of the file are read; a
    normal page and a large-but-legal content stream pass."""
    import time
    import zlib

    import pymupdf

    from pagerouter.convert.converter import Converter
    from pagerouter.intake.page_limits import content_size_problem

    doc = pymupdf.open()
    texts = [synth.LOREM[:300], "Page two is the bomb.", synth.LOREM[300:600]]
    for text in texts:
        synth.add_text_page(doc, [text])
    inner = zlib.compress(b" " * (8 << 20), 9)  # 8 MB of spaces, deflated twice: ~1 KB on disk
    doc.update_stream(doc[1].get_contents()[0], zlib.compress(inner, 9), compress=False)
    doc.xref_set_key(doc[1].get_contents()[0], "Filter", "[/FlateDecode /FlateDecode]")
    path = tmp_path / "bomb.pdf"
    doc.save(path)
    doc = pymupdf.open(path)
    assert content_size_problem(doc[0], 1) == ""
    assert "decode to more than 4 MB" in content_size_problem(doc[1], 4)
    assert content_size_problem(doc[1], 16) == ""  # 8 MB is under a 16 MB limit
    # the same bomb behind ASCII armour, and a flat bomb hidden by a decoy stream with a negative /Length
    armoured = pymupdf.open()
    page = armoured.new_page()
    xref = armoured.get_new_xref()
    armoured.update_object(xref, "<<>>")
    armoured.update_stream(xref, zlib.compress(inner, 9).hex().encode() + b">", compress=False)
    armoured.xref_set_key(page.xref, "Contents", f"{xref} 0 R")
    armoured.xref_set_key(xref, "Filter", "[/AHx /FlateDecode /FlateDecode]")
    assert "decode to more than 4 MB" in content_size_problem(armoured[0], 4)
    flat = pymupdf.open()
    page = flat.new_page()
    big, decoy = flat.get_new_xref(), flat.get_new_xref()
    for x, data in ((big, zlib.compress(b" " * (8 << 20), 9)), (decoy, b"")):
        flat.update_object(x, "<<>>")
        flat.update_stream(x, data, compress=False)
    flat.xref_set_key(big, "Filter", "/FlateDecode")
    flat.xref_set_key(decoy, "Length", "-999999999")
    flat.xref_set_key(page.xref, "Contents", f"[{big} 0 R {decoy} 0 R]")
    assert "decode to more than 4 MB" in content_size_problem(flat[0], 4)
    for isolation in (False, True):
        cfg = PagerouterConfig.model_validate(
            {"ocr": {"enabled": False}, "isolation": {"enabled": isolation}, "limits": {"max_content_stream_mb": 4}}
        )
        t0 = time.perf_counter()
        pages = Converter(cfg).convert(path).pages
        assert time.perf_counter() - t0 < 20
        assert [p.status for p in pages] == ["ok", "failed", "ok"]
        assert "page 2" in pages[1].error and "limits.max_content_stream_mb" in pages[1].error
        assert " ".join(b.text for b in pages[2].blocks).split() == texts[2].split()


@pytest.mark.parametrize("entries", [
    "/Length 9/Filter/FlateDecode", "/Filter[/AHx /Fl]/Length 5", "/Filter INDIRECT_FILTER/Length 7",
    "/Length INDIRECT_LENGTH/Filter/FlateDecode", "/Length -5/Filter/FlateDecode", "/Filter null/Length 10",
    "/Filter/LZWDecode/Length 10", "/Length1 5/Length 99/Filter/FlateDecode", "/Filter[/Fl /Fl]/Length 120",
    "/Filter/FlateDecode/DecodeParms<</Predictor 12>>/Length 3", "/Length 5/Foo(/Length 9 /Filter/Fl)",
    "/S/Filter/Filter[/Fl /Fl]/Length 9", "/XLength 5/Length 6", "/Filter/Fl#61te/Length 4", "",
])
def test_a_stream_dictionary_read_in_one_lookup_agrees_with_mupdf(entries):
    """The bomb check reads a content stream's /Filter and /Length from one printed dictionary
    (the fast path); whatever the dictionary holds (indirect entries, nested dictionaries, strings
    or name values that look like keys) it must read what MuPDF's own key lookups read, or a
    nested-deflate bomb could pass as a stream with one filter."""
    import pymupdf

    from pagerouter.intake.page_limits import _filters, _stream_keys

    doc = pymupdf.open()
    doc.new_page()
    length, filters = doc.get_new_xref(), doc.get_new_xref()
    doc.update_object(length, "77")
    doc.update_object(filters, "[/FlateDecode /FlateDecode]")
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<" + entries.replace("INDIRECT_FILTER", f"{filters} 0 R")
                      .replace("INDIRECT_LENGTH", f"{length} 0 R") + ">>")
    kind, value = doc.xref_get_key(xref, "Length")
    assert _stream_keys(doc, xref) == (_filters(doc, xref), int(value) if kind == "int" else None)


def test_a_retried_stage_call_gets_a_fresh_page_clock_and_a_timeout_names_the_crash():
    """A layout call whose replica dies after 0.4 s of a 0.5 s page budget is retried through
    `stage_call`; the retry (0.4 s) gets its own budget. A retry that also runs out of time fails
    the page with a reason that names the dead replica."""
    from ray.exceptions import ActorDiedError

    from pagerouter.deployments.stage_calls import stage_call
    from pagerouter.flow.pipeline import _timed_flow
    from pagerouter.common.stages import LayoutResult, OcrCalls, page_work_started

    cfg = PagerouterConfig.model_validate({"serve": {
        "escalation_timeout_s": 0.1, "escalation_timeout_bulk_s": 0.1, "page_timeout_s": 0.5,
        "request_timeout_s": None}})

    class ReadReached(Exception):
        pass

    def layout_dying_once(retry_s: float):
        tries = []

        async def once():
            tries.append(1)
            page_work_started()
            await asyncio.sleep(0.4)
            if len(tries) == 1:
                raise ActorDiedError()
            await asyncio.sleep(retry_s - 0.4)
            return LayoutResult(rotation=0, regions=[])

        async def layout(task):
            return await stage_call(once)

        return layout

    async def read(task, lay):
        raise ReadReached

    with pytest.raises(ReadReached):
        asyncio.run(_timed_flow(None, OcrCalls(layout=layout_dying_once(0.4), read=read, reports_start=True), cfg))
    with pytest.raises(TimeoutError) as late:
        asyncio.run(_timed_flow(None, OcrCalls(layout=layout_dying_once(1.2), read=read, reports_start=True), cfg))
    assert "its replica died (ActorDiedError) and the call was retried" in str(late.value)


@pytest.mark.parametrize("shape", ["array", "one_stream", "indirect_array", "none"])
def test_the_content_streams_measured_are_the_pages_own(shape):
    # content_size_problem reads the /Contents entry itself (one lookup, not one per stream):
    # it must name exactly the streams MuPDF's get_contents() names, whatever shape it has
    from pagerouter.intake.page_limits import _content_xrefs

    doc = pymupdf.open()
    page = doc.new_page()
    for i in range(3 if shape != "one_stream" else 1):
        page.insert_text((72, 72 + 20 * i), f"line {i}")  # each call adds a content stream
    kind, value = doc.xref_get_key(page.xref, "Contents")
    if shape == "indirect_array":
        arr = doc.get_new_xref()
        doc.update_object(arr, value if kind == "array" else f"[{value}]")
        doc.xref_set_key(page.xref, "Contents", f"{arr} 0 R")
    elif shape == "none":
        doc.xref_set_key(page.xref, "Contents", "null")
    assert _content_xrefs(doc, page) == page.get_contents()
    assert len(page.get_contents()) == {"array": 3, "one_stream": 1, "indirect_array": 3, "none": 0}[shape]
