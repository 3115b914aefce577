"""LargeReader deployment: the escalation tier for flagged pages.

Configured with `min_replicas: 0` it sleeps when idle and wakes on the next escalation (calls
to a zero-replica deployment queue until a replica is up). Callers always bound the wait
(the request's wait: `serve.escalation_timeout_s` for interactive requests,
`serve.escalation_timeout_bulk_s` for bulk ones, enforced in pagerouter.flow.pipeline.ocr_flow): if it cannot come
up (e.g. it asks for a GPU the cluster lacks) the page keeps its first reading, flagged.
Its engine is `ocr.escalation.kind`'s, from the same `EngineSet` the Converter uses.
"""

from __future__ import annotations

import asyncio

from ray import serve

from pagerouter.flow.engines import EngineSet
from pagerouter.common.memory import release_free_memory
from pagerouter.common.stages import OcrTask, Reading
from pagerouter.service.stage_faults import GARBAGE, stage_fault

from .common import load_cfg
from .health import stage_ready


@serve.deployment(name="LargeReader")
class LargeReader:
    def __init__(self, cfg_data: dict, eager: bool = True):
        self.cfg = load_cfg(cfg_data)
        self.engines = EngineSet(self.cfg.ocr)
        self.calls = 0
        if eager and self.cfg.ocr.enabled and self.cfg.ocr.escalation.enabled:
            self.engines.get("escalation")  # a replica counts as up only once its model is loaded

    async def escalate(self, task: OcrTask, first: Reading) -> tuple[Reading, dict[str, str]]:
        """Re-read a flagged page; returns the reading and {engine: version} of this tier."""
        self.calls += 1
        if await stage_fault("escalate", task.source, task.number):  # test-only hook, off by default
            return GARBAGE, {}  # type: ignore[return-value]
        engine = self.engines.get("escalation")
        try:
            reading = await asyncio.to_thread(engine.escalate, task, first)
        finally:
            release_free_memory()  # see pagerouter.common.memory: keeps replica RSS flat
        return reading, self.engines.version_of("escalation")

    def __del__(self) -> None:
        """Serve calls this when the replica shuts down gracefully: the escalation engine it built
        is closed here (a VLM engine stops its vLLM processes), not left to interpreter exit."""
        engines = getattr(self, "engines", None)
        if engines is not None:
            engines.close()

    def ready(self) -> dict:
        """The readiness ping of /healthz (sent only to a running replica: it never wakes one)."""
        return stage_ready("LargeReader")

    def stats(self) -> dict:
        return {"calls": self.calls}
