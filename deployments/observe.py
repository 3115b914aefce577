"""Observability of the graph: custom Serve metrics and Serve's request ids.

Metrics are `ray.serve.metrics` objects (exported as `ray_pagerouter_*` with application and
deployment labels). The spans per stage are pagerouter.service.tracing's.
"""

from __future__ import annotations

import uuid

from pagerouter.model import Page

_LATENCY_BOUNDARIES = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]


def current_request_id() -> str:
    """Serve's id of the request being handled (the proxy echoes it as `x-request-id`)."""
    try:
        from ray.serve.context import _get_serve_request_context  # private, wrapped here only

        rid = _get_serve_request_context().request_id
    except Exception:  # noqa: BLE001 - outside a Serve request (in-process): make one
        rid = ""
    return rid or uuid.uuid4().hex


class _NoMetric:
    def inc(self, *a, **k) -> None: ...

    def observe(self, *a, **k) -> None: ...


class GraphMetrics:
    """pagerouter's custom metrics; all no-ops when disabled or outside a Ray worker."""

    def __init__(self, enabled: bool):
        self.pages = self.flags = self.escalations = self.stage_latency = self.batch_size = _NoMetric()
        self.triage_path = self.refused = _NoMetric()
        if not enabled:
            return
        try:
            from ray.serve.metrics import Counter, Histogram

            self.pages = Counter("pagerouter_pages", description="Pages converted.", tag_keys=("route", "status"))
            self.flags = Counter("pagerouter_flags", description="Flags raised on pages.", tag_keys=("flag",))
            self.escalations = Counter(
                "pagerouter_escalations", description="Pages sent to the escalation tier.", tag_keys=("outcome",)
            )
            self.stage_latency = Histogram(
                "pagerouter_stage_latency_s",
                description="Seconds per stage per page.",
                boundaries=_LATENCY_BOUNDARIES,
                tag_keys=("stage",),
            )
            self.triage_path = Counter(
                "pagerouter_triage_path",
                description="Requests triaged by the ingress itself (`ingress`) or the Triage deployment (`deployment`).",
                tag_keys=("where",),
            )
            self.refused = Counter(
                "pagerouter_admission_refused",
                description="Conversions refused by the ingress's admission, by reason: `in_flight` and `client` "
                "(the fixed caps), `expected_finish` (limits.admission_by_rate).",
                tag_keys=("reason",),
            )
            self.batch_size = Histogram(
                "pagerouter_batch_size",
                description="Pages per engine call.",
                # One bucket per size up to 8: a bucket count is then an exact count of calls of that
                # size (Ray 2.60 exports a histogram's _sum from bucket midpoints, not the values).
                boundaries=[1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 32],
                tag_keys=("stage",),
            )
        except Exception:  # noqa: BLE001 - metrics are an aid, never a reason to fail a replica
            pass

    def page_done(self, page: Page) -> None:
        self.pages.inc(tags={"route": page.route or "none", "status": page.status})
        for flag in page.flags:
            self.flags.inc(tags={"flag": flag})
        if "escalate" in page.timings:
            names = {c.name for c in page.checks}
            outcome = "timeout" if "escalation_timeout" in names else "error" if "escalation_error" in names else "ok"
            self.escalations.inc(tags={"outcome": outcome})
        for stage, seconds in page.timings.items():
            self.stage_latency.observe(seconds, tags={"stage": stage})
