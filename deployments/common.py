"""Helpers shared by the deployments: config decoding, a page's own error out of a batch.

Deployments are thin shells: they decode the pagerouter config they were bound with, hold
their engine in a `pagerouter.flow.engines.EngineSet` (built when the replica starts, unless told
otherwise) and call the core code in pagerouter/.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pagerouter.config import PagerouterConfig

T = TypeVar("T")


def load_cfg(cfg_data: dict[str, Any] | PagerouterConfig) -> PagerouterConfig:
    if isinstance(cfg_data, PagerouterConfig):
        return cfg_data
    return PagerouterConfig.model_validate(cfg_data)


def raise_if_error(result: T | Exception) -> T:
    if isinstance(result, Exception):
        raise result
    return result
