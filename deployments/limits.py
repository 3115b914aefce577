"""Admission, deadlines and "nothing lost" for the ingress (limits.*, serve.request_timeout_s).

- `Admission` bounds the conversions one ingress replica runs at once (503 `overloaded`) and
  those of one client (429 `too_many_requests`), both with Retry-After, before the upload is
  read. Serve's own queue in front of the ingress is bounded by serve.max_queued_requests.
- `until_deadline` ends a conversion with `RequestTimeout` a little before the proxy would cut
  it, so the caller always learns what happened: a 504 JSON error, a gRPC DEADLINE_EXCEEDED, or
  a stream's closing error line that names the pages not delivered.
- `stage_call` retries a stage call once when the replica serving it died (RayActorError).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import contextmanager
from typing import TypeVar

import grpc

from pagerouter.config.limits import LimitsConfig
from pagerouter.intake.inputs import pages_text as missing_pages_text  # noqa: F401 - `3-5,9` in stream error lines
from pagerouter.flow.pipeline import stage_retried

T = TypeVar("T")

log = logging.getLogger("ray.serve")  # Serve writes this logger to the replica's log file
PEER_METADATA = "x-pagerouter-peer"  # set by graph/grpc_front.py from the connection, never by callers


class Refused(Exception):
    """A request refused before any work: HTTP status, error code, message, Retry-After, gRPC code."""

    def __init__(self, status: int, code: str, message: str, retry_after_s: int, grpc_code: grpc.StatusCode):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.retry_after_s, self.grpc_code = retry_after_s, grpc_code


class RequestTimeout(Exception):
    """The request's own deadline (serve.request_timeout_s - serve.deadline_margin_s) passed."""

    def __init__(self, seconds: float):
        super().__init__(
            f"the request did not finish within {seconds:g} s (serve.request_timeout_s minus "
            "serve.deadline_margin_s)"
        )
        self.seconds = seconds


class Admission:
    """In-flight conversions of one ingress replica, in all and per client (one event loop)."""

    def __init__(self, limits: LimitsConfig):
        self.limits = limits
        self.total = 0
        self.per_client: dict[str, int] = {}

    def acquire(self, client: str) -> Callable[[], None]:
        """Count one conversion of `client` in, or raise Refused; returns its (idempotent) release."""
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
        self.total += 1
        self.per_client[client] = self.per_client.get(client, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self.total -= 1
            left = self.per_client[client] - 1
            if left:
                self.per_client[client] = left
            else:
                del self.per_client[client]

        return release

    @contextmanager
    def admit(self, client: str):
        release = self.acquire(client)
        try:
            yield
        finally:
            release()


def grpc_client_id(grpc_context) -> str:
    """A gRPC caller's identity for the per-client limit: its address (host, no port)."""
    if grpc_context is None:
        return "direct"
    metadata = getattr(grpc_context, "invocation_metadata", None)
    for k, v in (metadata() if callable(metadata) else None) or ():
        if k.lower() == PEER_METADATA:
            return peer_host(str(v))
    peer = getattr(grpc_context, "peer", None)
    if callable(peer):
        try:
            return peer_host(peer())
        except Exception:  # noqa: BLE001 - Serve's context may not know it
            pass
    return "grpc"


def peer_host(peer: str) -> str:
    """`ipv4:1.2.3.4:5678` / `ipv6:[::1]:5678` / `1.2.3.4` -> the host part."""
    kind, sep, rest = peer.partition(":")
    addr = rest if sep and kind in ("ipv4", "ipv6", "unix") else peer
    if addr.startswith("["):
        return addr[1:].split("]", 1)[0]
    if addr.count(":") == 1:
        return addr.rsplit(":", 1)[0]
    return addr


async def until_deadline(items: AsyncIterator[T], deadline: float | None, seconds: float | None) -> AsyncIterator[T]:
    """`items`, raising RequestTimeout when `time.monotonic()` passes `deadline` (None = never).
    `items` is not closed here: its owner closes it (which cancels the work still running)."""
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise RequestTimeout(seconds or 0)
        try:
            async with asyncio.timeout(left):
                item = await items.__anext__()
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise RequestTimeout(seconds or 0) from None
        yield item


async def assigned(response) -> None:
    """Wait until Serve assigned a handle call to a replica (its work starts there; the time
    before is queueing). Uses the handle's own step (2.60: `_fetch_future_result_async`); on a
    Ray without it, returns at once (the page clock then includes queueing, as before)."""
    fetch = getattr(response, "_fetch_future_result_async", None)
    if fetch is not None:
        await fetch()


def replica_died(exc: BaseException) -> bool:
    try:
        from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError
    except ImportError:  # pragma: no cover - Ray is a dependency of the served graph
        return False
    return isinstance(exc, (RayActorError, ActorDiedError, ActorUnavailableError))


class WalkHead:
    """A document's triage stream (DocumentHead or InputProblem, then one TriageOutcome per
    page): its first item, and the page numbers it announces."""

    def __init__(self, stream):
        self.stream = stream
        self.numbers: list[int] = []
        self.finished = False

    async def head(self):
        first = await self.stream.__anext__()
        self.numbers = list(getattr(first, "numbers", []))
        self.finished = not hasattr(first, "numbers")  # an InputProblem ends the walk
        return first


class TriageWalk(WalkHead):
    """The Triage deployment's stream of one document. When the replica serving it dies
    mid-walk, the pages it had not sent yet are asked for once more (Serve routes the call to a
    live replica); a second death fails the request. `walk(selection)` starts a stream for a
    page selection."""

    def __init__(self, stream, walk: Callable[[str | None], object], name: str):
        super().__init__(stream)
        self.walk, self.name = walk, name

    async def outcomes(self):
        seen: set[int] = set()
        for attempt in (0, 1):
            try:
                async for outcome in self.stream:
                    seen.add(outcome.page.number)
                    yield outcome
                self.finished = True
                return
            except Exception as exc:
                if attempt or not replica_died(exc):
                    raise
            self.stream = self.walk(missing_pages_text([n for n in self.numbers if n not in seen]))
            if not hasattr(await self.stream.__anext__(), "numbers"):  # its DocumentHead, else a problem
                raise RuntimeError(f"{self.name}: the document could not be reopened after its Triage replica died")

    def cancel(self) -> None:
        if not self.finished:
            self.stream.cancel()


async def stage_call(call: Callable[[], Awaitable[T]], retries: int = 1) -> T:
    """`await call()`, once more if the replica serving it died (Serve routes the retry to a
    live replica); a second death propagates and the page is reported failed with the reason."""
    for attempt in range(retries + 1):
        try:
            return await call()
        except Exception as exc:
            if not replica_died(exc):
                cause = engine_error(exc)
                if cause is exc:
                    raise
                raise cause from exc
            if attempt >= retries:
                # One line naming the crash, not Ray's multi-line actor-death report.
                raise ReplicaDied(
                    f"the replica serving it died ({type(exc).__name__}: process killed or crashed), "
                    f"also on {retries} retry" + ("" if retries == 1 else "s")
                ) from exc
            # Counted by tests/test_serve_faults.py (what a killed replica cost).
            log.warning("pagerouter: a stage replica died mid-call (%s); retrying the call once", type(exc).__name__)
            # The page's clock restarts for the retry; a timeout still names the crash.
            stage_retried(f"its replica died ({type(exc).__name__}) and the call was retried on another")
    raise AssertionError("unreachable")  # pragma: no cover


def engine_error(exc: BaseException) -> BaseException:
    """The exception a stage's engine raised in its replica, not Ray's wrapper around it (whose
    text is a coloured multi-line traceback: a page's error must be one line with the reason)."""
    try:
        from ray.exceptions import RayTaskError
    except ImportError:  # pragma: no cover
        return exc
    cause = getattr(exc, "cause", None) if isinstance(exc, RayTaskError) else None
    return cause if isinstance(cause, Exception) else exc


class ReplicaDied(RuntimeError):
    """A stage call whose replica died on every try."""


__all__ = [
    "PEER_METADATA",
    "Admission",
    "Refused",
    "ReplicaDied",
    "assigned",
    "engine_error",
    "RequestTimeout",
    "TriageWalk",
    "grpc_client_id",
    "missing_pages_text",
    "peer_host",
    "replica_died",
    "stage_call",
    "until_deadline",
]
