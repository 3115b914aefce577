"""The API key check of the HTTP API, as pure ASGI middleware.

Every HTTP path but `api_key.OPEN_PATHS` needs `Authorization: Bearer KEY` when this process has
an API key; otherwise a 401 in the one error shape. Pure ASGI (not Starlette's
BaseHTTPMiddleware) so streaming responses and disconnects pass untouched.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

from .api_key import OPEN_PATHS, UNAUTHORIZED_CODE, UNAUTHORIZED_MESSAGE, server_api_key
from .errors import error_body


class ApiKeyMiddleware:
    """`request_id()` names the refused request in its 401 body (the ingress passes Serve's own
    id, which the proxy echoes as `x-request-id`)."""

    def __init__(self, app, request_id: Callable[[], str] = lambda: uuid.uuid4().hex):
        self.app = app
        self.request_id = request_id
        self.key = server_api_key()  # read in the serving process, from its own environment

    async def __call__(self, scope, receive, send):
        if self.key is None or scope["type"] != "http" or route_path(scope) in OPEN_PATHS:
            return await self.app(scope, receive, send)
        header = next((v for k, v in scope.get("headers") or () if k == b"authorization"), None)
        if self.key.accepts_header(header):
            return await self.app(scope, receive, send)
        body = json.dumps(error_body(UNAUTHORIZED_CODE, UNAUTHORIZED_MESSAGE, self.request_id())).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="pagerouter"'),
        ]})
        await send({"type": "http.response.body", "body": body})


def route_path(scope) -> str:
    """The path within the application (Serve mounts an app under its route prefix)."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and root != "/" and path.startswith(root):
        path = path[len(root):] or "/"
    return path.rstrip("/") or "/"
