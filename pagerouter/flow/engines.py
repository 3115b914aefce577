"""Engines by role, chosen by `kind` in config, built lazily, one cache per converter.

Every engine implements one small Protocol of `pagerouter.common.stages` and lives in one file:

    role           config field                 Protocol        kinds
    layout         ocr.layout.kind              LayoutEngine    rapid_layout, none
    small_reader   ocr.small_reader.kind        SmallReader     rapidocr, vlm (region VLM)
    escalation     ocr.escalation.kind          Escalator       vote, vlm (page VLM)

Adding an engine is adding its file, a line in `ENGINE_KINDS` and the kind in its config
`Literal`: no runner changes. The same `build_engine` is what the Serve deployments call, so
the served graph and the in-process `Converter` run the very same stage objects.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from typing import Literal

from ..config.ocr import OcrConfig
from ..common.stages import Escalator, LayoutEngine, OcrCalls, OcrTask, Reading, SmallReader

Role = Literal["layout", "small_reader", "escalation"]
ROLES: tuple[Role, ...] = ("layout", "small_reader", "escalation")

ENGINE_KINDS: dict[str, dict[str, str]] = {
    "layout": {
        "rapid_layout": "pagerouter.ocr.layout_rapid:RapidLayoutEngine",
        "none": "pagerouter.ocr.layout_none:NoLayoutEngine",
    },
    "small_reader": {
        "rapidocr": "pagerouter.ocr.reader_rapidocr:RapidOcrReader",
        "vlm": "pagerouter.vlm.reader_region:VlmRegionReader",
    },
    "escalation": {
        "vote": "pagerouter.ocr.escalate:VoteEscalator",
        "vlm": "pagerouter.vlm.escalator_page:VlmPageEscalator",
    },
}
"""role -> kind -> `module:class`; each class is built as `cls(ocr_config)`."""


def kind_of(role: Role, cfg: OcrConfig) -> str:
    """The configured kind of a role."""
    if role == "layout":
        return cfg.layout.kind
    if role == "small_reader":
        return cfg.small_reader.kind
    if role == "escalation":
        return cfg.escalation.kind
    raise ValueError(f"unknown engine role {role!r}; roles are {', '.join(ROLES)}")


def build_engine(role: Role, cfg: OcrConfig) -> LayoutEngine | SmallReader | Escalator:
    """Build the configured engine of `role` (imports its module only now: a born-digital run
    never loads a model)."""
    kind = kind_of(role, cfg)
    try:
        target = ENGINE_KINDS[role][kind]
    except KeyError:
        known = ", ".join(sorted(ENGINE_KINDS.get(role, {})))
        raise ValueError(f"ocr.{role}.kind {kind!r} is not a known {role} engine (known: {known})") from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)(cfg)


def batch_call_isolated(batch_call, *arg_lists: list) -> list:
    """One result per item of `batch_call(*arg_lists)` (a `detect_batch`/`read_batch` over
    several pages, of different requests in a Serve batch): the whole batch in one call; if
    that raises, each item on its own, so one bad page gets its own exception and the others
    their results (the good pages are then read twice: only on a failing batch)."""
    try:
        results = list(batch_call(*arg_lists))
        if len(results) == len(arg_lists[0]):
            return results
        raise RuntimeError(f"batch call returned {len(results)} results for {len(arg_lists[0])} items")
    except Exception as exc:  # noqa: BLE001 - isolate below
        if len(arg_lists[0]) == 1:
            return [exc]  # a batch of one already is the page on its own
        out: list = []
        for args in zip(*arg_lists):
            try:
                (one,) = batch_call(*[[a] for a in args])
                out.append(one)
            except Exception as exc:  # noqa: BLE001 - handed back to the one caller it belongs to
                out.append(exc)
        return out


class EngineSet:
    """The engines of one OCR config, each built once on first use (thread-safe: stage calls
    run in worker threads). `prebuilt` supplies engines by role instead of building them (an
    engine the caller set up itself; a test double that forces a failure)."""

    def __init__(self, cfg: OcrConfig, prebuilt: dict[str, object] | None = None):
        self.cfg = cfg
        self._built: dict[str, object] = dict(prebuilt or {})
        self._given = set(self._built)  # the caller's own engines: closing them is the caller's business
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the engines this set built (a VLM engine stops its vLLM processes here, before
        interpreter exit, where vLLM's own clean-up fails with tracebacks)."""
        with self._lock:
            built = [(r, e) for r, e in self._built.items() if r not in self._given]
            for r, _ in built:
                del self._built[r]
        for _, engine in built:
            close = getattr(engine, "close", None)
            if callable(close):
                close()

    def get(self, role: Role):
        engine = self._built.get(role)
        if engine is None:
            with self._lock:
                engine = self._built.get(role)
                if engine is None:
                    engine = self._built[role] = build_engine(role, self.cfg)
        return engine

    def version_of(self, role: Role) -> dict[str, str]:
        """{name: version} of the role's engine (built if it was not yet)."""
        engine = self.get(role)
        return {engine.name: engine.version}

    def calls(self, used: dict[str, str] | None = None) -> OcrCalls | None:
        """Stage calls over these engines for `pipeline.ocr_flow` (None if OCR is off); each
        engine runs in a worker thread so the event loop keeps streaming pages. `used`
        collects {engine name: version} of the engines that ran."""
        if not self.cfg.enabled:
            return None
        used = used if used is not None else {}

        def run(role: Role, fn):
            engine = self.get(role)
            used[engine.name] = engine.version
            return fn(engine)

        async def layout(task: OcrTask):
            return await asyncio.to_thread(run, "layout", lambda e: e.detect_batch([task])[0])

        async def read(task: OcrTask, lay):
            return await asyncio.to_thread(run, "small_reader", lambda e: e.read_batch([task], [lay])[0])

        async def escalate(task: OcrTask, first: Reading) -> Reading:
            return await asyncio.to_thread(run, "escalation", lambda e: e.escalate(task, first))

        return OcrCalls(layout=layout, read=read, escalate=escalate if self.cfg.escalation.enabled else None)
