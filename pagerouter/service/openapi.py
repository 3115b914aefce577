"""OpenAPI of the POST routes (/v1/convert, /v1/pages, /v1/jobs), generated from the request-options models.

The conversion routes take a raw `Request` (uploads are streamed and counted against the size
limit before anything is parsed), so FastAPI cannot infer their body or parameters; this module
documents them from `pagerouter.flow.options` itself, so the schema cannot drift from what
the ingress validates: every option as a query parameter and as a multipart form field, the
raw-body content types, and the error responses in the one error shape.
"""

from __future__ import annotations

from typing import Any

from pagerouter.flow.options import _Options

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {
        "type": "object",
        "required": ["code", "message", "request_id"],
        "properties": {
            "code": {"type": "string", "description": "Machine-readable error code, e.g. `bad_request`, `too_large`."},
            "message": {"type": "string", "description": "One line naming the file, page or option at fault."},
            "request_id": {"type": "string", "description": "The request's id (also in the x-request-id header)."},
        },
    }},
}

_ERRORS = {
    400: "Not a usable upload: empty body, no `file` part, malformed multipart.",
    401: "Missing or wrong API key (`Authorization: Bearer KEY`) when the server has one.",
    413: "Upload larger than serve.max_upload_mb, or more pages than limits.max_pages.",
    422: "Unknown option, bad option value (named with the accepted ones or the value), stream=true with "
         "format=md, a language pack not installed, an unreadable file or a page selection the file lacks.",
    429: "Too many concurrent requests from this client (limits); see Retry-After.",
    503: "The server is at capacity (max_queued_requests); retry after Retry-After seconds.",
    504: "The request did not finish within its time budget; the message names the pages not converted.",
}

OPTION_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"description": text, "content": {"application/json": {"schema": ERROR_SCHEMA}}}
    for status, text in _ERRORS.items()
}
OPTION_RESPONSES[200] = {
    "description": "The converted document (`format=json`), its Markdown (`format=md`), or NDJSON lines, one per "
    "page then a `document` line or an `error` line naming the pages not delivered (`stream=true`).",
    "content": {
        "application/json": {"schema": {"type": "object", "description": "Document (see /v1/schema)"}},
        "text/markdown": {"schema": {"type": "string"}},
        "application/x-ndjson": {"schema": {"type": "string"}},
    },
}

_BINARY = {"type": "string", "format": "binary"}


def _option_schemas(model: type[_Options]) -> dict[str, dict[str, Any]]:
    schema = model.model_json_schema()
    props = schema.get("properties", {})
    for prop in props.values():
        prop.pop("title", None)
    return props


def option_body(model: type[_Options]) -> dict[str, Any]:
    """`openapi_extra` for a POST route whose options are `model`: query parameters, and a
    request body that is multipart (`file` + the same options as form fields) or the raw file."""
    props = _option_schemas(model)
    parameters = [
        {"name": name, "in": "query", "required": False, "description": prop.get("description", ""),
         "schema": {k: v for k, v in prop.items() if k != "description"}}
        for name, prop in props.items()
    ]
    multipart = {
        "type": "object",
        "required": ["file"],
        "properties": {"file": {**_BINARY, "description": "The PDF or page image (PNG, JPEG, TIFF, ...)."}, **props},
        "additionalProperties": False,
    }
    raw = {**_BINARY, "description": "The file itself; options in the query string."}
    return {
        "parameters": parameters,
        "requestBody": {
            "required": True,
            "description": "A multipart form with the file as `file` (options as form fields override the query), "
            "or the file as the raw body. Unknown options are refused (422).",
            "content": {
                "multipart/form-data": {"schema": multipart},
                "application/pdf": {"schema": raw},
                "image/*": {"schema": raw},
                "application/octet-stream": {"schema": raw},
            },
        },
    }


# POST /v1/jobs: the upload errors of /v1/convert, 202 instead of 200, no 504 (no deadline).
JOB_RESPONSES: dict[int | str, dict[str, Any]] = {k: v for k, v in OPTION_RESPONSES.items() if k not in (200, 504)}
JOB_RESPONSES[202] = {"description": "The job was accepted: its status (`id`, `state` queued), Location /v1/jobs/{id}."}
JOB_RESPONSES[503] = {**OPTION_RESPONSES[503], "description": "At capacity, or serve.jobs.max_queued jobs already "
                      "waiting or running (`jobs_full`); retry after Retry-After seconds."}
