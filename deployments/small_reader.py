"""SmallReader deployment: the first reader of OCR pages (CPU OCR today; a vLLM engine later).

The engine comes from `cfg.ocr` via `build_small_reader`; batched across concurrent pages.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from ray import serve

from pagerouter.memory import release_free_memory
from pagerouter.stages import LayoutResult, OcrTask, Reading

from .common import LazyEngine, load_cfg, per_item, raise_if_error
from .observe import GraphMetrics


@serve.deployment(name="SmallReader")
class SmallReader:
    def __init__(self, cfg_data: dict, batching: bool = True, eager: bool = True, metrics: bool = True):
        self.cfg = load_cfg(cfg_data)
        settings = self.cfg.serve.small_reader
        self.batching = batching
        if batching:
            self._read_batch.set_max_batch_size(settings.max_batch_size)
            self._read_batch.set_batch_wait_timeout_s(settings.batch_wait_timeout_s)
        self.engine = LazyEngine(self._build)
        self.batch_sizes: Counter[int] = Counter()
        self.metrics = GraphMetrics(metrics)
        if eager and self.cfg.ocr.enabled:
            self.engine.get()

    def _build(self):
        from pagerouter.ocr.api import build_small_reader

        return build_small_reader(self.cfg.ocr)

    def _run(self, tasks: list[OcrTask], layouts: list[LayoutResult]) -> list[Reading | Exception]:
        """One result per task; a task whose read raised gets its exception, not its neighbours'.

        A Serve batch mixes pages of different requests, so one bad page must not fail the
        others: each task is read on its own (today's engines loop per task anyway)."""
        self.batch_sizes[len(tasks)] += 1
        self.metrics.batch_size.observe(len(tasks), tags={"stage": "read"})
        engine = self.engine.get()
        try:
            return [per_item(engine.read_batch, [task], [layout]) for task, layout in zip(tasks, layouts)]
        finally:
            release_free_memory()  # see pagerouter.memory: keeps replica RSS flat

    async def read(self, task: OcrTask, layout: LayoutResult) -> Reading:
        if self.batching:
            return raise_if_error(await self._read_batch(task, layout))
        return raise_if_error((await asyncio.to_thread(self._run, [task], [layout]))[0])

    @serve.batch(max_batch_size=4, batch_wait_timeout_s=0.02)
    async def _read_batch(self, tasks: list[OcrTask], layouts: list[LayoutResult]) -> list[Reading | Exception]:
        return await asyncio.to_thread(self._run, tasks, layouts)

    def describe(self) -> dict[str, str]:
        return self.engine.versions()

    def stats(self) -> dict:
        return {"batch_sizes": dict(self.batch_sizes), "batching": self.batching}
