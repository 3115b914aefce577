"""Stage calls that outlive a replica's death: a handle call retried once on a live replica (a
Triage walk resumes with pagerouter.service.resumable_walk, told by `replica_died`), the
engine's own error instead of Ray's wrapper.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pagerouter.flow.pipeline import stage_retried

T = TypeVar("T")

log = logging.getLogger("ray.serve")  # Serve writes this logger to the replica's log file


async def assigned(response) -> None:
    """Wait until Serve assigned a handle call to a replica (its work starts there; the time
    before is queueing). Uses the handle's own step (2.60: `_fetch_future_result_async`); on a
    Ray without it, returns at once (the page clock then includes queueing, as before)."""
    fetch = getattr(response, "_fetch_future_result_async", None)
    if fetch is not None:
        await fetch()


def replica_died(exc: BaseException) -> bool:
    try:
        from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError
    except ImportError:  # pragma: no cover - Ray is a dependency of the served graph
        return False
    return isinstance(exc, (RayActorError, ActorDiedError, ActorUnavailableError))


async def stage_call(call: Callable[[], Awaitable[T]], retries: int = 1) -> T:
    """`await call()`, once more if the replica serving it died (Serve routes the retry to a
    live replica); a second death propagates and the page is reported failed with the reason."""
    for attempt in range(retries + 1):
        try:
            return await call()
        except Exception as exc:
            if not replica_died(exc):
                cause = engine_error(exc)
                if cause is exc:
                    raise
                raise cause from exc
            if attempt >= retries:
                # One line naming the crash, not Ray's multi-line actor-death report.
                raise ReplicaDied(
                    f"the replica serving it died ({type(exc).__name__}: process killed or crashed), "
                    f"also on {retries} retry" + ("" if retries == 1 else "s")
                ) from exc
            # Counted by tests/test_serve_faults.py (what a killed replica cost).
            log.warning("pagerouter: a stage replica died mid-call (%s); retrying the call once", type(exc).__name__)
            # The page's clock restarts for the retry; a timeout still names the crash.
            stage_retried(f"its replica died ({type(exc).__name__}) and the call was retried on another")
    raise AssertionError("unreachable")  # pragma: no cover


def engine_error(exc: BaseException) -> BaseException:
    """The exception a stage's engine raised in its replica, not Ray's wrapper around it (whose
    text is a coloured multi-line traceback: a page's error must be one line with the reason)."""
    try:
        from ray.exceptions import RayTaskError
    except ImportError:  # pragma: no cover
        return exc
    cause = getattr(exc, "cause", None) if isinstance(exc, RayTaskError) else None
    return cause if isinstance(cause, Exception) else exc


class ReplicaDied(RuntimeError):
    """A stage call whose replica died on every try."""
