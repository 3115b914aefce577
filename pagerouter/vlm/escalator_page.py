"""The escalation tier as a large page VLM (olmOCR-class): flagged pages are read whole, through
the retry ladder (rising temperatures, rotation feedback, every attempt checked and recorded).

What comes out, in order of preference:
1. the first attempt that passes every check; when the first reading passed its own checks
   too but the two disagree, a third engine (the CPU vote of RapidOCR hi-res and Tesseract)
   is read as witness and the token vote picks the reading the majority agrees with;
2. when every attempt failed: the best earlier reading (the small reader's, if it has text),
   else the page's trusted text-layer blocks, else the least-bad VLM output, flagged with
   every attempt's reason. A page is never lost.

A mixed page (text layer plus pictures holding text) sends only its pictures, each as one
"page" through the same ladder, so the text layer's blocks are not read twice.
"""

from __future__ import annotations

import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor
from difflib import SequenceMatcher

from ..config.ocr import OcrConfig
from ..model import Block, CheckResult
from ..ocr.checks import check_reading
from ..ocr.unread_lines import still_unread
from ..ocr.raster import render_task
from ..ocr.regions import upright
from ..ocr.text_stats import tokens
from ..ocr.vote import vote
from ..common.stages import OcrTask, Reading
from .base import Generation, VlmRequest
from .detectors import judge_output
from .engines import release_vlm_engine, shared_vlm_engine
from .ladder import Judged, LadderOutcome, run_ladder
from .model_limits import resolve_limits
from .markdown_blocks import markdown_to_blocks
from .profiles import ProfileParseError, page_prompt, parse_page, parse_plain_page
from .reader_region import with_text_layer

log = logging.getLogger(__name__)

_FIGURE_MD = re.compile(r"!\[[^\]]*\]\([^)]*\)")


class VlmPageEscalator:
    """Implements stages.Escalator with a VLM engine (`ocr.escalation.vlm`)."""

    name = "vlm_page"

    def __init__(self, cfg: OcrConfig, engine=None, witness=None):
        self.cfg = cfg
        self.tier = cfg.escalation.vlm
        if engine is None:
            # the model's own limits fill in and check the tier's token numbers before vLLM starts
            self.tier = resolve_limits(cfg, self.tier, "ocr.escalation.vlm")
            engine = shared_vlm_engine(self.tier.engine)
        self.engine = engine
        self.version = self.engine.version
        self._witness = witness  # an Escalator read as third engine on disagreement (default: the CPU vote)

    def close(self) -> None:
        release_vlm_engine(self.engine)

    # -- the ladder on one image ----------------------------------------------------------------
    def _ladder(self, task: OcrTask, image, anchor: list[Block], start_rotation: int, region: int | None) -> LadderOutcome:
        tier = self.tier
        if tier.profile == "lightonocr":  # the page image alone: a text prompt is echoed back by the model
            prompt, parse = tier.prompt or "", parse_plain_page
        else:
            prompt = page_prompt(anchor if tier.anchor_text else None, tier.anchor_max_chars, template=tier.prompt)
            parse = parse_page
        gray = image.mean(axis=2) if image.ndim == 3 else image
        ink = float((gray < 200).mean()) if region is not None else task.ink

        def build(temperature: float, rotation: int) -> VlmRequest:
            return VlmRequest(prompt=prompt, image=upright(image, (start_rotation + rotation) % 360),
                              max_tokens=tier.max_new_tokens, temperature=temperature, top_p=tier.top_p)

        def judge(gen: Generation, rotation: int) -> Judged:
            try:
                out = parse(gen.text)
            except ProfileParseError as exc:
                return Judged(parsed=None, checks=[CheckResult(name="vlm_parse", passed=False, reason=str(exc))]
                              + judge_output(gen, gen.text, ink=ink, expected_script=task.decision.script,
                                             tier=tier, checks=self.cfg.checks))
            # figure markup is not text: an answer that is only "![a page of text](figure)" is empty
            checks = judge_output(gen, _FIGURE_MD.sub(" ", out.body), ink=ink, expected_script=task.decision.script,
                                  tier=tier, checks=self.cfg.checks)
            fix = 0 if out.is_rotation_valid else out.rotation_correction
            return Judged(parsed=out, checks=checks, rotation_correction=fix)

        return run_ladder(self.engine, build, judge, tier.ladder, tier="escalation", engine_label=self.version,
                          region=region)

    # -- the page -------------------------------------------------------------------------------
    def escalate(self, task: OcrTask, first: Reading) -> Reading:
        t0 = time.perf_counter()
        target = self.cfg.render_target(self.tier.render_key())
        image, scale = render_task(task, target)
        start = first.rotation or 0
        if task.decision.route == "mixed" and task.decision.ocr_regions:
            jobs = []
            for i, (x0, y0, x1, y1) in enumerate(task.decision.ocr_regions):
                px = (max(0, int(x0 * scale)), max(0, int(y0 * scale)), int(x1 * scale) + 1, int(y1 * scale) + 1)
                jobs.append(((x0, y0, x1, y1), image[px[1]:px[3], px[0]:px[2]], i))
        else:
            jobs = [((0.0, 0.0, task.width, task.height), image, None)]
        with ThreadPoolExecutor(max_workers=max(1, min(16, len(jobs)))) as pool:
            outcomes = list(pool.map(lambda j: self._ladder(task, j[1], task.text_blocks, start if j[2] is None else 0, j[2]), jobs))

        attempts = [a for o in outcomes for a in o.attempts]
        failed = [(box, o) for (box, _, _), o in zip(jobs, outcomes) if o.accepted is None]
        if failed:
            out = self._fallback(task, first, outcomes, jobs)
        else:
            blocks: list[Block] = []
            for (box, _, region), o in zip(jobs, outcomes):
                conf = o.accepted.generation.confidence
                blocks += markdown_to_blocks(
                    o.accepted.parsed.body, page=task.number, page_box=box, engine=self.name,
                    engine_version=self.version, confidence=0.9 if conf is None else conf,
                    reference=first.blocks + task.text_blocks,
                )
            blocks = with_text_layer(blocks, task)
            rotation = (start + outcomes[0].rotation) % 360 if jobs[0][2] is None else first.rotation
            out = Reading(blocks=blocks, rotation=rotation, engine=self.name, script=first.script)
            out.checks = [CheckResult(name="vlm_page", passed=True, score=float(len(attempts)),
                                      reason=f"accepted after {len(attempts)} attempt(s)")]
            out = self._maybe_vote(task, first, out)
        for i, b in enumerate(out.blocks):
            b.order = i
        out.attempts = attempts
        out.checks += check_reading(task, out, self.cfg.checks)
        # lines the first reading left out (ocr.unread_lines) must be in the VLM's blocks too, or
        # the page stays flagged: a re-read that also skips them has not accounted for them
        if (left := still_unread(first.checks, out.blocks, self.cfg.checks)) is not None:
            out.checks.append(left)
        # no timing of its own: the pipeline times the whole call as the page's `escalate` stage
        out.timings = dict(first.timings)
        return out

    def _fallback(self, task: OcrTask, first: Reading, outcomes: list[LadderOutcome], jobs) -> Reading:
        """Every attempt failed somewhere: keep the best earlier reading, flagged with why."""
        reasons = []
        for (_, _, region), o in zip(jobs, outcomes):
            if o.accepted is None:
                last = o.attempts[-1].rejected_because if o.attempts else ["no attempt ran"]
                where = "page" if region is None else f"picture {region}"
                reasons.append(f"{where}: {len(o.attempts)} attempts failed (last: {'; '.join(last)[:200]})")
        if any(b.text.strip() for b in first.blocks):
            blocks, source = list(first.blocks), f"the first reading ({first.engine})"
        elif task.text_blocks:
            blocks, source = list(task.text_blocks), "the text layer"
        else:
            best = next((o.best for o in outcomes if o.best is not None), None)
            blocks, source = [], "nothing"
            if best is not None and best.parsed is not None and best.parsed.body.strip():
                blocks = markdown_to_blocks(best.parsed.body, page=task.number, page_box=(0, 0, task.width, task.height),
                                            engine=self.name, engine_version=self.version, confidence=0.1)
                source = "the least-bad VLM output"
        out = Reading(blocks=blocks, rotation=first.rotation, engine=first.engine, script=first.script)
        out.checks = [CheckResult(name="vlm_ladder_exhausted", passed=False, score=float(len(reasons)),
                                  reason=f"kept {source}; " + " | ".join(reasons)[:800])]
        return out

    def _maybe_vote(self, task: OcrTask, first: Reading, vlm: Reading) -> Reading:
        """Two readings that both pass their checks but disagree: a third engine decides."""
        # "Passed its own checks": failing only advisory checks (low confidence by default) still counts.
        advisory = set(self.cfg.escalation.witness_ignore_checks)
        first_ok = all(c.passed or c.name in advisory for c in first.checks)
        first_text = _text(first.blocks)
        vlm_text = _text(vlm.blocks)
        if not first_ok or not first_text.strip() or not vlm_text.strip():
            return vlm
        agree = token_agreement(vlm_text, first_text)
        if agree >= self.cfg.escalation.vlm_agreement_min:
            return vlm
        try:
            witness = self._witness_engine().escalate(task, first)
        except Exception as exc:  # noqa: BLE001 - no witness: the checked VLM reading stands
            log.warning("%s page %s: witness failed: %s", task.source, task.number, exc)
            vlm.checks.append(CheckResult(name="vlm_vote", passed=True, score=agree,
                                          reason=f"readings agree {agree:.2f}; witness failed ({exc}); kept the VLM"))
            return vlm
        w_text = _text(witness.blocks)
        if not w_text.strip() or (first.engine and witness.engine.startswith(first.engine)):
            # the CPU vote fell back to the first reading (or the first engine again): no independent third engine
            vlm.checks.append(CheckResult(
                name="vlm_vote", passed=True, score=agree,
                reason=f"readings agree {agree:.2f}; no independent witness could read the page; kept the VLM"))
            return vlm
        voted = vote([("vlm", vlm_text), ("first", first_text), ("witness", w_text)])
        score_vlm = token_agreement(voted.text, vlm_text)
        score_first = token_agreement(voted.text, first_text)
        winner = vlm if score_vlm >= score_first else first
        reason = (f"VLM and first reading agree {agree:.2f} < {self.cfg.escalation.vlm_agreement_min}; "
                  f"witness {witness.engine}: vote agrees {score_vlm:.2f} with the VLM, {score_first:.2f} with the first "
                  f"reading: kept the {'VLM' if winner is vlm else 'first'} reading")
        out = Reading(blocks=list(winner.blocks), rotation=vlm.rotation if winner is vlm else first.rotation,
                      engine=winner.engine, script=first.script)
        out.checks = ([c for c in vlm.checks] if winner is vlm else []) + [
            CheckResult(name="vlm_vote", passed=True, score=round(max(score_vlm, score_first), 4), reason=reason)]
        return out

    def _witness_engine(self):
        if self._witness is None:
            from ..ocr.escalate import VoteEscalator

            self._witness = VoteEscalator(self.cfg)
        return self._witness


def token_agreement(a: str, b: str) -> float:
    """Share of tokens two texts have in common, in order (difflib ratio over token lists)."""
    ta, tb = [t for t in tokens(a) if t.strip()], [t for t in tokens(b) if t.strip()]
    if not ta and not tb:
        return 1.0
    return SequenceMatcher(None, ta, tb, autojunk=False).ratio()


def _text(blocks: list[Block]) -> str:
    return "\n".join(b.text for b in blocks if b.role != "figure" and b.text.strip())
