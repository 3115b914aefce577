"""The batched stage deployments (Layout, SmallReader) from one factory.

Each holds the engine of its role in a `pagerouter.flow.engines.EngineSet` (the very object the
in-process `Converter` builds) and batches concurrent pages of any request with
`@serve.batch`; batch size and wait come from `cfg.serve.<role>`. A Serve batch mixes pages of
different requests: the whole batch is one engine call (RapidOCR recognises the text lines of
all its pages in one ONNX run; the layout model's input has a fixed batch of 1, so Layout
still loops inside its engine), and only if that call raises is each page run on its own, so
one bad page fails only its own request.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from ray import serve

from pagerouter.flow.engines import EngineSet, Role, batch_call_isolated
from pagerouter.common.memory import release_free_memory
from pagerouter.service.stage_faults import GARBAGE, stage_fault, task_of

from .common import load_cfg, raise_if_error
from .health import check_batch_loop, stage_ready
from .observe import GraphMetrics

BATCH_METHODS: dict[str, str] = {"layout": "detect_batch", "small_reader": "read_batch"}
"""Engine method that takes one list per argument (`detect_batch(tasks)`, `read_batch(tasks, layouts)`)."""


def batched_deployment(name: str, role: Role, stage: str):
    """A Serve deployment class named `name` around the `role` engine; its `run(*args)` takes
    one page's arguments (a task; a task and its layout) and returns that page's result.
    `stage` labels its metrics (`layout`, `read`). Each call builds a fresh class, so every
    deployment gets its own batch queue."""

    class BatchedStage:
        def __init__(self, cfg_data: dict[str, Any], eager: bool = True, metrics: bool = True):
            self.cfg = load_cfg(cfg_data)
            settings = getattr(self.cfg.serve, role)
            self._run_batch.set_max_batch_size(settings.max_batch_size)  # the decorator's numbers are placeholders
            self._run_batch.set_batch_wait_timeout_s(settings.batch_wait_timeout_s)
            self.engines = EngineSet(self.cfg.ocr)
            # Pages that arrive while a batch runs wait here, then go into the next batch together
            # (`fill_while_busy`): Serve 2.60 forms batches while the engine is busy, so under load
            # most would hold one page (measured: mean 1.16 at 16 users on scans).
            self._engine_idle = asyncio.Event()
            self._engine_idle.set()
            self._gate = settings.fill_while_busy
            self.batch_sizes: Counter[int] = Counter()
            self.metrics = GraphMetrics(metrics)
            if eager and self.cfg.ocr.enabled:
                self.engines.get(role)  # a replica counts as up only once its model is loaded

        def _run(self, *arg_lists: list) -> list[Any]:
            """One result per page: its engine result, or the exception its own run raised."""
            size = len(arg_lists[0])
            self.batch_sizes[size] += 1
            self.metrics.batch_size.observe(size, tags={"stage": stage})
            call = getattr(self.engines.get(role), BATCH_METHODS[role])
            try:
                # One engine call for the whole batch (the reader recognises every page's lines
                # in one ONNX run); page by page only if it raises, so a bad page fails alone.
                return batch_call_isolated(call, *arg_lists)
            finally:
                release_free_memory()  # see pagerouter.common.memory: keeps replica RSS flat

        async def run(self, *args: Any) -> Any:
            if await stage_fault(stage, *task_of(args)):  # test-only hook, off unless its env var is set
                return GARBAGE
            if getattr(self.engines.get(role), "batches_itself", False):
                # A vLLM engine batches continuously across concurrent calls: a Serve batch queue
                # in front of it would only add waiting. Each call goes straight through.
                return raise_if_error((await asyncio.to_thread(self._run, *[[a] for a in args]))[0])
            if self._gate:
                await self._engine_idle.wait()
            return raise_if_error(await self._run_batch(*args))

        @serve.batch(max_batch_size=4, batch_wait_timeout_s=0.02)
        async def _run_batch(self, *arg_lists: list) -> list[Any]:
            self._engine_idle.clear()
            try:
                return await asyncio.to_thread(self._run, *arg_lists)
            finally:
                self._engine_idle.set()  # every page waiting at the gate joins the next batch at once

        def ready(self) -> dict:
            """The readiness ping of /healthz, with the batch settings this replica applies."""
            return stage_ready(name, batching={
                "max_batch_size": self._run_batch._get_max_batch_size(),
                "batch_wait_timeout_s": self._run_batch._get_batch_wait_timeout_s(),
            })

        async def check_health(self) -> None:
            """Serve calls this periodically; raising makes it replace this replica."""
            await check_batch_loop(self._run_batch)

        def __del__(self) -> None:
            """Serve calls this when the replica shuts down gracefully: the engine it built is
            closed here (a VLM engine stops its vLLM processes), not left to interpreter exit."""
            engines = getattr(self, "engines", None)
            if engines is not None:
                engines.close()

        def describe(self) -> dict[str, str]:
            return self.engines.version_of(role)

        def stats(self) -> dict:
            """Engine calls by batch size (tests and the benchmark read it)."""
            engine = self.engines.get(role)
            inner = getattr(getattr(engine, "engine", None), "stats", None)  # a VLM reader's engine-side figures
            own = getattr(engine, "batch_stats", None)  # the RapidOCR reader: pages per recognition run
            return {"batch_sizes": dict(self.batch_sizes), **({"engine": inner()} if callable(inner) else {}),
                    **(own() if callable(own) else {})}

    BatchedStage.__name__ = BatchedStage.__qualname__ = name
    return serve.deployment(name=name)(BatchedStage)


Layout = batched_deployment("Layout", "layout", stage="layout")
SmallReader = batched_deployment("SmallReader", "small_reader", stage="read")
