"""The API key of the HTTP and gRPC API: where it comes from, how it is checked.

The key is read from the environment of the process that needs it (the ingress replica, the
`pagerouter serve` gRPC front, a client): `PAGEROUTER_API_KEY`, or the first line of the file
named by `PAGEROUTER_API_KEY_FILE`. It is never part of the pagerouter config, so it is never
in `/v1/config`, a Serve deployment's arguments or Ray's GCS. Callers send it as
`Authorization: Bearer KEY` (gRPC metadata `authorization`); it is compared in constant time.
`ApiKey` keeps the secret out of reprs and refuses to be pickled.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from .doc_assets import DOC_PATHS

ENV_KEY = "PAGEROUTER_API_KEY"
ENV_KEY_FILE = "PAGEROUTER_API_KEY_FILE"

UNAUTHORIZED_CODE = "unauthorized"
UNAUTHORIZED_MESSAGE = "missing or wrong API key: send `Authorization: Bearer <key>` (gRPC metadata `authorization`)"
# Paths that answer without a key: liveness, and the API description (it holds no data).
OPEN_PATHS = frozenset({"/healthz", "/livez", "/openapi.json", "/docs/oauth2-redirect"}) | DOC_PATHS


class ApiKeyError(ValueError):
    """The key's source is unusable (unreadable or empty file, both variables set, bad characters).
    The message names the variable or file, never the key."""


class ApiKey:
    """A secret API key. Its repr and str hide it; it cannot be pickled (so it never travels
    into a Serve deployment's arguments by accident)."""

    __slots__ = ("_secret",)

    def __init__(self, secret: str):
        if not secret or any(not (33 <= ord(c) <= 126) for c in secret):
            raise ApiKeyError("an API key must be non-empty printable ASCII without spaces")
        self._secret = secret.encode("ascii")

    def __repr__(self) -> str:
        return "ApiKey(***)"

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("an ApiKey is not pickled: each process reads it from its own environment")

    def matches(self, presented: str | bytes | None) -> bool:
        """Constant-time comparison with a presented key (None or empty never matches)."""
        if not presented:
            return False
        raw = presented.encode("latin-1", "replace") if isinstance(presented, str) else presented
        return hmac.compare_digest(raw, self._secret)

    def accepts_header(self, value: str | bytes | None) -> bool:
        """Whether an `Authorization` header (or gRPC `authorization` metadata) value carries this key."""
        return self.matches(bearer_token(value))

    def header_value(self) -> str:
        """`Bearer KEY`, for clients."""
        return "Bearer " + self._secret.decode("ascii")


def bearer_token(value: str | bytes | None) -> bytes | None:
    """The token of `Bearer TOKEN` (scheme case-insensitive), else None."""
    if not value:
        return None
    raw = value if isinstance(value, bytes) else value.encode("latin-1", "replace")
    scheme, _, token = raw.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    return token.strip() or None


def load_api_key(environ: Mapping[str, str] | None = None) -> ApiKey | None:
    """The configured key, or None when neither variable is set (auth off).

    Raises ApiKeyError when the file cannot be read or is empty, or both variables are set."""
    env = os.environ if environ is None else environ
    direct = env.get(ENV_KEY, "")
    path = env.get(ENV_KEY_FILE, "")
    if direct and path:
        raise ApiKeyError(f"set {ENV_KEY} or {ENV_KEY_FILE}, not both")
    if path:
        try:
            text = Path(path).read_text(encoding="ascii", errors="strict")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise ApiKeyError(f"{ENV_KEY_FILE}={path}: cannot read the key file ({why})") from None
        lines = text.strip().splitlines()
        if not lines or not lines[0].strip():
            raise ApiKeyError(f"{ENV_KEY_FILE}={path}: the key file is empty")
        try:
            return ApiKey(lines[0].strip())
        except ApiKeyError as exc:
            raise ApiKeyError(f"{ENV_KEY_FILE}={path}: {exc}") from None
    if direct:
        try:
            return ApiKey(direct.strip())
        except ApiKeyError as exc:
            raise ApiKeyError(f"{ENV_KEY}: {exc}") from None
    return None


_SERVER_KEY: list[ApiKey | None] = []


def server_api_key(required: bool = False) -> ApiKey | None:
    """This process's key, read once from its environment (the ingress replica, the gRPC front).

    `required`: the application was built with a key (where it was built), so a serving process
    without one must not start (RuntimeError) instead of silently serving without a key."""
    if not _SERVER_KEY:
        _SERVER_KEY.append(load_api_key())
    if required and _SERVER_KEY[0] is None:
        raise RuntimeError(
            f"the application was built with an API key but this replica has none: set {ENV_KEY} or "
            f"{ENV_KEY_FILE} in the environment of every Ray node"
        )
    return _SERVER_KEY[0]


def metadata_authorized(key: ApiKey | None, metadata: Iterable[tuple[str, str | bytes]] | None) -> bool:
    """Whether gRPC invocation metadata carries the key (always True when auth is off)."""
    if key is None:
        return True
    return any(k.lower() == "authorization" and key.accepts_header(v) for k, v in metadata or ())


def is_loopback(host: str) -> bool:
    """Whether a listen address reaches only this machine (127.0.0.0/8, ::1, `localhost`)."""
    h = host.strip().strip("[]")
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False
