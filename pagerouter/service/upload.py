"""An HTTP upload: the file and its fields from a multipart form (field `file`) or a raw body.

Multipart bodies are parsed with the standard library's MIME parser (no python-multipart
dependency). The body is counted against the size limit while it streams in, before anything
is parsed. Every client mistake is an `ApiError` (400 or 413).
"""

from __future__ import annotations

import asyncio
import email.parser
import email.policy

from .errors import ApiError


async def parse_upload(request, max_upload_mb: float) -> tuple[bytes, str, dict[str, str]]:
    """(file bytes, file name, options) of a Starlette `Request`.

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
        data, fname, form = await asyncio.to_thread(parse_multipart, ctype, bytes(body))
        fields.update(form)
        name = fname or name
    else:
        data = bytes(body)
    if not data:
        raise ApiError(400, "empty_upload", "no file in the request: send a PDF or image as the body or as form field `file`")
    return data, name, fields


def parse_multipart(ctype: str, body: bytes) -> tuple[bytes, str | None, dict[str, str]]:
    """(file bytes, its part's file name, the text fields) of a multipart/form-data body."""
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
