"""The HTTP error handlers of the ingress: every error, expected or not, in the one JSON shape
`{"error": {code, message, request_id}}` (pagerouter.service.errors), Retry-After where it applies."""

# No `from __future__ import annotations`: FastAPI resolves the handlers' annotations.

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pagerouter.service.errors import ApiError, error_body, internal_message

from .observe import current_request_id


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
