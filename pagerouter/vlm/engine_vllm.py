"""A vLLM engine owned by this process (the Serve replica, or the CLI's converter).

vLLM's async engine does continuous batching: every request submitted while others run joins
the next engine step. So nothing here batches: `generate` submits its requests at once and
concurrent callers from other threads land on the same engine. The engine lives on its own
event loop in a daemon thread, because the stage Protocols are synchronous and are called
from worker threads (in-process and in the Serve replica alike).

Batch sizes are taken from the engine's own scheduler statistics (running requests per step),
through a stat logger handed to vLLM, not counted on our side.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator

import numpy as np

from ..config.vlm import VlmEngineConfig
from .base import Generation, VlmRequest, to_pil
from .loop import BackgroundLoop

log = logging.getLogger(__name__)

START_TIMEOUT_S = 900.0  # a 7B model on a cold disk can take minutes; a hang must still end
SHUTDOWN_TIMEOUT_S = 1.0  # per shutdown step; vLLM's default grace (5 s per step) doubled the exit


def _stat_logger_factory(sink: "_EngineStats"):
    """A vLLM StatLoggerBase subclass that copies scheduler figures into `sink`."""
    from vllm.v1.metrics.loggers import StatLoggerBase

    class _Recorder(StatLoggerBase):
        def __init__(self, vllm_config, engine_index: int = 0):
            self.engine_index = engine_index

        def record(self, scheduler_stats, iteration_stats, mm_cache_stats=None, engine_idx: int = 0):
            sink.record(scheduler_stats, iteration_stats)

        def log_engine_initialized(self):
            pass

    return _Recorder


class _EngineStats:
    """Figures from vLLM's scheduler: requests running per engine step (= batch size)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.batch_sizes: Counter[int] = Counter()
        self.generation_tokens = 0
        self.max_waiting = 0

    def record(self, sched, it) -> None:
        with self.lock:
            if sched is not None and sched.num_running_reqs > 0:
                self.batch_sizes[int(sched.num_running_reqs)] += 1
                self.max_waiting = max(self.max_waiting, int(sched.num_waiting_reqs))
            if it is not None:
                self.generation_tokens += int(getattr(it, "num_generation_tokens", 0) or 0)

    def snapshot(self) -> dict:
        with self.lock:
            return {
                "batch_sizes": dict(self.batch_sizes),
                "max_batch_size": max(self.batch_sizes, default=0),
                "generation_tokens": self.generation_tokens,
                "max_waiting": self.max_waiting,
            }


class VllmEngine:
    """Implements `pagerouter.vlm.base.VlmEngine` with vLLM's AsyncLLM in this process."""

    name = "vllm"

    def __init__(self, cfg: VlmEngineConfig):
        if not cfg.model:
            raise ValueError("vlm engine kind vllm needs `model` (a model directory or hub name)")
        # vLLM logs to stdout by default (its engine processes inherit this): stdout is where
        # `pagerouter convert` prints the Markdown, so vLLM's lines go to stderr, set before import.
        os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
        # Its INFO lines (a full config dump per process) bury pagerouter's own; warnings stay.
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
        # The engine-core process waits this long for its worker to exit before killing it; with
        # vLLM's 5 s default every exit after the last page took 5-10 s. Inherited at its start.
        os.environ.setdefault("VLLM_WORKER_SHUTDOWN_TIMEOUT_SECONDS", "1")
        self.cfg = cfg
        self._stats = _EngineStats()
        self.started_s = 0.0
        self._loop = BackgroundLoop("vllm-engine-loop")
        t0 = time.perf_counter()
        try:
            self._engine = self._loop.call(self._start(), timeout=START_TIMEOUT_S)
        except BaseException:
            self._loop.stop()
            raise
        self.started_s = time.perf_counter() - t0
        self._template = _chat_template_owner(cfg)
        import vllm

        self.version = f"vllm {vllm.__version__} / {cfg.model_name()}"
        log.info("vLLM engine for %s up in %.1f s", cfg.model_name(), self.started_s)

    # -- life cycle ---------------------------------------------------------------------------
    def _engine_args(self):
        from vllm.engine.arg_utils import AsyncEngineArgs

        c = self.cfg
        kwargs = dict(
            model=c.model,
            revision=c.revision,
            dtype=c.dtype,
            quantization=c.quantization,
            max_model_len=c.max_model_len,
            gpu_memory_utilization=c.gpu_memory_utilization,
            enforce_eager=c.enforce_eager,
            limit_mm_per_prompt={"image": c.images_per_prompt, "video": 0},
            trust_remote_code=c.trust_remote_code,
            seed=c.seed,
            served_model_name=c.served_model_name,
        )
        if c.max_num_seqs:
            kwargs["max_num_seqs"] = c.max_num_seqs
        if c.cpu_kv_cache_gib and _is_cpu_build():
            kwargs["kv_cache_memory_bytes"] = int(c.cpu_kv_cache_gib * 2**30)
        kwargs.update(c.engine_kwargs)
        return AsyncEngineArgs(**kwargs)

    async def _start(self):
        from vllm.v1.engine.async_llm import AsyncLLM

        return AsyncLLM.from_engine_args(self._engine_args(), stat_loggers=[_stat_logger_factory(self._stats)])

    def close(self) -> None:
        """Stop the engine's processes and its loop: quickly (SHUTDOWN_TIMEOUT_S per step, a run
        that is over has nothing left to drain) and in one log line at most."""
        engine, self._engine = getattr(self, "_engine", None), None
        if engine is not None:
            async def shutdown():  # on the engine's loop: its output-handler task belongs there
                engine.shutdown(timeout=SHUTDOWN_TIMEOUT_S)

            try:
                self._loop.call(shutdown(), timeout=4 * SHUTDOWN_TIMEOUT_S + 5)
            except Exception as exc:  # noqa: BLE001 - shutting down; nothing left to save
                log.warning("vLLM engine shutdown: %s: %s", type(exc).__name__, exc)
        self._loop.stop()

    def __del__(self):  # an engine dropped without close() must not keep its worker process
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    # -- requests -----------------------------------------------------------------------------
    def _prompt(self, req: VlmRequest) -> dict:
        content: list[dict] = []
        if req.image is not None:
            content.append({"type": "image"})
        if req.prompt:  # an image-only request (LightOnOCR) has no text part at all
            content.append({"type": "text", "text": req.prompt})
        text = self._template.apply_chat_template(
            [{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True
        )
        prompt: dict = {"prompt": text}
        if req.image is not None:
            prompt["multi_modal_data"] = {"image": to_pil(req.image)}
        return prompt

    def _sampling(self, req: VlmRequest):
        from vllm import SamplingParams

        return SamplingParams(
            max_tokens=req.max_tokens,
            temperature=req.temperature,
            top_p=req.top_p,
            stop=list(req.stop) or None,
            logprobs=0 if req.logprobs else None,  # 0 = the sampled token's own log-probability
            seed=req.seed,
        )

    async def _outputs(self, req: VlmRequest):
        """The engine's RequestOutputs for one request (cumulative), aborting it if we stop early."""
        rid = uuid.uuid4().hex
        gen = self._engine.generate(self._prompt(req), self._sampling(req), request_id=rid)
        try:
            async for out in gen:
                yield out
        finally:
            await gen.aclose()

    async def _generate_one(self, req: VlmRequest) -> Generation:
        t0 = time.perf_counter()
        last = None
        try:
            async for out in self._outputs(req):
                last = out
        except Exception as exc:  # noqa: BLE001 - one bad request must not fail the others
            return Generation(text="", finish_reason="error", seconds=time.perf_counter() - t0, error=f"{type(exc).__name__}: {exc}"[:500])
        seconds = time.perf_counter() - t0
        if last is None or not last.outputs:
            return Generation(text="", finish_reason="error", seconds=seconds, error="engine returned no output")
        o = last.outputs[0]
        finish = o.finish_reason if o.finish_reason in ("stop", "length", "abort") else ("stop" if o.finish_reason else "abort")
        return Generation(
            text=o.text,
            finish_reason=finish,
            prompt_tokens=len(last.prompt_token_ids or []),
            completion_tokens=len(o.token_ids),
            seconds=seconds,
            mean_logprob=_mean_logprob(o),
            max_tokens=req.max_tokens,
            context_len=self.cfg.max_model_len,
        )

    async def agenerate(self, requests: list[VlmRequest]) -> list[Generation]:
        """Async form of `generate` (must run on the engine's loop)."""
        return list(await asyncio.gather(*(self._generate_one(r) for r in requests)))

    def generate(self, requests: list[VlmRequest]) -> list[Generation]:
        if not requests:
            return []
        return self._loop.call(self.agenerate(requests))

    def stream(self, request: VlmRequest) -> Iterator[str]:
        """Text pieces as the engine produces them."""

        async def pieces():
            seen = 0
            async for out in self._outputs(request):
                text = out.outputs[0].text if out.outputs else ""
                if len(text) > seen:
                    yield text[seen:]
                    seen = len(text)

        return self._loop.iterate(pieces)

    def stats(self) -> dict:
        return {**self._stats.snapshot(), "start_s": round(self.started_s, 2)}


def _mean_logprob(o) -> float | None:
    """Mean log-probability of the sampled tokens (vLLM returns {token: Logprob} per step)."""
    if not o.logprobs:
        return None
    vals = []
    for tok_id, step in zip(o.token_ids, o.logprobs):
        lp = step.get(tok_id) if step else None
        if lp is not None and math.isfinite(lp.logprob):
            vals.append(lp.logprob)
    return sum(vals) / len(vals) if vals else None


def _is_cpu_build() -> bool:
    try:
        from vllm.platforms import current_platform

        return bool(current_platform.is_cpu())
    except Exception:  # noqa: BLE001 - unknown platform: treat as GPU (the option is then unused)
        return False


def _chat_template_owner(cfg: VlmEngineConfig):
    """The model's processor (or tokenizer) whose chat template turns a user turn with an image
    into the model's prompt text, image placeholder tokens included."""
    from transformers import AutoProcessor, AutoTokenizer

    try:
        proc = AutoProcessor.from_pretrained(cfg.model, revision=cfg.revision, trust_remote_code=cfg.trust_remote_code)
        if getattr(proc, "chat_template", None):
            return proc
    except Exception as exc:  # noqa: BLE001 - fall back to the tokenizer's template
        log.debug("no processor chat template for %s: %s", cfg.model, exc)
    return AutoTokenizer.from_pretrained(cfg.model, revision=cfg.revision, trust_remote_code=cfg.trust_remote_code)
