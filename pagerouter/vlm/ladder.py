"""The retry ladder: ask the VLM again, hotter, until one output passes every check.

A VLM reading is unreliable in ways a second try often fixes: a loop at temperature 0.1 is
usually gone at 0.3, and a page the model says is sideways reads well once re-rendered
upright. olmOCR handles this with a ladder of attempts on rising temperatures and feeds the
model's own rotation correction back into the next render; this is the same ladder, with every
attempt recorded as an `Attempt` so a page says how it was read (or why it was not).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config.vlm import LadderConfig
from ..model import Attempt, CheckResult
from .base import Generation, VlmEngine, VlmRequest
from .detectors import failed_reasons

VALID_ROTATIONS = (90, 180, 270)


@dataclass
class Judged:
    """What the profile and the detectors made of one output."""

    parsed: Any | None  # the profile's parsed output (None if it did not parse)
    checks: list[CheckResult]  # all checks (parse failure is a failed check named `vlm_parse`)
    rotation_correction: int = 0  # clockwise degrees the model says the image still needs (0 = upright)


@dataclass
class Candidate:
    """One parsed output with how it was made and what the checks said."""

    parsed: Any
    generation: Generation
    checks: list[CheckResult]
    rotation: int  # clockwise degrees the image was rotated for this attempt
    temperature: float


@dataclass
class LadderOutcome:
    accepted: Candidate | None  # first output that passed every check
    best: Candidate | None  # least-bad parsed rejected output (fewest failed checks; ties: earlier)
    attempts: list[Attempt]  # every attempt, in order
    rotation: int  # cumulative rotation at the end
    stopped_because: str = ""  # `accepted`, `max_attempts N` or `max_seconds S` (why the ladder ended)


def run_ladder(
    engine: VlmEngine,
    build_request: Callable[[float, int], VlmRequest],
    judge: Callable[[Generation, int], Judged],
    cfg: LadderConfig,
    *,
    tier: str,
    engine_label: str,
    region: int | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> LadderOutcome:
    """Run attempts on `cfg.temperature(i)` until one output is accepted (olmOCR's ladder).

    `build_request(temperature, rotation)` renders the image rotated `rotation` degrees
    clockwise and builds the request; `judge(generation, rotation)` parses and checks the
    output. An output is accepted when it parsed and every check passed. With
    `cfg.rotation_feedback`, an output whose model asks for a 90/180/270 correction is
    rejected and the next attempt is rendered with the correction added (cumulative). Engine
    exceptions become rejected attempts (`vlm_error: ...`); this function does not raise them.
    No attempt starts once `cfg.max_seconds` have passed (measured with `clock`).
    """
    started = clock()
    rotation = 0
    attempts: list[Attempt] = []
    best: Candidate | None = None
    best_failed = 0
    stopped = f"max_attempts {cfg.max_attempts}"

    for i in range(cfg.max_attempts):
        elapsed = clock() - started
        if cfg.max_seconds is not None and elapsed > cfg.max_seconds:
            stopped = f"max_seconds {cfg.max_seconds:g} (after {elapsed:.1f} s)"
            break
        temperature = cfg.temperature(i)
        used_rotation = rotation
        request = build_request(temperature, used_rotation)

        t0 = clock()
        try:
            gen = engine.generate([request])[0]
        except Exception as exc:  # one bad attempt must not cost the page its other attempts
            gen = Generation(text="", finish_reason="error", error=f"{type(exc).__name__}: {exc}")
            judged = Judged(parsed=None, checks=[CheckResult(
                name="vlm_error", passed=False, score=1.0, threshold=0.0, reason=gen.error or "",
            )])
        else:
            try:
                judged = judge(gen, used_rotation)
            except Exception as exc:  # a parser or check that breaks on odd output rejects the attempt, not the page
                judged = Judged(parsed=None, checks=[CheckResult(
                    name="vlm_error", passed=False, score=1.0, threshold=0.0,
                    reason=f"judging the output failed: {type(exc).__name__}: {exc}"[:300],
                )])
        seconds = clock() - t0

        checks = list(judged.checks)
        if judged.parsed is None and all(c.passed for c in checks):
            # Keep "rejected" always explained, even if a judge forgot to say why.
            checks.append(CheckResult(name="vlm_parse", passed=False, score=1.0, threshold=0.0,
                                      reason="the output did not parse"))
        if cfg.rotation_feedback and judged.rotation_correction:
            correction = judged.rotation_correction % 360
            if correction in VALID_ROTATIONS:
                checks.append(CheckResult(
                    name="rotation_invalid", passed=False, score=float(correction), threshold=0.0,
                    reason=f"model asks for {correction} degrees",
                ))
                rotation = (rotation + correction) % 360  # the next render starts from this one
            elif correction:
                checks.append(CheckResult(
                    name="rotation_invalid", passed=False, score=float(judged.rotation_correction), threshold=0.0,
                    reason=f"model asks for {judged.rotation_correction} degrees, not one of 90/180/270 (ignored)",
                ))

        failed = failed_reasons(checks)
        ok = judged.parsed is not None and not failed
        attempts.append(Attempt(
            tier=tier, engine=engine_label, number=i + 1, region=region, temperature=temperature,
            rotation=used_rotation, finish_reason=gen.finish_reason, prompt_tokens=gen.prompt_tokens,
            completion_tokens=gen.completion_tokens, seconds=round(seconds, 4), accepted=ok,
            rejected_because=failed,
        ))
        if judged.parsed is None:
            continue
        cand = Candidate(parsed=judged.parsed, generation=gen, checks=checks, rotation=used_rotation,
                         temperature=temperature)
        if ok:
            return LadderOutcome(accepted=cand, best=best, attempts=attempts, rotation=rotation,
                                 stopped_because="accepted")
        if best is None or len(failed) < best_failed:  # strict: ties keep the earlier one
            best, best_failed = cand, len(failed)

    return LadderOutcome(accepted=None, best=best, attempts=attempts, rotation=rotation, stopped_because=stopped)
