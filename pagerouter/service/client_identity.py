"""Who a caller is, for the per-client admission limit: its host, never its port.

Behind `pagerouter serve`'s gRPC front (graph/grpc_front.py) the ingress sees the front, not the
caller; the front passes the caller's address in PEER_METADATA, from the connection (a caller's
own value under that name is dropped there)."""

from __future__ import annotations

PEER_METADATA = "x-pagerouter-peer"


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


def http_client_id(request) -> str:
    """An HTTP caller's identity for the per-client limit (a Starlette `Request`)."""
    return request.client.host if request.client else "http"


def peer_host(peer: str) -> str:
    """`ipv4:1.2.3.4:5678` / `ipv6:[::1]:5678` / `1.2.3.4` -> the host part."""
    kind, sep, rest = peer.partition(":")
    addr = rest if sep and kind in ("ipv4", "ipv6", "unix") else peer
    if addr.startswith("["):
        return addr[1:].split("]", 1)[0]
    if addr.count(":") == 1:
        return addr.rsplit(":", 1)[0]
    return addr
