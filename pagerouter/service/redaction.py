"""The config as the API shows it (/v1/config): every secret replaced by "***".

Numbers and booleans stay (they are limits, not secrets); the server's API key is hidden
wherever it appears as a value, bare, as "Bearer KEY", or inside a longer string.
"""

from __future__ import annotations

from typing import Any

_SECRET_PARTS = ("password", "passwd", "api_key", "apikey", "secret", "credential", "authorization")


def is_secret_key(key: str) -> bool:
    """Whether a config key names a secret. `token` counts only as the whole word or a `_token`
    suffix (hf_token, access_token): `max_tokens`, `min_tokens_per_page` are thresholds."""
    k = key.lower().replace("-", "_")
    return any(p in k for p in _SECRET_PARTS) or k == "token" or k.endswith("_token")


def redact(obj: Any, secret: bool = False, api_key=None) -> Any:
    """`obj` with every non-empty string under a secret key replaced by "***" (numbers and
    booleans stay: they are limits, not secrets). `api_key` (a str, or an `api_key.ApiKey`,
    which never reveals itself) is hidden wherever it appears as a value, bare or as "Bearer KEY"."""
    if isinstance(obj, dict):
        return {k: redact(v, secret or (isinstance(k, str) and is_secret_key(k)), api_key) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact(v, secret, api_key) for v in obj]
    if isinstance(obj, str) and obj:
        if secret or _is_the_key(api_key, obj):
            return "***"
    return obj


def _is_the_key(api_key, value: str) -> bool:
    if api_key is None:
        return False
    if isinstance(api_key, str):
        return api_key in value
    # a substring test, not only the whole value: a key inside a URL or a longer env value must go too
    # (no need for constant time here: the answer is redacted either way)
    return api_key.matches(value) or api_key.accepts_header(value) or api_key._secret in value.encode("utf-8", "ignore")


def public_config(cfg) -> dict[str, Any]:
    """The pagerouter config, secrets redacted (see `redact`)."""
    return redact(cfg.model_dump(mode="json"))
