"""The one error type both clients raise, carrying the server's error shape."""

from __future__ import annotations

from pathlib import Path


class PagerouterClientError(Exception):
    """A request failed: `status` (HTTP status or gRPC code name), `code` and `message` as
    the server sent them (`{"error": {"code", "message", "request_id"}}` over HTTP), and the
    seconds the server asked to wait before trying again (`Retry-After`, or gRPC's `retry-after`
    trailer; None when it gave none). Refusals worth repeating are repeated (clients/retry.py)
    before one reaches the caller."""

    def __init__(self, status: int | str, code: str, message: str, request_id: str = "",
                 retry_after_s: float | None = None):
        super().__init__(f"{code}: {message}" + (f" (request {request_id})" if request_id else ""))
        self.status, self.code, self.message, self.request_id = status, code, message, request_id
        self.retry_after_s = retry_after_s


def read_input(file: str | Path | bytes, filename: str | None) -> tuple[bytes, str]:
    """(bytes, name) of a path or raw bytes; a missing file is a client error, not a traceback."""
    if isinstance(file, (bytes, bytearray, memoryview)):
        return bytes(file), filename or "-"
    p = Path(file)
    try:
        return p.read_bytes(), filename or p.name
    except OSError as exc:
        raise PagerouterClientError("local", "bad_input", f"{p}: cannot read: {exc.strerror or exc}") from None


def resolve_api_key(api_key: str | None):
    """The key a client sends: `api_key` if given ("" = none), else PAGEROUTER_API_KEY or the
    file named by PAGEROUTER_API_KEY_FILE (the server's variables); None when there is none.
    A bad key source is a client error naming the variable or file, never the key."""
    from pagerouter.service.api_key import ApiKey, ApiKeyError, load_api_key

    try:
        if api_key is not None:
            return ApiKey(api_key) if api_key else None
        return load_api_key()
    except ApiKeyError as exc:
        raise PagerouterClientError("local", "bad_api_key", str(exc)) from None
