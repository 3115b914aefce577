"""A process-wide engine built on the first page that needs it, once: a model load costs about a
second, and a load that failed is not retried on every page (each later page gets the first
failure's one line)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class LoadOnce(Generic[T]):
    def __init__(self) -> None:
        self.value: T | None = None
        self._error: str | None = None
        self._lock = threading.Lock()

    def get(self, build: Callable[[], T]) -> T:
        if self.value is None:
            with self._lock:
                if self._error is not None:
                    raise RuntimeError(self._error)
                if self.value is None:
                    try:
                        self.value = build()
                    except Exception as exc:
                        self._error = f"{type(exc).__name__}: {exc}"[:300]
                        raise
        return self.value
