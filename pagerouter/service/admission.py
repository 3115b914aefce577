"""Admission of conversions (limits.*): in flight per ingress replica and per client, and the
expected finish of what is in flight.

`Admission` refuses a conversion before its upload is read: 503 `overloaded` when the replica
already runs limits.max_in_flight_requests, 429 `too_many_requests` when the client already
runs limits.max_requests_per_client, both with Retry-After. (Serve's own queue in front of the
ingress is bounded by serve.max_queued_requests.)

Within those hard bounds it is sized by what the replica finishes (limits.admission_by_rate):
the pages admitted and not yet finished ahead of a request, plus its own, at the replica's page
rate (pagerouter.service.service_rate), must finish within a share of the request's deadline,
else 503 `overloaded` with a Retry-After of the expected excess. A request whose page count is
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
        self._check(self.outlook(self.pages_in_flight(), pages if pages is not None else UNKNOWN_PAGES))
        slot = Slot(self, client, next(self._ids), pages)
        self.slots[slot.id] = slot
        self.per_client[client] = self.per_client.get(client, 0) + 1
        self.rate.busy()
        return slot

    def outlook(self, pages_ahead: float, own_pages: int) -> Outlook:
        return Outlook(pages_ahead, own_pages, self.rate.pages_per_s(), self.allowed_s)

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
        ahead = 0.0
        for other in self.slots.values():
            if other is slot:
                break
            ahead += other.remaining
        spent = self.rate.clock() - slot.admitted_at  # the deadline started at admission
        allowed = None if self.allowed_s is None else self.allowed_s - spent
        try:
            self._check(Outlook(ahead, pages, self.rate.pages_per_s(), allowed))
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


class Slot:
    """One admitted conversion. Call it, or leave its `with` block, to release it; a second
    release does nothing (a stream's end and its finaliser may both try)."""

    def __init__(self, admission: Admission, client: str, id: int, pages: int | None):
        self._admission, self.client, self.id, self._released = admission, client, id, False
        self.pages, self.done = pages, 0  # pages: None until the file is opened
        self.admitted_at = admission.rate.clock()

    @property
    def remaining(self) -> float:
        """Pages not finished yet; an unopened request counts as the replica's typical one."""
        pages = self.pages if self.pages is not None else self._admission.typical_pages
        return max(0.0, pages - self.done)

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
        the walk), and every finished page feeds the replica's rate."""
        async with aclosing(items):
            async for item in items:
                if isinstance(item, DocumentHead) and not self._released:
                    self._admission._pages_known(self, len(item.numbers))
                elif isinstance(item, Page) and not self._released:
                    self.done += 1
                    self._admission.rate.page_done()
                yield item
