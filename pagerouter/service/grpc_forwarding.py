"""gRPC calls forwarded as bytes: the front server (graph/grpc_front.py) to the ingress.

The front server checks the API key, drops the `authorization` metadata (the key never crosses
into Ray) and calls the Ingress's `grpc_unary` / `grpc_stream` with the method name, the
serialized request and the remaining metadata. The rpc method runs against a `RecordingContext`
whose status (code, details, trailing metadata) goes back with the reply.
"""

from __future__ import annotations

from pagerouter.wire.protos import pagerouter_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["PageRouter"]


def grpc_request_type(method: str, *, streaming: bool):
    """The request message class of one PageRouter rpc; ValueError for anything else (the
    front only forwards the service's own methods, with the right arity)."""
    desc = SERVICE.methods_by_name.get(method)
    if desc is None or desc.client_streaming or desc.server_streaming != streaming:
        raise ValueError(f"not a {'server-streaming' if streaming else 'unary'} PageRouter rpc: {method!r}")
    return getattr(pb, desc.input_type.name)


class RecordingContext:
    """The subset of a gRPC servicer context the Ingress methods use, recorded for the front.

    `authenticated_upstream`: the front server already checked the API key."""

    authenticated_upstream = True

    def __init__(self, metadata, request_id: str):
        self._metadata = tuple((str(k), v) for k, v in metadata or ())
        self._request_id = request_id
        self._code = None
        self._details = ""
        self._trailing: list[tuple[str, str]] = []

    def invocation_metadata(self):
        return self._metadata

    def request_id(self) -> str:
        return self._request_id

    def set_code(self, code) -> None:
        self._code = code

    def set_details(self, details: str) -> None:
        self._details = details

    def set_trailing_metadata(self, metadata) -> None:
        self._trailing = [(str(k), v) for k, v in metadata]

    def outcome(self) -> tuple[str | None, str, list[tuple[str, str]]]:
        """(status code name or None for OK, details, trailing metadata incl. the request id)."""
        code = self._code.name if self._code is not None else None
        return code, self._details, [*self._trailing, ("request_id", self._request_id)]
