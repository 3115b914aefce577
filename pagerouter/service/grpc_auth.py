"""The API key check of a gRPC method called by Serve's own gRPC proxy (which checks nothing).

Calls forwarded by `pagerouter serve`'s front (graph/grpc_front.py) were checked there: their
context says `authenticated_upstream`."""

from __future__ import annotations

import grpc

from .api_key import UNAUTHORIZED_CODE, UNAUTHORIZED_MESSAGE, ApiKey, metadata_authorized
from .error_status import set_grpc_status


def grpc_unauthenticated(grpc_context, api_key: ApiKey | None) -> bool:
    """True (and the call's status set to UNAUTHENTICATED) when the call lacks the API key.
    Without a context (a direct call) there is no metadata, so a configured key refuses it."""
    if api_key is None or getattr(grpc_context, "authenticated_upstream", False):
        return False
    metadata = grpc_context.invocation_metadata() if grpc_context is not None else ()
    if metadata_authorized(api_key, metadata):
        return False
    set_grpc_status(grpc_context, grpc.StatusCode.UNAUTHENTICATED, UNAUTHORIZED_MESSAGE, UNAUTHORIZED_CODE)
    return True
