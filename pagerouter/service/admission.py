"""Admission of conversions (limits.*): in flight per ingress replica and per client.

`Admission` refuses a conversion before its upload is read: 503 `overloaded` when the replica
already runs limits.max_in_flight_requests, 429 `too_many_requests` when the client already
runs limits.max_requests_per_client, both with Retry-After. (Serve's own queue in front of the
ingress is bounded by serve.max_queued_requests.)
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

import grpc

from pagerouter.config.limits import LimitsConfig


class Refused(Exception):
    """A request refused before any work: HTTP status, error code, message, Retry-After, gRPC code."""

    def __init__(self, status: int, code: str, message: str, retry_after_s: int, grpc_code: grpc.StatusCode):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.retry_after_s, self.grpc_code = retry_after_s, grpc_code


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
