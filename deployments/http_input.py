"""HTTP input handling of the ingress: uploads (multipart or raw body), options, error shape.

Multipart bodies are parsed with the standard library's MIME parser (no python-multipart
dependency). Every client mistake becomes an `ApiError` with a 4xx status and the one error
shape `{"error": {"code", "message", "request_id"}}`.
"""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import json
from typing import Any

from fastapi import Request

from pagerouter.config import PagerouterConfig
from pagerouter.flow.options import OptionError, RequestOptions, _Options, check_served_languages

from .auth import OPEN_PATHS, UNAUTHORIZED_CODE, UNAUTHORIZED_MESSAGE, server_api_key
from .observe import current_request_id


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def error_body(code: str, message: str, request_id: str = "") -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "request_id": request_id}}


def internal_message(exc: BaseException) -> str:
    """A one-line message for an unexpected error: its type and first line, never a traceback.

    A stage's error arrives as Ray's RayTaskError, whose str() is the remote traceback; its
    `cause` is the original exception."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        exc = cause
    lines = str(exc).strip().splitlines()
    first = lines[0][:200] if lines else ""
    return f"internal error ({type(exc).__name__}{': ' + first if first else ''}); details are in the server log"


async def parse_upload(request: Request, max_upload_mb: float) -> tuple[bytes, str, dict[str, str]]:
    """(file bytes, file name, options) from a multipart form (field `file`) or a raw body.

    Options come from the query string; multipart text fields override them. The file name is
    the multipart part's name, else the `filename` field (which stays among the options).
    """
    limit = int(max_upload_mb * 1024 * 1024)
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, "too_large", f"upload of {int(declared)} bytes exceeds the {max_upload_mb:g} MB limit")
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise ApiError(413, "too_large", f"upload exceeds the {max_upload_mb:g} MB limit")
    fields = dict(request.query_params)
    ctype = request.headers.get("content-type", "")
    name = fields.get("filename") or "-"
    if ctype.lower().startswith("multipart/form-data"):
        # The MIME parser walks the whole body in Python: tens of MB block for a while.
        data, fname, form = await asyncio.to_thread(_parse_multipart, ctype, bytes(body))
        fields.update(form)
        name = fname or name
    else:
        data = bytes(body)
    if not data:
        raise ApiError(400, "empty_upload", "no file in the request: send a PDF or image as the body or as form field `file`")
    return data, name, fields


def _parse_multipart(ctype: str, body: bytes) -> tuple[bytes, str | None, dict[str, str]]:
    if "boundary=" not in ctype:
        raise ApiError(400, "bad_request", "multipart upload without a boundary")
    head = f"Content-Type: {ctype}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    if not msg.is_multipart():
        raise ApiError(400, "bad_request", "malformed multipart upload")
    data: bytes | None = None
    fname: str | None = None
    fields: dict[str, str] = {}
    for part in msg.iter_parts():
        field = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True) or b""
        if part.get_filename() is not None or field == "file":
            if data is not None:
                raise ApiError(400, "bad_request", "send one file per request")
            data, fname = payload, part.get_filename()
        elif field:
            fields[str(field)] = payload.decode("utf-8", "replace")
    if data is None:
        raise ApiError(400, "empty_upload", "multipart upload has no `file` field")
    return data, fname, fields


def request_options(fields: dict[str, str], model: type[_Options] = RequestOptions) -> _Options:
    """The validated options of one request's query and form fields: 422 `bad_request` naming
    an unknown field (with the accepted ones), a bad value, or a language pack not installed."""
    try:
        opts = model.from_fields(fields)
        check_served_languages(opts)
    except OptionError as exc:
        raise ApiError(422, exc.code, exc.message) from None
    return opts


class ApiKeyMiddleware:
    """Pure ASGI middleware: every HTTP path but `OPEN_PATHS` needs `Authorization: Bearer KEY`
    when this process has an API key (`deployments.auth`); otherwise a 401 in the one error shape.
    Pure ASGI (not BaseHTTPMiddleware) so streaming responses and disconnects pass untouched."""

    def __init__(self, app):
        self.app = app
        self.key = server_api_key()  # read in the replica, from its own environment

    async def __call__(self, scope, receive, send):
        if self.key is None or scope["type"] != "http" or _route_path(scope) in OPEN_PATHS:
            return await self.app(scope, receive, send)
        header = next((v for k, v in scope.get("headers") or () if k == b"authorization"), None)
        if self.key.accepts_header(header):
            return await self.app(scope, receive, send)
        body = json.dumps(error_body(UNAUTHORIZED_CODE, UNAUTHORIZED_MESSAGE, current_request_id())).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="pagerouter"'),
        ]})
        await send({"type": "http.response.body", "body": body})


def _route_path(scope) -> str:
    """The path within the application (Serve mounts an app under its route prefix)."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and root != "/" and path.startswith(root):
        path = path[len(root):] or "/"
    return path.rstrip("/") or "/"


def public_config(cfg: PagerouterConfig) -> dict[str, Any]:
    """Moved to deployments.health.public_config (redacts only real secrets); kept for old callers."""
    from .health import public_config as redacted

    return redacted(cfg)
