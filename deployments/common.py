"""Helpers shared by the deployments: config decoding, lazy engines, the batching guard.

Deployments are thin shells: they decode the pagerouter config they were bound with, build
their engine (eagerly when served, lazily in-process so a born-digital CLI run never loads
a model) and call the core code in pagerouter/.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import ray

from pagerouter.config import PagerouterConfig

T = TypeVar("T")

# Ray Serve 2.60: `@serve.batch` asks `serve.get_replica_context()` when its queue is created,
# which raises in local testing mode (in-process). The graph therefore calls engines unbatched
# in-process. tests/test_serve_local.py::test_serve_batch_still_broken_in_local_mode fails as
# soon as a Ray upgrade fixes this, so the guard can be dropped then.
BATCH_BROKEN_IN_LOCAL_MODE: dict[str, bool] = {"2.60.0": True}


def batching_supported(local: bool) -> bool:
    """Can `@serve.batch` run here? Always when served; in-process only if Ray fixed the bug."""
    if not local:
        return True
    return not BATCH_BROKEN_IN_LOCAL_MODE.get(ray.__version__, True)


def load_cfg(cfg_data: dict[str, Any] | PagerouterConfig) -> PagerouterConfig:
    if isinstance(cfg_data, PagerouterConfig):
        return cfg_data
    return PagerouterConfig.model_validate(cfg_data)


class LazyEngine(Generic[T]):
    """Build an engine once, on first use, thread-safely (engines run in worker threads)."""

    def __init__(self, factory: Callable[[], T]):
        self._factory = factory
        self._engine: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    self._engine = self._factory()
        return self._engine

    @property
    def built(self) -> bool:
        return self._engine is not None

    def versions(self) -> dict[str, str]:
        e = self.get()
        return {e.name: e.version}  # type: ignore[attr-defined]


def per_item(batch_call: Callable[..., list[T]], *one_item_lists: list[Any]) -> T | Exception:
    """`batch_call` on a one-item batch: its single result, or the exception it raised.

    Batched deployments run each task of a Serve batch this way so one bad page fails only
    its own request; the per-call wrapper re-raises with `raise_if_error`."""
    try:
        (result,) = batch_call(*one_item_lists)
        return result
    except Exception as exc:  # noqa: BLE001 - handed back to the one caller it belongs to
        return exc


def raise_if_error(result: T | Exception) -> T:
    if isinstance(result, Exception):
        raise result
    return result
