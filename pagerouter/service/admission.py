"""Admission of conversions (limits.*): in flight per ingress replica and per client, and the
expected finish of what is in flight.

`Admission` refuses a conversion before its upload is read: 503 `overloaded` when the replica
already runs limits.max_in_flight_requests, 429 `too_many_requests` when the client already
runs limits.max_requests_per_client, both with Retry-After. (Serve's own queue in front of the
ingress is bounded by serve.max_queued_requests.)

Within those hard bounds it is sized by what the replica finishes (limits.admission_by_rate):
the pages admitted and not yet finished ahead of a request, plus its own, at the replica's page
rate (pagerouter.service.service_rate), must finish within a share of the request's deadline,
else 503 `overloaded` with a Retry-After of the expected excess. The pages in the OCR stages
are a second lane with their own rate (the ingress tells a slot when one of its pages goes to
Layout): scans queue there while born-digital pages finish by the hundred. A request whose page count is
not known before its upload is read counts as one page for its own check, and is checked again
when its file is opened (`Slot.track`): a request refused then never starts its pages. Ahead of
others, an unopened request counts as the replica's typical request (a moving average of the
page counts opened), so a burst of long documents is refused as it arrives, not one open later
(an open waits for a Triage worker, seconds under load). Without this a burst was
admitted up to the fixed cap, waited in the stages, and ended in 504s for everyone.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing

import grpc

from pagerouter.config.limits import LimitsConfig
from pagerouter.model import Page
from pagerouter.wire.items import DocumentHead

from .service_rate import Outlook, ServiceRate

UNKNOWN_PAGES = 1
"""Pages a request counts as for its own check before its file is opened: the least it can be,
so a guess about itself never refuses it; the real count is checked when the head arrives."""
TYPICAL_WEIGHT = 0.2
"""Weight of the newest opened request in `Admission.typical_pages`."""
OCR_SHARE_WEIGHT = 0.05
"""Weight of the newest finished page in `Admission.ocr_share` (about the last 20 pages)."""
OCR_ROUTES = ("ocr", "mixed")
"""Routes whose pages went through the OCR stages."""


class Refused(Exception):
    """A request refused before any work: HTTP status, error code, message, Retry-After, gRPC code;
    `outlook` carries the figures of a refusal by expected finish."""

    def __init__(self, status: int, code: str, message: str, retry_after_s: int, grpc_code: grpc.StatusCode,
                 outlook: Outlook | None = None):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.retry_after_s, self.grpc_code, self.outlook = retry_after_s, grpc_code, outlook


class Admission:
    """In-flight conversions of one ingress replica, in all and per client, with their pages
    (one event loop). `deadline_s`: the seconds a request gets (None: no deadline, so no
    refusal by expected finish)."""

    def __init__(self, limits: LimitsConfig, deadline_s: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.limits = limits
        self.slots: dict[int, Slot] = {}  # in admission order: the pages of earlier slots are ahead
        self.per_client: dict[str, int] = {}
        self.rate = ServiceRate(limits.admission_prior_page_s, limits.admission_horizon_s, clock)
        use = limits.admission_by_rate and deadline_s is not None
        self.allowed_s = deadline_s * limits.admission_deadline_share if use else None
        self._ids = itertools.count()
        self.typical_pages = float(UNKNOWN_PAGES)  # pages of a request, averaged over those opened
        # The OCR lane (service_rate.Outlook): OCR pages finished per busy second of the OCR
        # stages, and the share of finished pages that needed OCR (0 until one did).
        self.ocr_rate = ServiceRate(limits.admission_prior_page_s, limits.admission_horizon_s, clock)
        self.ocr_share = 0.0

    @property
    def total(self) -> int:
        return len(self.slots)

    def pages_in_flight(self) -> float:
        return sum(s.remaining for s in self.slots.values())

    def acquire(self, client: str, pages: int | None = None) -> Slot:
        """Count one conversion of `client` in, or raise Refused; returns its slot (its release).
        `pages`: its page count when known before the upload is read (a single-page route)."""
        lim = self.limits
        if self.total >= lim.max_in_flight_requests:
            raise Refused(
                503, "overloaded",
                f"the server is at capacity ({lim.max_in_flight_requests} conversions in flight, "
                "limits.max_in_flight_requests); retry later",
                lim.retry_after_s, grpc.StatusCode.UNAVAILABLE,
            )
        if self.per_client.get(client, 0) >= lim.max_requests_per_client:
            raise Refused(
                429, "too_many_requests",
                f"too many conversions in flight from this client (at most {lim.max_requests_per_client}, "
                "limits.max_requests_per_client); retry later",
                lim.retry_after_s, grpc.StatusCode.RESOURCE_EXHAUSTED,
            )
        self._check(self.outlook(list(self.slots.values()), pages if pages is not None else UNKNOWN_PAGES,
                                 self.allowed_s))
        slot = Slot(self, client, next(self._ids), pages)
        self.slots[slot.id] = slot
        self.per_client[client] = self.per_client.get(client, 0) + 1
        self.rate.busy()
        return slot

    def outlook(self, ahead: list[Slot], own_pages: int, allowed_s: float | None) -> Outlook:
        """The outlook of a request of `own_pages` behind the slots `ahead`."""
        share = self.ocr_share
        return Outlook(
            sum(s.remaining for s in ahead), own_pages, self.rate.pages_per_s(), allowed_s,
            ocr_ahead=sum(s.in_ocr + share * s.untriaged for s in ahead), ocr_own=share * own_pages,
            ocr_rate=self.ocr_rate.pages_per_s(),
        )

    def _check(self, outlook: Outlook) -> None:
        if outlook.refuse:
            retry = outlook.retry_after_s()
            raise Refused(
                503, "overloaded",
                f"the server would not finish this request in time: {outlook.figures()} "
                f"(limits.admission_by_rate); retry in {retry} s",
                retry, grpc.StatusCode.UNAVAILABLE, outlook,
            )

    def _pages_known(self, slot: Slot, pages: int) -> None:
        """The file of `slot` is open and has `pages` to convert: check its finish again (raises
        Refused, and releases the slot, if it would not finish in time)."""
        slot.pages = pages
        self.typical_pages += TYPICAL_WEIGHT * (pages - self.typical_pages)
        ahead = list(itertools.takewhile(lambda other: other is not slot, self.slots.values()))
        spent = self.rate.clock() - slot.admitted_at  # the deadline started at admission
        allowed = None if self.allowed_s is None else self.allowed_s - spent
        try:
            self._check(self.outlook(ahead, pages, allowed))
        except Refused:
            slot()
            raise

    def _release(self, slot: Slot) -> None:
        del self.slots[slot.id]
        left = self.per_client[slot.client] - 1
        if left:
            self.per_client[slot.client] = left
        else:
            del self.per_client[slot.client]
        if not self.slots:
            self.rate.idle()
        self._ocr_idle_check()

    def _ocr_idle_check(self) -> None:
        if not any(s.in_ocr for s in self.slots.values()):
            self.ocr_rate.idle()

    def _page_done(self, slot: Slot, page: Page) -> None:
        slot.done += 1
        self.rate.page_done()
        ocr = page.route in OCR_ROUTES
        self.ocr_share += OCR_SHARE_WEIGHT * (float(ocr) - self.ocr_share)
        if ocr and slot.ocr_started > slot.ocr_done:
            slot.ocr_done += 1
            self.ocr_rate.page_done()
            self._ocr_idle_check()


class Slot:
    """One admitted conversion. Call it, or leave its `with` block, to release it; a second
    release does nothing (a stream's end and its finaliser may both try)."""

    def __init__(self, admission: Admission, client: str, id: int, pages: int | None):
        self._admission, self.client, self.id, self._released = admission, client, id, False
        self.pages, self.done = pages, 0  # pages: None until the file is opened
        self.ocr_started = self.ocr_done = 0  # its pages sent to / back from the OCR stages
        self.admitted_at = admission.rate.clock()

    @property
    def remaining(self) -> float:
        """Pages not finished yet; an unopened request counts as the replica's typical one."""
        pages = self.pages if self.pages is not None else self._admission.typical_pages
        return max(0.0, pages - self.done)

    @property
    def in_ocr(self) -> int:
        """Its pages in the OCR stages now."""
        return self.ocr_started - self.ocr_done

    @property
    def untriaged(self) -> float:
        """Its pages neither finished nor in OCR: not triaged yet (a born-digital page finishes
        at triage), so their route is not known."""
        return max(0.0, self.remaining - self.in_ocr)

    def ocr_page_started(self) -> None:
        """One of its pages went to the OCR stages (the ingress's layout call)."""
        if not self._released:
            self.ocr_started += 1
            self._admission.ocr_rate.busy()

    def __call__(self) -> None:
        if not self._released:
            self._released = True
            self._admission._release(self)

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *exc) -> None:
        self()

    async def track(self, items: AsyncIterator) -> AsyncIterator:
        """The conversion's `items`, counted: the head's page count is checked against the
        deadline (Refused is raised before any page starts, and `items` closed, which cancels
        the walk), and every finished page feeds the replica's rates."""
        async with aclosing(items):
            async for item in items:
                if isinstance(item, DocumentHead) and not self._released:
                    self._admission._pages_known(self, len(item.numbers))
                elif isinstance(item, Page) and not self._released:
                    self._admission._page_done(self, item)
                yield item
