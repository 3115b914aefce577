"""Admission of conversions (limits.*): in flight per ingress replica and per client.

`Admission` refuses a conversion before its upload is read: 503 `overloaded` when the replica
already runs limits.max_in_flight_requests, 429 `too_many_requests` when the client already
runs limits.max_requests_per_client, both with Retry-After. (Serve's own queue in front of the
ingress is bounded by serve.max_queued_requests.)
"""

from __future__ import annotations

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

    def acquire(self, client: str) -> Slot:
        """Count one conversion of `client` in, or raise Refused; returns its slot (its release)."""
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
        return Slot(self, client)

    def _release(self, client: str) -> None:
        self.total -= 1
        left = self.per_client[client] - 1
        if left:
            self.per_client[client] = left
        else:
            del self.per_client[client]


class Slot:
    """One admitted conversion. Call it, or leave its `with` block, to release it; a second
    release does nothing (a stream's end and its finaliser may both try)."""

    def __init__(self, admission: Admission, client: str):
        self._admission, self._client, self._released = admission, client, False

    def __call__(self) -> None:
        if not self._released:
            self._released = True
            self._admission._release(self._client)

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *exc) -> None:
        self()
