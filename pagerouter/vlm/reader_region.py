"""The small reader as a region VLM (PaddleOCR-VL-class): every layout region of a page is
one prompt; text, table and formula regions get their own task prompt.

All regions of all pages in a call run at once, each through its own short retry ladder in a
worker thread: the engine (vLLM) sees them together and batches them continuously, and a
region that loops or runs out of tokens is retried without holding back the others. A region
no attempt could read keeps its least-bad output (or nothing) and flags the page, which then
escalates to the page tier.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..config.ocr import OcrConfig
from ..model import Block, CheckResult
from ..ocr.regions import ROLE_OF, upright
from ..common.stages import LayoutResult, OcrTask, Reading, Region
from .base import Generation, VlmRequest
from .detectors import judge_output
from .engines import release_vlm_engine, shared_vlm_engine
from .ladder import Judged, LadderOutcome, run_ladder
from .model_limits import resolve_limits
from .profiles import TASK_OF_REGION, ProfileParseError, parse_region, region_prompt

MAX_REGION_THREADS = 64


def with_text_layer(blocks: list[Block], task: OcrTask) -> list[Block]:
    """A mixed page's reading: the VLM's picture blocks plus the page's text-layer blocks, in one
    reading order (the page's Markdown must keep the text the layer gave)."""
    from ..layout.reading_order import OrderParams, median_height, order_boxes

    layer = list(task.text_blocks)
    if not layer:
        return blocks
    everything = list(blocks) + layer
    line = median_height([b.bbox for b in layer if b.role not in ("figure", "table")])
    order = order_boxes([tuple(b.bbox) for b in everything], OrderParams.for_blocks(line, line_sets_gap=False),
                        words=[0 if b.role in ("figure", "table") else len(b.text.split()) for b in everything],
                        kinds=[b.role for b in everything])
    return [everything[i].model_copy(update={"order": pos}) for pos, i in enumerate(order)]


def crop_ink(image: np.ndarray, threshold: int = 200) -> float:
    """Share of dark pixels in a crop (the same measure as a page's ink share)."""
    if image.size == 0:
        return 0.0
    gray = image.mean(axis=2) if image.ndim == 3 else image
    return float((gray < threshold).mean())


class VlmRegionReader:
    """Implements stages.SmallReader with a VLM engine (`ocr.small_reader.vlm`)."""

    name = "vlm_region"
    batches_itself = True  # the engine batches continuously: no Serve batch queue in front of it

    def __init__(self, cfg: OcrConfig, engine=None):
        self.cfg = cfg
        self.tier = cfg.small_reader.vlm
        if engine is None:
            # the model's own limits fill in and check the tier's token numbers before vLLM starts
            self.tier = resolve_limits(cfg, self.tier, "ocr.small_reader.vlm", region=True)
            engine = shared_vlm_engine(self.tier.engine)
        self.engine = engine
        self.version = self.engine.version
        # A region may rightly hold one word, a page number or a short formula: "empty" means nothing at all.
        self.region_checks = cfg.checks.model_copy(update={"min_chars_on_inked_page": 1})

    def close(self) -> None:
        release_vlm_engine(self.engine)

    def read_batch(self, tasks: list[OcrTask], layouts: list[LayoutResult]) -> list[Reading]:
        t0 = time.perf_counter()
        jobs = []  # (task index, region index, region kind, task, pixel box, crop)
        for ti, (task, layout) in enumerate(zip(tasks, layouts)):
            if task.ink < self.cfg.blank_ink:
                continue
            for ri, (kind, box, crop) in enumerate(self._regions(task, layout)):
                jobs.append((ti, ri, kind, task, box, crop))
        with ThreadPoolExecutor(max_workers=max(1, min(MAX_REGION_THREADS, len(jobs)))) as pool:
            outcomes = list(pool.map(lambda j: self._read_region(j[1], j[2], j[3], j[5]), jobs))
        readings = []
        for ti, (task, layout) in enumerate(zip(tasks, layouts)):
            mine = [(j, o) for j, o in zip(jobs, outcomes) if j[0] == ti]
            readings.append(self._reading(task, layout, mine, time.perf_counter() - t0))
        return readings

    # -- one region -----------------------------------------------------------------------------
    def _regions(self, task: OcrTask, layout: LayoutResult):
        """(kind, region box in upright-image pixels, padded crop) of every region to read, in reading order;
        a mixed page reads only the pictures whose text the text layer lacks."""
        image = upright(task.image, layout.rotation)
        h, w = image.shape[:2]
        pad = self.tier.region_pad_px
        if task.decision.route == "mixed" and task.decision.ocr_regions:
            s = task.scale
            regions = [Region(kind="text", bbox=(x0 * s, y0 * s, x1 * s, y1 * s), score=1.0)
                       for x0, y0, x1, y1 in task.decision.ocr_regions]
        elif layout.regions:
            regions = layout.regions
        else:
            regions = [Region(kind="text", bbox=(0, 0, w, h), score=1.0)]
        out = []
        for r in regions:
            x0, y0, x1, y1 = (max(0, int(r.bbox[0]) - pad), max(0, int(r.bbox[1]) - pad),
                              min(w, int(r.bbox[2]) + pad + 1), min(h, int(r.bbox[3]) + pad + 1))
            if min(x1 - x0, y1 - y0) < self.tier.min_region_px:
                continue
            # the block keeps the region's own box; only the crop gets the margin
            box = (max(0.0, r.bbox[0]), max(0.0, r.bbox[1]), min(float(w), r.bbox[2]), min(float(h), r.bbox[3]))
            out.append((r.kind, box, image[y0:y1, x0:x1]))
        return out

    def _read_region(self, index: int, kind: str, task: OcrTask, crop: np.ndarray) -> LadderOutcome | None:
        job = TASK_OF_REGION.get(kind)
        if job is None:
            return None  # figures: kept as figure blocks, not read
        ink = crop_ink(crop)
        tier = self.tier

        def build(temperature: float, rotation: int) -> VlmRequest:
            return VlmRequest(prompt=region_prompt(job), image=upright(crop, rotation), max_tokens=tier.max_new_tokens,
                              temperature=temperature, top_p=tier.top_p)

        def judge(gen: Generation, rotation: int) -> Judged:
            try:
                parsed = parse_region(job, gen.text)
            except ProfileParseError as exc:
                return Judged(parsed=None, checks=[CheckResult(name="vlm_parse", passed=False, reason=str(exc))]
                              + judge_output(gen, gen.text, ink=ink, expected_script=task.decision.script,
                                             tier=tier, checks=self.region_checks))
            return Judged(parsed=parsed, checks=judge_output(
                gen, parsed.text, ink=ink, expected_script=task.decision.script, tier=tier, checks=self.region_checks))

        return run_ladder(self.engine, build, judge, tier.ladder, tier="small_reader",
                          engine_label=self.version, region=index)

    # -- the page -------------------------------------------------------------------------------
    def _reading(self, task: OcrTask, layout: LayoutResult, mine, seconds: float) -> Reading:
        evidence = list(getattr(layout, "evidence", []) or [])
        if task.ink < self.cfg.blank_ink:
            return Reading(blocks=[], rotation=0, engine=self.name, script=task.decision.script, checks=evidence + [
                CheckResult(name="blank", passed=True, score=task.ink, threshold=self.cfg.blank_ink,
                            reason=f"ink share {task.ink:.4f} < blank_ink {self.cfg.blank_ink}: nothing to read")],
                timings={"read": seconds})
        blocks: list[Block] = []
        attempts = []
        unread: list[str] = []
        s = task.scale
        for (_, ri, kind, _, box, _), outcome in mine:
            bbox = (box[0] / s, box[1] / s, box[2] / s, box[3] / s)
            role = ROLE_OF.get(kind, "paragraph")
            if outcome is None:
                blocks.append(self._block("", role, bbox, task, 1.0))
                continue
            attempts += outcome.attempts
            cand = outcome.accepted or outcome.best
            if outcome.accepted is None:
                why = "; ".join(outcome.attempts[-1].rejected_because) if outcome.attempts else "no attempt ran"
                unread.append(f"region {ri} ({kind}): {why}")
            if cand is None or not cand.parsed.text.strip():
                continue
            conf = cand.generation.confidence
            conf = 0.5 if conf is None else conf
            if outcome.accepted is None:
                conf = min(conf, 0.3)  # a rejected output is kept as a witness, never as trusted text
            b = self._block(cand.parsed.text, role, bbox, task, conf)
            b.cells = cand.parsed.cells
            blocks.append(b)
        for i, b in enumerate(blocks):
            b.order = i
        blocks = with_text_layer(blocks, task)
        checks = evidence + [CheckResult(
            name="vlm_regions", passed=not unread, score=float(len(unread)), threshold=0.0,
            reason=(f"{len(unread)} of {len(mine)} regions had no acceptable reading: " + " | ".join(unread)[:600])
            if unread else f"all {len(mine)} regions read",
        )]
        return Reading(blocks=blocks, rotation=layout.rotation, checks=checks, engine=self.name,
                       timings={"read": seconds}, script=task.decision.script, attempts=attempts)

    def _block(self, text: str, role: str, bbox, task: OcrTask, conf: float) -> Block:
        return Block(text=text, role=role, bbox=bbox, page=task.number, engine=self.name, engine_version=self.version,
                     route="ocr", confidence=round(float(min(1.0, max(0.0, conf))), 4))

