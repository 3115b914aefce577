"""Pages per second one ingress replica finishes, and whether a request would finish in time.

Admission (pagerouter.service.admission) sizes itself with this: a request is refused early when
the pages already admitted ahead of it, plus its own, would not drain within its deadline at the
rate this replica has been finishing pages. Pages, not requests: one long document ahead must
not look like one small request, and a page that runs in milliseconds (born-digital) and one
that takes a second (a scan) both count through the rate they were finished at.

The rate is a ratio of decayed sums over *busy* time (time with admitted work in flight):
pages finished over seconds spent. Each finished page adds the interval since the last one,
older intervals fading with `horizon_s` of busy time. A ratio of sums, not an average of
per-page rates: pages finish in bursts (a batch of OCR pages at once), and an average of 1/dt
over a burst would read a near-infinite rate. Idle time is not service time, so an idle gap is
dropped. A start-up prior (one pseudo-page of `prior_page_s`) answers before any page finished
and fades like any other interval.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass


class ServiceRate:
    """Decayed pages-per-busy-second of one replica (one event loop; not thread-safe)."""

    def __init__(self, prior_page_s: float, horizon_s: float, clock: Callable[[], float] = time.monotonic):
        self.horizon_s, self.clock = horizon_s, clock
        self._pages, self._busy_s = 1.0, prior_page_s  # the prior: one pseudo-page
        self._mark: float | None = None  # start of the open busy interval; None while idle

    def busy(self) -> None:
        """Admitted work is in flight (from now, if the replica was idle)."""
        if self._mark is None:
            self._mark = self.clock()

    def idle(self) -> None:
        """No admitted work left: the open interval held no finished page and is not service time."""
        self._mark = None

    def page_done(self, pages: float = 1.0) -> None:
        """`pages` finished now (an admitted request's page)."""
        now = self.clock()
        dt = 0.0 if self._mark is None else now - self._mark
        fade = math.exp(-dt / self.horizon_s)
        self._pages = self._pages * fade + pages
        self._busy_s = self._busy_s * fade + dt
        self._mark = now

    def pages_per_s(self) -> float:
        """The rate now. A stall (no page finished for longer than the usual interval) counts
        as busy time already, so a replica whose pages stopped finishing stops looking fast."""
        mean_gap = self._busy_s / self._pages
        open_s = 0.0 if self._mark is None else self.clock() - self._mark
        stalled = max(0.0, open_s - mean_gap)
        fade = math.exp(-stalled / self.horizon_s)
        busy = self._busy_s * fade + stalled
        return self._pages * fade / busy if busy > 0 else math.inf


@dataclass(frozen=True)
class Outlook:
    """What one request can expect, against `allowed_s` (the share of its deadline that
    admission lets the expected finish take; None: no deadline). Two lanes: all pages (pages
    ahead of it and its own at `rate` pages/s), and the OCR stages, where pages wait behind
    other OCR pages only (`ocr_ahead`: pages in OCR ahead of it plus the expected OCR share of
    those not triaged yet; `ocr_own`: that share of its own; at `ocr_rate`). One lane alone
    misleads under a mix: born-digital pages finish by the hundred per second and make the
    page rate look fast while the scans queue at OCR."""

    pages_ahead: float
    own_pages: int
    rate: float
    allowed_s: float | None
    ocr_ahead: float = 0.0
    ocr_own: float = 0.0
    ocr_rate: float = math.inf

    @staticmethod
    def _seconds(pages: float, rate: float) -> float:
        if pages <= 0:
            return 0.0
        return pages / rate if rate > 0 else math.inf

    @property
    def wait_s(self) -> float:
        """Seconds until the pages ahead have drained (the slower lane)."""
        return max(self._seconds(self.pages_ahead, self.rate), self._seconds(self.ocr_ahead, self.ocr_rate))

    @property
    def finish_s(self) -> float:
        """Seconds until this request's own pages are done too (the slower lane)."""
        return max(self._seconds(self.pages_ahead + self.own_pages, self.rate),
                   self._seconds(self.ocr_ahead + self.ocr_own, self.ocr_rate))

    @property
    def refuse(self) -> bool:
        """Refuse only with work ahead (an idle replica runs anything: the first request always
        runs) and an expected finish past what the deadline allows (None: no deadline)."""
        ahead = self.pages_ahead > 0 or self.ocr_ahead > 0
        return ahead and self.allowed_s is not None and self.finish_s > self.allowed_s

    def retry_after_s(self) -> int:
        """Seconds until the request would fit: the excess over what is allowed, and never more
        than the drain of everything ahead (an idle replica admits anything); at least 1."""
        excess = min(self.finish_s - (self.allowed_s or 0.0), self.wait_s)
        return max(1, math.ceil(excess)) if math.isfinite(excess) else 1

    def figures(self) -> str:
        """The decision's figures, one line for messages and logs."""
        allowed = "no deadline" if self.allowed_s is None else f"{self.allowed_s:.1f} s allowed"
        ocr = (f"; OCR: {self.ocr_ahead:.1f} pages ahead (in OCR or expected to need it) and {self.ocr_own:.1f} "
               f"of its own at {self.ocr_rate:.2f} pages/s" if self.ocr_ahead > 0 or self.ocr_own > 0 else "")
        return (
            f"expected wait {self.wait_s:.1f} s for {self.pages_ahead:.1f} pages ahead at {self.rate:.2f} pages/s"
            f"{ocr}; finish in {self.finish_s:.1f} s with its own {self.own_pages} ({allowed})"
        )
