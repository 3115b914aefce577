"""Test-only hooks in the stage calls of the served graph: force one stage to fail for chosen pages, and
record which replica process served each page. Both are off unless their environment
variable is set (only tests/test_serve_faults.py sets them, in a `pagerouter serve` subprocess).

`PAGEROUTER_STAGE_FAULT_FOR_TESTS`: comma-separated `KIND@STAGE:MATCH[#PAGE]`
  KIND   `raise` (the engine raises), `garbage` (the engine returns something that is not a
         reading), `hang` (the engine does not answer for HANG_S seconds,
         far past any test's page timeout, then raises), `sleepSECONDS` (a slow page),
         `gate` (the call waits until the file `LOG.open.SOURCE` exists, at most HANG_S
         seconds, so a test acts while the call is surely in flight; a cancellation that
         reaches the waiting call is logged as stage `STAGE-cancelled`, the signal a test
         waits on instead of a guess at timing)
  STAGE  `triage`, `layout`, `read` or `escalate`
  MATCH  a substring of the document's file name (faults never touch other documents)
  PAGE   one page number (default: every page of the document)
  Example: `raise@read:engine-fault#2,sleep0.4@layout:slow`

`PAGEROUTER_STAGE_LOG_FOR_TESTS`: a file; every stage call appends `STAGE SOURCE PAGE PID TIME`, so a
test sees which process served a page (to SIGKILL it) and whether work stopped after a
client went away.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

FAULT_ENV = "PAGEROUTER_STAGE_FAULT_FOR_TESTS"
LOG_ENV = "PAGEROUTER_STAGE_LOG_FOR_TESTS"
GARBAGE = "<garbage from a fake engine>"
HANG_S = 30.0
"""Long enough to be a hang to any page timeout a test sets, short enough that the replica drains
before the test server shuts down: Serve waits for in-flight calls at shutdown, and a 3600 s
sleep made every test module using it wait out the graceful-shutdown timeout."""


class InjectedFault(RuntimeError):
    """The failure a test asked for (see FAULT_ENV)."""


@dataclass(frozen=True)
class _Rule:
    kind: str
    stage: str
    match: str
    page: int | None


def _rules(spec: str) -> list[_Rule]:
    rules = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        kind, _, where = part.partition("@")
        stage, _, target = where.partition(":")
        match, _, page = target.partition("#")
        rules.append(_Rule(kind, stage, match, int(page) if page else None))
    return rules


def _matching(stage: str, source: str, page: int) -> list[_Rule]:
    spec = os.environ.get(FAULT_ENV, "")
    if not spec:
        return []
    return [r for r in _rules(spec) if r.stage == stage and r.match in source and r.page in (None, page)]


def _log(stage: str, source: str, page: int) -> None:
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a") as f:  # one short O_APPEND write per line: safe across processes
            f.write(f"{stage} {os.path.basename(source) or '-'} {page} {os.getpid()} {time.time():.2f}\n")


async def stage_fault(stage: str, source: str, page: int) -> bool:
    """Log the call; sleep, hang or raise as asked. True when the caller must return garbage."""
    if not os.environ.get(FAULT_ENV) and not os.environ.get(LOG_ENV):
        return False  # the production path: two dict lookups
    _log(stage, source, page)
    garbage = False
    for rule in _matching(stage, source, page):
        if rule.kind.startswith("sleep"):
            await asyncio.sleep(float(rule.kind[5:]))
        elif rule.kind == "gate":
            await _wait_for_gate(stage, source, page)
        elif rule.kind == "hang":
            await asyncio.sleep(HANG_S)
            raise InjectedFault(f"fake {stage} engine hung for {HANG_S:g} s (test fault injection) on page {page}")
        elif rule.kind == "raise":
            raise InjectedFault(f"fake {stage} engine failure (test fault injection) on page {page}")
        elif rule.kind == "garbage":
            garbage = True
    return garbage


def stage_stopped(stage: str, source: str) -> None:
    """Log that `stage`'s work for `source` stopped before its end (its caller left): the signal a
    disconnect test waits on. A no-op unless the stage log is on."""
    if os.environ.get(LOG_ENV):
        _log(f"{stage}-stopped", source, 0)


def gate_path(source: str) -> str | None:
    """The file that opens a `gate` fault for `source` (next to the stage log)."""
    log = os.environ.get(LOG_ENV)
    return f"{log}.open.{os.path.basename(source)}" if log else None


async def _wait_for_gate(stage: str, source: str, page: int) -> None:
    gate = gate_path(source)
    deadline = time.monotonic() + HANG_S
    try:
        while gate and not os.path.exists(gate) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    except asyncio.CancelledError:
        _log(f"{stage}-cancelled", source, page)
        raise


def task_of(args: tuple) -> tuple[str, int]:
    """(source, page) of a stage call's arguments (an OcrTask first)."""
    task = args[0] if args else None
    return getattr(task, "source", "-"), getattr(task, "number", 0)
