"""Ingress helpers: the status of an input problem per front end, gRPC status setting, the
HTTP error handlers (every error in the one JSON shape, Retry-After where it applies).

Kept apart from deployments/ingress.py so that file stays the conversion paths only."""

# No `from __future__ import annotations`: FastAPI resolves the handlers' annotations.

import grpc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pagerouter.wire.items import InputProblem

from .auth import UNAUTHORIZED_CODE, UNAUTHORIZED_MESSAGE, metadata_authorized
from .http_input import ApiError, error_body, internal_message
from .observe import current_request_id

_PROBLEM_STATUS = {"bad_input": 422, "bad_pages": 422, "bad_request": 422, "too_many_pages": 413, "timeout": 504}
_PROBLEM_GRPC = {"too_many_pages": grpc.StatusCode.RESOURCE_EXHAUSTED, "timeout": grpc.StatusCode.DEADLINE_EXCEEDED}


def _grpc_problem(grpc_context, problem: InputProblem) -> None:
    """Bad input over gRPC: INVALID_ARGUMENT (or the limit's code), the message as details, the code in metadata."""
    if grpc_context is None:
        return
    grpc_context.set_code(_PROBLEM_GRPC.get(problem.code, grpc.StatusCode.INVALID_ARGUMENT))
    grpc_context.set_details(problem.message)
    grpc_context.set_trailing_metadata([("error-code", problem.code)])

# The core's input errors speak to the CLI user ("(--password)"); the API has a field instead.
_CLI_PASSWORD_HINT = "(--password)"
_API_PASSWORD_HINT = "(send it in the request's `password` field)"


def _for_api(problem: InputProblem) -> InputProblem:
    """An input problem worded for an API caller (no CLI flags)."""
    if _CLI_PASSWORD_HINT not in problem.message:
        return problem
    return InputProblem(
        problem.code, problem.message.replace(_CLI_PASSWORD_HINT, _API_PASSWORD_HINT), problem.source,
        problem.page, problem.detail.replace(_CLI_PASSWORD_HINT, _API_PASSWORD_HINT),
    )


def _grpc_unauthenticated(grpc_context, api_key) -> bool:
    """True (and the call's status set to UNAUTHENTICATED) when the call lacks the API key.
    Without a context (a direct call) there is no metadata, so a configured key refuses it."""
    if api_key is None or getattr(grpc_context, "authenticated_upstream", False):
        return False
    metadata = grpc_context.invocation_metadata() if grpc_context is not None else ()
    if metadata_authorized(api_key, metadata):
        return False
    if grpc_context is not None:
        grpc_context.set_code(grpc.StatusCode.UNAUTHENTICATED)
        grpc_context.set_details(UNAUTHORIZED_MESSAGE)
        grpc_context.set_trailing_metadata([("error-code", UNAUTHORIZED_CODE)])
    return True


def _single_page_problem(number: int, name: str) -> InputProblem | None:
    """A page number below 1 is a bad selection, not a range: "-3" would read as pages 1-3."""
    if number >= 1:
        return None
    detail = f"page {number} requested; pages are numbered from 1"
    return InputProblem("bad_pages", f"{name}: {detail}", name, None, detail)

def _grpc_wait(request) -> tuple[str | None, float | None]:
    """(wait, escalation_wait_s) of a ConvertRequest or PageRequest ("" and unset = defaults)."""
    return request.wait or None, request.escalation_wait_s if request.HasField("escalation_wait_s") else None


def install_error_handlers(api: FastAPI) -> None:
    """Every HTTP error, expected or not, in the one shape `{"error": {code, message, request_id}}`."""

    @api.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        rid = current_request_id()
        return JSONResponse(error_body(exc.code, exc.message, rid), status_code=exc.status, headers=exc.headers)

    @api.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return await _api_error(request, ApiError(400, "bad_request", f"invalid request: {exc.errors()[:3]}"))

    @api.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return await _api_error(request, ApiError(exc.status_code, code, str(exc.detail)))

    @api.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Starlette re-raises after sending this, so Serve still logs the traceback server-side;
        # the client gets the documented shape and no traceback.
        from ray.serve.exceptions import BackPressureError

        if isinstance(exc, BackPressureError) or isinstance(getattr(exc, "cause", None), BackPressureError):
            cfg_retry = {"Retry-After": "5"}  # a stage's queue is full (its max_queued_requests)
            return await _api_error(request, ApiError(503, "overloaded", "the server is at capacity; retry later", cfg_retry))
        return await _api_error(request, ApiError(500, "internal", internal_message(exc)))
