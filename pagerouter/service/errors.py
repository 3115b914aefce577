"""The one error shape of the API, `{"error": {"code", "message", "request_id"}}`, and the
exception that carries a client mistake to it (a 4xx status, a code, one line naming the fault)."""

from __future__ import annotations

from typing import Any


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
