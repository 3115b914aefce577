"""Layout deployment: region and orientation detection, batched across concurrent pages."""

from __future__ import annotations

import asyncio
from collections import Counter

from ray import serve

from pagerouter.memory import release_free_memory
from pagerouter.stages import LayoutResult, OcrTask

from .common import LazyEngine, load_cfg, per_item, raise_if_error
from .observe import GraphMetrics


@serve.deployment(name="Layout")
class Layout:
    def __init__(self, cfg_data: dict, batching: bool = True, eager: bool = True, metrics: bool = True):
        self.cfg = load_cfg(cfg_data)
        settings = self.cfg.serve.layout
        self.batching = batching
        if batching:  # the decorator's numbers are placeholders; config decides
            self._detect_batch.set_max_batch_size(settings.max_batch_size)
            self._detect_batch.set_batch_wait_timeout_s(settings.batch_wait_timeout_s)
        self.engine = LazyEngine(self._build)
        self.batch_sizes: Counter[int] = Counter()
        self.metrics = GraphMetrics(metrics)
        if eager and self.cfg.ocr.enabled:
            self.engine.get()

    def _build(self):
        from pagerouter.ocr.api import build_layout_engine

        return build_layout_engine(self.cfg.ocr)

    def _run(self, tasks: list[OcrTask]) -> list[LayoutResult | Exception]:
        """One result per task; a task whose detection raised gets its exception.

        A Serve batch mixes pages of different requests, so one bad page must not fail the
        others: each task is detected on its own (today's engines loop per task anyway)."""
        self.batch_sizes[len(tasks)] += 1
        self.metrics.batch_size.observe(len(tasks), tags={"stage": "layout"})
        engine = self.engine.get()
        try:
            return [per_item(engine.detect_batch, [task]) for task in tasks]
        finally:
            release_free_memory()  # see pagerouter.memory: keeps replica RSS flat

    async def detect(self, task: OcrTask) -> LayoutResult:
        if self.batching:
            return raise_if_error(await self._detect_batch(task))
        return raise_if_error((await asyncio.to_thread(self._run, [task]))[0])

    @serve.batch(max_batch_size=4, batch_wait_timeout_s=0.02)
    async def _detect_batch(self, tasks: list[OcrTask]) -> list[LayoutResult | Exception]:
        return await asyncio.to_thread(self._run, tasks)

    def describe(self) -> dict[str, str]:
        return self.engine.versions()

    def stats(self) -> dict:
        """Engine calls by batch size (tests and the benchmark read it)."""
        return {"batch_sizes": dict(self.batch_sizes), "batching": self.batching}
