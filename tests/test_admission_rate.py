"""Admission sized by the replica's page rate (pagerouter.service.service_rate, .admission), without
Ray: a fake clock drives the rate; the decisions are checked with their figures.

The served behaviour (a burst of slow documents against one real replica) is
tests/test_serve_admission.py.
"""

from __future__ import annotations

import asyncio

import pytest

from pagerouter.config.limits import LimitsConfig
from pagerouter.model import Document, Page
from pagerouter.service.admission import Admission, Refused
from pagerouter.service.service_rate import Outlook, ServiceRate
from pagerouter.wire.items import DocumentHead, DocumentTail


class FakeClock:
    """Seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float) -> None:
        self.now += seconds


def _finish(rate: ServiceRate, clock: FakeClock, pages: int, every_s: float, slot=None) -> None:
    """`pages` finished `every_s` apart (pages of `slot`, if given)."""
    for _ in range(pages):
        clock.tick(every_s)
        rate.page_done()
        if slot is not None:
            slot.done += 1


def test_the_rate_starts_at_the_prior_and_follows_finished_pages_over_busy_time_only():
    clock = FakeClock()
    rate = ServiceRate(prior_page_s=2.0, horizon_s=30.0, clock=clock)
    assert rate.pages_per_s() == pytest.approx(0.5)
    rate.busy()
    _finish(rate, clock, 240, 0.25)  # 4 pages/s for 60 busy seconds: the prior has faded
    assert rate.pages_per_s() == pytest.approx(4.0, rel=0.05)
    rate.idle()
    clock.tick(600)  # ten idle minutes are no service time
    assert rate.pages_per_s() == pytest.approx(4.0, rel=0.05)
    rate.busy()
    _finish(rate, clock, 1, 0.25)
    assert rate.pages_per_s() == pytest.approx(4.0, rel=0.05)


def test_a_burst_of_pages_reads_as_its_true_rate_and_a_stall_slows_the_rate():
    clock = FakeClock()
    rate = ServiceRate(prior_page_s=1.0, horizon_s=30.0, clock=clock)
    rate.busy()
    for _ in range(5):  # a batch of 8 OCR pages every 4 s: 2 pages/s, though they land together
        clock.tick(4.0)
        rate.page_done()
        for _ in range(7):
            rate.page_done()
    assert rate.pages_per_s() == pytest.approx(2.0, rel=0.1)
    clock.tick(20.0)  # nothing finished for 20 s of busy time: the stages stalled
    assert rate.pages_per_s() < 1.0


def test_an_idle_replica_admits_a_long_document_whatever_the_rate():
    clock = FakeClock()
    adm = Admission(LimitsConfig(admission_prior_page_s=5.0), deadline_s=10.0, clock=clock)
    slot = adm.acquire("a")
    adm._pages_known(slot, 500)  # 2500 s expected, nothing ahead of it: it runs
    assert adm.total == 1 and slot.pages == 500


def test_a_small_request_behind_a_long_fast_document_is_admitted_and_behind_slow_pages_refused():
    # Pages, not requests: 200 born-digital pages ahead at 100 pages/s are 2 s of work,
    # 20 scans ahead at 0.5 page/s are 40 s.
    clock = FakeClock()
    limits = LimitsConfig(admission_deadline_share=1.0, retry_after_s=5)
    fast = Admission(limits, deadline_s=10.0, clock=clock)
    long_doc = fast.acquire("a")
    fast._pages_known(long_doc, 400)
    _finish(fast.rate, clock, 200, 0.01, long_doc)
    small = fast.acquire("b", pages=1)
    assert fast.total == 2
    small()

    slow = Admission(limits, deadline_s=10.0, clock=clock)
    scans = slow.acquire("a")
    slow._pages_known(scans, 24)
    _finish(slow.rate, clock, 4, 2.0, scans)
    with pytest.raises(Refused) as refused:
        slow.acquire("b", pages=1)
    exc = refused.value
    assert (exc.status, exc.code, exc.grpc_code.name) == (503, "overloaded", "UNAVAILABLE")
    o = exc.outlook
    assert o.pages_ahead == 20 and o.own_pages == 1 and o.allowed_s == 10.0
    assert o.rate == pytest.approx(0.5, rel=0.1)
    # Retry-After: the expected excess over the deadline (42 s - 10 s), not the fixed 5 s
    assert exc.retry_after_s == pytest.approx(32, abs=3)
    assert "expected wait" in exc.message and "20.0 pages ahead" in exc.message and "limits.admission_by_rate" in exc.message
    assert slow.total == 1  # a refusal takes no slot


def test_the_page_count_is_checked_again_when_the_file_is_opened():
    clock = FakeClock()
    adm = Admission(LimitsConfig(admission_prior_page_s=1.0, admission_deadline_share=1.0), deadline_s=10.0, clock=clock)
    first = adm.acquire("a")
    adm._pages_known(first, 4)
    second = adm.acquire("b")  # its pages unknown: counted as one, 5 s expected
    assert adm.total == 2
    clock.tick(1.0)
    with pytest.raises(Refused) as refused:
        adm._pages_known(second, 8)  # 12 pages at 1 page/s, 9 s left of its deadline
    assert refused.value.outlook.pages_ahead == 4 and refused.value.outlook.allowed_s == pytest.approx(9.0)
    assert adm.total == 1 and adm.per_client == {"a": 1}  # released when refused
    second()  # the ingress's own release after that does nothing
    assert adm.total == 1


def test_the_fixed_caps_stay_hard_bounds_and_no_deadline_means_no_refusal_by_rate():
    clock = FakeClock()
    adm = Admission(LimitsConfig(max_in_flight_requests=2, admission_prior_page_s=100.0), deadline_s=None, clock=clock)
    a = adm.acquire("a")
    adm._pages_known(a, 1000)
    adm.acquire("b")  # a day of work ahead, but no deadline to miss
    with pytest.raises(Refused) as refused:
        adm.acquire("c")
    assert refused.value.outlook is None and refused.value.retry_after_s == 5  # the fixed cap's own

    off = Admission(LimitsConfig(admission_by_rate=False, admission_prior_page_s=100.0), deadline_s=1.0, clock=clock)
    off._pages_known(off.acquire("a"), 1000)
    off.acquire("b")
    assert off.total == 2


def test_retry_after_is_the_excess_capped_at_the_drain_of_the_work_ahead():
    assert Outlook(10, 2, 1.0, 8.0).retry_after_s() == 4  # finish 12 s, 8 s allowed
    assert Outlook(10, 50, 1.0, 8.0).retry_after_s() == 10  # alone it would not fit either: wait for idle
    assert Outlook(1, 1, 100.0, 0.001).retry_after_s() == 1  # at least 1 s
    assert not Outlook(0, 50, 1.0, 8.0).refuse  # nothing ahead: admitted


async def _items(n: int, closed: list):
    try:
        yield DocumentHead(Document(source="x.pdf", page_count=n), list(range(1, n + 1)))
        for i in range(1, n + 1):
            yield Page(number=i, status="ok", route="text_layer")
        yield DocumentTail()
    finally:
        closed.append(True)


def test_a_tracked_conversion_feeds_the_rate_and_a_refused_head_closes_the_walk():
    clock = FakeClock()
    adm = Admission(LimitsConfig(admission_prior_page_s=1.0, admission_deadline_share=1.0), deadline_s=10.0, clock=clock)

    async def drain(slot, n, closed):
        out = []
        async for item in slot.track(_items(n, closed)):
            clock.tick(0.1)
            out.append(item)
        return out

    first = adm.acquire("a")
    closed: list = []
    got = asyncio.run(drain(first, 3, closed))
    assert [type(i).__name__ for i in got] == ["DocumentHead", "Page", "Page", "Page", "DocumentTail"]
    assert first.done == 3 and closed == [True]
    assert adm.rate.pages_per_s() > 2.0  # 3 pages in 0.3 s against a prior of 1 page/s
    first()

    first, second = adm.acquire("a"), adm.acquire("b")  # both admitted, their pages not known yet
    adm._pages_known(first, 200)  # then 200 pages ahead of the second at ~3 pages/s: over a minute
    closed = []
    with pytest.raises(Refused):
        asyncio.run(drain(second, 50, closed))
    assert closed == [True] and adm.total == 1


def test_an_unopened_request_ahead_counts_as_the_typical_request_and_itself_as_one_page():
    clock = FakeClock()
    adm = Admission(LimitsConfig(admission_prior_page_s=1.0, admission_deadline_share=1.0), deadline_s=10.0, clock=clock)
    for _ in range(20):  # a run of 10-page documents, opened and finished one after another
        slot = adm.acquire("a")
        adm._pages_known(slot, 10)
        slot()
    assert adm.typical_pages == pytest.approx(10.0, rel=0.02)
    running = adm.acquire("a")  # the next one, not opened yet: ~10 pages ahead of any newcomer
    assert running.pages is None and running.remaining == pytest.approx(10.0, rel=0.02)
    with pytest.raises(Refused) as refused:  # 10 ahead + 1 of its own at 1 page/s: 11 s > 10 s
        adm.acquire("b")
    assert refused.value.outlook.own_pages == 1 and refused.value.outlook.pages_ahead == pytest.approx(10.0, rel=0.02)


def test_scans_queued_at_ocr_refuse_though_born_digital_pages_make_the_page_rate_fast():
    # Born-digital pages finish 10 a second, so pages/s looks fast; the OCR stages finish one
    # page every 2 s, and 8 scans wait there: a newcomer that may need OCR waits ~16 s for
    # them, whatever the page rate says.
    clock = FakeClock()
    limits = LimitsConfig(admission_deadline_share=1.0, admission_prior_page_s=0.01, max_in_flight_requests=64)
    adm = Admission(limits, deadline_s=10.0, clock=clock)  # the fast prior admits everything below at first
    text = adm.acquire("text", pages=600)
    later = [adm.acquire(f"later{i}", pages=1) for i in range(30)]
    scans = [adm.acquire(f"scan{i}", pages=1) for i in range(8)]
    for s in scans:
        s.ocr_page_started()
    for tenth in range(600):  # 60 s: a text page every 0.1 s, an OCR page (of `later`) every 2 s
        clock.tick(0.1)
        adm._page_done(text, Page(number=tenth + 1, status="ok", route="text_layer"))
        if tenth % 20 == 19:
            scan = later.pop()
            scan.ocr_page_started()
            adm._page_done(scan, Page(number=1, status="ok", route="ocr"))
            scan()
    text()
    assert adm.rate.pages_per_s() > 5  # the page lane alone: 8 pages ahead are about a second
    assert adm.ocr_rate.pages_per_s() == pytest.approx(0.5, rel=0.2)
    assert 0.02 < adm.ocr_share < 0.3
    with pytest.raises(Refused) as refused:
        adm.acquire("new", pages=1)
    o = refused.value.outlook
    assert o.pages_ahead == 8 and o.ocr_ahead == 8 and o.finish_s > 10.0 and "OCR:" in refused.value.message
    for s in scans:  # once those scans are done, the same newcomer is admitted
        adm._page_done(s, Page(number=1, status="ok", route="ocr"))
        s()
    adm.acquire("new", pages=1)
