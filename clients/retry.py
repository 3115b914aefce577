"""Retries of refused calls, shared by every client path (HTTP and gRPC, sync and async, job polling).

A busy server says so and says when to come back: HTTP 429/503 with `Retry-After`
(pagerouter/service/admission.py, deployments/http_errors.py, deployments/jobs.py) and gRPC
UNAVAILABLE / RESOURCE_EXHAUSTED with a `retry-after` trailer (pagerouter/service/error_status.py,
graph/grpc_front.py). Such a call is sent again after at least the hinted seconds (plus up to 10 %
jitter, so clients refused together do not all return in the same instant), or after an
exponential backoff when no hint came; within `RetryPolicy.max_attempts` and a total
`RetryPolicy.deadline_s`. Past either, the last answer is raised, naming its status and how long
the client tried. tenacity runs the loop.

Retried are only refusals made before any work, which are safe to repeat even for a POST: the
server's admission answers them before reading the upload, and a job queue that is full creates no
job. gRPC's UNAVAILABLE also means "nothing listens there" and RESOURCE_EXHAUSTED also means "the
file has more pages than the server's limit"; neither carries the server's `retry-after` trailer,
and no wait would change them, so they fail at once.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import tenacity

from .errors import PagerouterClientError
from .retry_policy import RetryPolicy

T = TypeVar("T")

RETRY_HTTP_STATUSES = frozenset({429, 503})
RETRY_GRPC_STATUSES = frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED"})
HINT_JITTER = 0.1  # at most this fraction of a server's hint is added to it


NO_RETRY = RetryPolicy(max_attempts=1)
__all__ = ["NO_RETRY", "RetryPolicy", "acall", "call", "parse_retry_after", "retryable"]


def parse_retry_after(value: str | None) -> float | None:
    """Seconds of an HTTP `Retry-After` (delay-seconds or an HTTP-date, RFC 9110 10.2.3) or a gRPC
    `retry-after` trailer; None when absent or unreadable (then the client backs off on its own)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def retryable(exc: BaseException) -> bool:
    """A refusal the server asks us to repeat later (see the module docstring for what is not)."""
    if not isinstance(exc, PagerouterClientError):
        return False
    if exc.status in RETRY_HTTP_STATUSES:
        return True
    return exc.status in RETRY_GRPC_STATUSES and exc.retry_after_s is not None


class _Wait(tenacity.wait.wait_base):
    """The server's hint (plus jitter) when it gave one, else exponential backoff with jitter."""

    def __init__(self, policy: RetryPolicy):
        self.backoff = (tenacity.wait_exponential(multiplier=policy.backoff_s, max=policy.max_backoff_s)
                        + tenacity.wait_random(0, policy.backoff_s))

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        hint = getattr(retry_state.outcome.exception(), "retry_after_s", None)
        if hint is not None:
            return hint + random.uniform(0.0, HINT_JITTER * hint)
        return self.backoff(retry_state)


def _give_up(policy: RetryPolicy) -> Callable[[tenacity.RetryCallState], None]:
    def give_up(retry_state: tenacity.RetryCallState) -> None:
        last = retry_state.outcome.exception()
        assert isinstance(last, PagerouterClientError)  # only those are retried
        tried = f"{retry_state.attempt_number} attempt{'s' if retry_state.attempt_number != 1 else ''}"
        elapsed = retry_state.seconds_since_start or 0.0
        if retry_state.attempt_number >= policy.max_attempts:
            why = f"gave up after {tried} (max_attempts {policy.max_attempts}) in {elapsed:.1f} s"
        else:
            why = (f"gave up after {tried} in {elapsed:.1f} s: the next wait "
                   f"({retry_state.upcoming_sleep:.1f} s) would pass the {policy.deadline_s:g} s retry deadline")
        hint = f", retry-after {last.retry_after_s:g} s" if last.retry_after_s is not None else ""
        raise PagerouterClientError(
            last.status, last.code, f"{last.message} [{why}; last answer: {last.status} {last.code}{hint}]",
            last.request_id, retry_after_s=last.retry_after_s,
        ) from None

    return give_up


def _options(policy: RetryPolicy) -> dict:
    return {
        "stop": tenacity.stop_after_attempt(policy.max_attempts) | tenacity.stop_before_delay(policy.deadline_s),
        "wait": _Wait(policy),
        "retry": tenacity.retry_if_exception(retryable),
        "retry_error_callback": _give_up(policy),
    }


def call(policy: RetryPolicy, fn: Callable[..., T], *args, sleep: Callable[[float], None] = time.sleep, **kw) -> T:
    """fn(*args, **kw), sent again while the server refuses it (a new Retrying each call: they
    hold per-call state, and one client may be used from several threads)."""
    return tenacity.Retrying(sleep=sleep, **_options(policy))(fn, *args, **kw)


async def acall(policy: RetryPolicy, fn: Callable[..., Awaitable[T]], *args,
                sleep: Callable[[float], Awaitable[None]] = asyncio.sleep, **kw) -> T:
    """As `call`, for a coroutine function; waits without blocking the event loop."""
    return await tenacity.AsyncRetrying(sleep=sleep, **_options(policy))(fn, *args, **kw)
