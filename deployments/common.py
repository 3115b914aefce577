"""Helpers shared by the deployments: config decoding, per-page results of a batch.

Deployments are thin shells: they decode the pagerouter config they were bound with, hold
their engine in a `pagerouter.flow.engines.EngineSet` (built when the replica starts, unless told
otherwise) and call the core code in pagerouter/.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pagerouter.config import PagerouterConfig

T = TypeVar("T")


def load_cfg(cfg_data: dict[str, Any] | PagerouterConfig) -> PagerouterConfig:
    if isinstance(cfg_data, PagerouterConfig):
        return cfg_data
    return PagerouterConfig.model_validate(cfg_data)


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
