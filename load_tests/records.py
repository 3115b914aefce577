"""One line per request (JSONL), written by both generators, read by the report.

A record: `t` (unix s at the answer), `client` (http | grpc), `input` (its name in the mix),
`op` (pages | convert | unary_page | unary_doc | stream), `latency_ms`, `outcome` (ok | expected |
error), `kind` (HTTP status with the error code, e.g. "422:bad_input", or a gRPC status name, or
an exception name, or `wrong_answer`), `pages` (pages answered), `routes` (route of each page),
`users` (the users the profile asked for when the request was sent: its step), `source`.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any


class RecordWriter:
    """Appends records to a JSONL file, one flushed line per request (a killed run keeps them)."""

    def __init__(self, path: str | Path | None):
        self._f = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115 - closed in close()
        self._lock = threading.Lock()
        self.count = 0

    def write(self, **record: Any) -> None:
        record.setdefault("t", time.time())
        line = json.dumps(record, separators=(",", ":"))
        with self._lock:
            self.count += 1
            if self._f is not None:
                self._f.write(line + "\n")
                self._f.flush()

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


def read_records(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def is_unauthorized(kind: str) -> bool:
    """A request the server refused for its API key: HTTP 401, gRPC UNAUTHENTICATED."""
    return kind.split(":", 1)[0] in ("401", "UNAUTHENTICATED")


def is_refusal(kind: str) -> bool:
    """A request the server refused as busy, before or instead of converting it (it asks for a
    retry): HTTP 429/503, gRPC RESOURCE_EXHAUSTED/UNAVAILABLE."""
    return kind.split(":", 1)[0] in ("429", "503", "RESOURCE_EXHAUSTED", "UNAVAILABLE")


def judge(expect_status: int, expect_code: str, status: int, code: str,
          routes: list[str], want_routes: tuple[str, ...]) -> tuple[str, str]:
    """(outcome, kind) of one HTTP answer against what its input must get."""
    kind = f"{status}:{code}" if code else str(status)
    if status != expect_status:
        return "error", kind
    if expect_status != 200:
        return ("expected", kind) if code == expect_code else ("error", kind)
    missing = [r for r in want_routes if r not in routes]
    return ("error", "wrong_answer") if missing or not routes else ("ok", kind)
