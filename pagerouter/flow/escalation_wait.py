"""How long one request's flagged pages wait for the escalation tier.

The LargeReader sleeps at zero replicas; a page it is asked to re-read waits for it to wake.
A request picks a wait mode, `interactive` (default: `serve.escalation_timeout_s`) or `bulk`
(`serve.escalation_timeout_bulk_s`), and may ask for an explicit `escalation_wait_s`, which is
capped at its mode's bound so no caller can hold a page (and the tier's queue) longer than the
operator allows. Every front end (HTTP, gRPC, `Converter`, CLI) resolves its options here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from ..config.serve import ServeConfig

WaitMode = Literal["interactive", "bulk"]
WAIT_MODES: tuple[str, ...] = ("interactive", "bulk")


@dataclass(frozen=True)
class EscalationWait:
    """The resolved wait of one request: `seconds` for `ocr_flow`, `why` for the check's reason."""

    seconds: float
    mode: str = "interactive"
    why: str = "interactive wait"


def resolve_escalation_wait(
    serve: ServeConfig, mode: str | None = None, requested_s: float | None = None
) -> EscalationWait:
    """The wait of a request with wait `mode` (None or "" = interactive) and an optional explicit
    `requested_s`, capped at the mode's configured bound. Raises ValueError for a mode that is
    not `interactive` or `bulk`, or a requested wait that is not a positive number of seconds."""
    mode = (mode or "interactive").strip().lower()
    if mode not in WAIT_MODES:
        raise ValueError(f"wait must be interactive or bulk, not {mode!r}")
    bound = serve.escalation_bound(mode)
    if requested_s is None:
        return EscalationWait(bound, mode, f"{mode} wait")
    if not isinstance(requested_s, (int, float)) or not math.isfinite(requested_s) or requested_s <= 0:
        raise ValueError(f"escalation_wait_s must be a positive number of seconds, not {requested_s!r}")
    if requested_s >= bound:
        return EscalationWait(bound, mode, f"{mode} wait; {requested_s:g} s requested, capped at the {mode} bound")
    return EscalationWait(float(requested_s), mode, f"requested wait, {mode} bound {bound:g} s")


def parse_wait_seconds(raw: str | None) -> float | None:
    """`escalation_wait_s` from a text field ("" or None = not given); ValueError if not a number."""
    if raw is None or not raw.strip():
        return None
    try:
        return float(raw.strip())
    except ValueError:
        raise ValueError(f"escalation_wait_s must be a number of seconds, not {raw.strip()!r}") from None


__all__ = ["WAIT_MODES", "EscalationWait", "WaitMode", "parse_wait_seconds", "resolve_escalation_wait"]
