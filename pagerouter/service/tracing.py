"""One OpenTelemetry span per stage per page.

Spans go through the global OpenTelemetry tracer that Serve's tracing config installs in every
replica, so they join Serve's request trace; when tracing is off the tracer is OTel's no-op and
costs nothing, and without opentelemetry-api installed no span is recorded at all.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

try:  # opentelemetry-api comes with ray[serve]; without it spans are simply not recorded
    from opentelemetry import trace as _otel_trace
except ImportError:  # pragma: no cover
    _otel_trace = None

STAGE_SPAN_PREFIX = "pagerouter."


def _tracer():
    return _otel_trace.get_tracer("pagerouter") if _otel_trace is not None else None


def _attrs(number: int, route: str | None, stage: str) -> dict[str, Any]:
    return {"page.number": number, "page.route": route or "none", "pagerouter.stage": stage}


@contextlib.contextmanager
def stage_span(stage: str, number: int, route: str | None) -> Iterator[None]:
    """A live span around one stage call for one page (child of the current Serve span)."""
    tracer = _tracer()
    if tracer is None:
        yield
        return
    with tracer.start_as_current_span(STAGE_SPAN_PREFIX + stage, attributes=_attrs(number, route, stage)):
        yield


def record_stage_span(stage: str, number: int, route: str | None, seconds: float) -> None:
    """A span for a stage that already ran (measured elsewhere), ending now."""
    tracer = _tracer()
    if tracer is None:
        return
    end = time.time_ns()
    span = tracer.start_span(
        STAGE_SPAN_PREFIX + stage, attributes=_attrs(number, route, stage), start_time=end - int(seconds * 1e9)
    )
    span.end(end_time=end)
