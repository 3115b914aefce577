"""CPU escalation: re-read a flagged page with independent engines and vote token by token.

Witnesses, in the configured engine order (`ocr.escalation.engine_order`, which also breaks
ties): RapidOCR again at a higher resolution, Tesseract (if installed) and the first
(flagged) reading (slot `rapidocr`, whatever engine produced it). Each witness's page text
goes through `check_text`; a witness whose own checks fail (except those in
`witness_ignore_checks`) is dropped. An engine that fails or times out is recorded and
dropped; nothing is raised out of `escalate`.

Independence: witnesses are counted by ENGINE (the engine/model that produced the text), not
by slot. The first reading counts as the engine that read it: on a page whose script the
shipped RapidOCR model cannot read (Cyrillic, Greek, Arabic, ...) the small reader falls back
to Tesseract, so that first reading IS Tesseract's. Decisions:
- the first reading only ever fills its own slot, never another engine's;
- a slot whose engine already produced the first reading is not re-run (Tesseract re-reading
  a Tesseract reading, with another resolution, language or psm, is not independent evidence);
- RapidOCR hi-res is the same PP-OCR model as the first RapidOCR reading at another
  resolution: ONE engine (`ENGINE_OF`). Both are read, but only the first usable of them in
  engine order votes (by default the hi-res re-read); the other is reported "same engine";
- so at most one witness per engine votes, and the `escalation` result names the engines
  that read the page and the independent witnesses that voted.

- two or more usable independent witnesses: vote (`vote.py`). Where geometry allows, per block: every
  witness line/word is assigned to the first reading's block containing its centre, so the
  output keeps the first reading's bboxes and roles; if too much of a witness's text falls
  outside those blocks (or there are none), one whole-page block is voted instead.
  Table and figure blocks are kept from the first reading as they were.
- one usable independent witness: it must be non-empty, else the next engine in order with
  any text is taken (the page stays flagged through the re-check). No vote happened, so the
  page is flagged `escalation_single_witness` (a failed check saying which engines read it and
  why no second independent engine was available); for Cyrillic etc. on a CPU-only install
  with only RapidOCR's Latin/CJK model and Tesseract, that is the honest outcome.
Voted blocks have engine `vote`, route `escalation`, `witnesses` = the engines that voted,
and confidence = their character-weighted token agreement.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace

from ..config.ocr import OcrConfig, RenderTargetConfig
from ..common.geometry import center_inside, grow, union
from ..model import Block, CheckResult
from ..common.stages import OcrTask, Reading
from .checks import check_reading, check_text
from .lines import OcrLine, join_text, sort_lines
from .regions import upright
from .raster import render_task
from .script_options import options_for, reading_script
from .unread_lines import still_unread
from .vote import vote

log = logging.getLogger(__name__)

FIRST = "rapidocr"
"""Name of the first reading's slot in `engine_order` (whatever engine produced it)."""

ENGINE_OF = {"rapidocr_hires": "rapidocr", "rapidocr": "rapidocr", "tesseract": "tesseract"}
"""Witness slot / reader name -> engine for independence counting. RapidOCR hi-res runs the
same recognition model as the first RapidOCR reading, so it is the same engine."""


def engine_of(name: str) -> str:
    return ENGINE_OF.get(name, name)

KEPT_ROLES = frozenset({"figure", "table"})

OWN_CHECKS = frozenset({
    "low_confidence", "empty_output", "blank_page_text", "repetition_char", "repetition_token",
    "repetition_phrase", "repetition_line", "drift_trigrams", "drift_compression", "length_vs_ink",
    "language", "script_expected", "script_foreign", "wordlike_share", "symbol_share", "table_rows",
})


@dataclass
class Witness:
    name: str
    engine: str = ""  # the engine that produced the text (independence unit); default from the name
    engine_version: str = ""
    lines: list[OcrLine] = field(default_factory=list)  # page points, upright frame (not for the first reading)
    text: str = ""
    confidences: list[float] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    failed_checks: list[CheckResult] = field(default_factory=list)
    same_engine_as: str | None = None  # usable, but an earlier witness of the same engine votes
    first: bool = False  # the first (flagged) reading

    def __post_init__(self):
        if not self.engine:
            self.engine = engine_of(self.name)

    @property
    def usable(self) -> bool:
        return self.error is None and not self.failed_checks and bool(self.text.strip())


class VoteEscalator:
    """Implements stages.Escalator on CPU with RapidOCR (higher resolution) and Tesseract."""

    name = "vote"
    version = "vote 1.0"

    def __init__(self, cfg: OcrConfig, rapid=None, tesseract=None):
        self.cfg = cfg
        self._rapid = rapid  # a RapidOcrReader set up for the high-resolution re-read
        self._tess = tesseract
        self._unavailable: dict[str, str] = {}

    # ---- engines (built lazily: a page that never escalates costs nothing) -------------------

    def _hires_reader(self):
        if self._rapid is None and "rapidocr_hires" not in self._unavailable:
            try:
                from .reader_rapidocr import RapidOcrReader

                esc = self.cfg.escalation
                hires = self.cfg.model_copy(deep=True)
                # RapidOCR shrinks inputs above its render target's longest side: raise it to ours.
                hires.render_targets["rapidocr"].longest_side_px = esc.hires_longest_side_px
                self._rapid = RapidOcrReader(hires)
            except Exception as exc:  # noqa: BLE001 - recorded, the vote goes on without it
                self._unavailable["rapidocr_hires"] = f"RapidOCR unavailable: {exc}"
        return self._rapid

    def _tesseract(self):
        if self._tess is None and "tesseract" not in self._unavailable:
            try:
                from .reader_tesseract import TesseractReader

                self._tess = TesseractReader(self.cfg)
            except Exception as exc:  # noqa: BLE001
                self._unavailable["tesseract"] = str(exc)
        return self._tess

    # ---- witnesses ---------------------------------------------------------------------------

    def _read_hires(self, task: OcrTask, rotation: int, script: str | None) -> Witness:
        w = Witness("rapidocr_hires")
        opts = options_for(script, self.cfg.scripts)
        if opts is not None and not opts.rapidocr:
            w.error = f"RapidOCR's model does not read {script}"
            return w
        reader = self._hires_reader()
        if reader is None:
            w.error = self._unavailable.get("rapidocr_hires", "unavailable")
            return w
        esc = self.cfg.escalation
        t0 = time.perf_counter()
        image, zoom = render_task(task, RenderTargetConfig(longest_side_px=esc.hires_longest_side_px, max_pixels=esc.hires_max_pixels))
        lines = reader.read_image_lines(upright(image, rotation), script)
        if hasattr(reader, "take_suppressed"):
            reader.take_suppressed()
        for ln in lines:
            ln.bbox = tuple(v / zoom for v in ln.bbox)
        w.engine_version = reader.version
        w.lines = sort_lines(lines)
        w.seconds = time.perf_counter() - t0
        w.notes.append(f"{image.shape[1]}x{image.shape[0]} px")
        return w

    def _read_tesseract(self, task: OcrTask, rotation: int, script: str | None) -> Witness:
        w = Witness("tesseract")
        if not self.cfg.escalation.use_tesseract:
            w.error = "disabled in config (escalation.use_tesseract)"
            return w
        reader = self._tesseract()
        if reader is None:
            w.error = self._unavailable.get("tesseract", "unavailable")
            return w
        lines, w.seconds = reader.read_task_lines(task, rotation, script)
        w.engine_version = reader.version
        w.lines = lines  # Tesseract's own reading order (block, paragraph, line)
        w.notes.extend(reader.last_notes)
        return w

    def _witnesses(self, task: OcrTask, first: Reading, script: str | None) -> tuple[list[Witness], list[str]]:
        """The witnesses in engine order, and notes on slots not run (same engine as the first reading)."""
        esc = self.cfg.escalation
        first_name = first.engine or FIRST
        first_engine = first_reading_engine(first)
        out: list[Witness] = []
        skipped: list[str] = []
        for name in esc.engine_order:
            if name == FIRST:
                if any(x.name == first_name for x in out):
                    continue
                w = Witness(first_name, engine=first_engine, first=True,
                            engine_version=next((b.engine_version for b in first.blocks if b.engine_version), ""))
                texts = [b for b in first.blocks if b.role != "figure" and b.text.strip()]
                w.text = "\n".join(b.text for b in texts)
                w.confidences = [b.confidence for b in texts]
                w.weights = [max(1, len(b.text)) for b in texts]
                w.notes.append(f"the first (flagged) reading, by {first_engine}")
                out.append(w)
                continue
            if name == first_name or any(x.name == name for x in out):
                # e.g. the `tesseract` slot on a Cyrillic page the small reader already read with
                # Tesseract: the same engine again is no independent witness, and it must not be
                # the first reading standing in for it either.
                skipped.append(f"{name}: not run, the first reading is already {first_engine}'s (same engine)")
                continue
            if name == "rapidocr_hires" and not esc.use_rapidocr_hires:
                out.append(Witness(name, error="disabled in config (escalation.use_rapidocr_hires)"))
                continue
            t0 = time.perf_counter()
            try:
                if name == "rapidocr_hires":
                    w = self._read_hires(task, first.rotation, script)
                elif name == "tesseract":
                    w = self._read_tesseract(task, first.rotation, script)
                else:
                    w = Witness(name, error=f"unknown escalation engine {name!r}")
            except Exception as exc:  # noqa: BLE001 - an engine failing loses its vote, never the page
                msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
                w = Witness(name, error=f"{type(exc).__name__}: {msg[:200]}", seconds=time.perf_counter() - t0)
                log.warning("%s page %s: escalation engine %s failed: %s", task.source, task.number, name, msg)
            if w.lines:
                w.text = "\n".join(ln.text for ln in w.lines)
                w.confidences = [ln.confidence for ln in w.lines]
                w.weights = [max(1, len(ln.text)) for ln in w.lines]
            out.append(w)
        return out, skipped

    def _judge(self, w: Witness, ink: float, script: str | None) -> None:
        """Drop a witness whose own reading fails the checks (some checks are only advisory)."""
        if w.error is not None:
            return
        ignore = set(self.cfg.escalation.witness_ignore_checks)
        results = check_text(w.text, confidences=w.confidences, weights=w.weights, ink=ink,
                             expected_script=script, cfg=self.cfg.checks)
        w.failed_checks = [r for r in results if not r.passed and r.name not in ignore]

    # ---- escalation --------------------------------------------------------------------------

    def escalate(self, task: OcrTask, first: Reading) -> Reading:
        t0 = time.perf_counter()
        try:
            return self._escalate(task, first, t0)
        except Exception as exc:  # noqa: BLE001 - last resort: the first reading survives, with the reason
            log.exception("%s page %s: escalation failed", task.source, task.number)
            out = Reading(blocks=first.blocks, rotation=first.rotation, checks=list(first.checks),
                          engine=first.engine, timings=dict(first.timings))
            out.checks.append(CheckResult(name="escalation", passed=False, score=0.0, threshold=1.0,
                                          reason=f"escalation failed ({type(exc).__name__}: {exc}); first reading kept"))
            out.timings["escalation"] = time.perf_counter() - t0
            return out

    def _escalate(self, task: OcrTask, first: Reading, t0: float) -> Reading:
        from .checks import page_ink

        ink = task.ink if task.ink > 0 else page_ink(task)
        script = task.decision.script or getattr(first, "script", None)
        if script is None:
            script = reading_script("\n".join(b.text for b in first.blocks), self.cfg.scripts).script
        witnesses, skipped = self._witnesses(task, first, script)
        for w in witnesses:
            self._judge(w, ink, script)
        # One vote per engine: the first usable witness of each engine, in engine order.
        usable: list[Witness] = []
        for w in witnesses:
            if not w.usable:
                continue
            twin = next((u for u in usable if u.engine == w.engine), None)
            if twin is not None:
                w.same_engine_as = twin.name
            else:
                usable.append(w)
        first_name = first.engine or FIRST

        mode = "vote"
        if len(usable) == 1 or not usable:
            # One survivor must be non-empty (usable implies it); else the next engine with any text.
            chosen = usable[0] if usable else next((w for w in witnesses if w.error is None and w.text.strip()), None)
            mode = "single" if usable else "fallback"
            usable = [chosen] if chosen is not None else []
        if not usable or (len(usable) == 1 and usable[0].name == first_name):
            blocks = list(first.blocks)  # nothing better than what we had: keep it as it was
            how = "kept the first reading"
        else:
            blocks, how = self._vote_blocks(task, first, usable, first_name)

        out = Reading(blocks=blocks, rotation=first.rotation, engine=self.name if mode == "vote" else
                      (usable[0].name if usable else first.engine), timings=dict(first.timings))
        if getattr(first, "script", None) is not None:
            out.script = first.script  # type: ignore[attr-defined]
        out.checks = [c for c in first.checks if c.passed and c.name not in OWN_CHECKS and not c.name.startswith("block_")]
        out.checks.append(self._summary(first, witnesses, usable, mode, how, skipped))
        if mode == "single":
            out.checks.append(self._single_witness(witnesses, usable[0], skipped, script))
        for w in witnesses:
            out.checks.append(_witness_result(w, usable))
            if w.seconds:
                out.timings[f"escalation_{w.name}"] = round(w.seconds, 3)
        out.checks.extend(check_reading(task, out, self.cfg.checks))
        left = still_unread(first.checks, out.blocks, self.cfg.checks, first.blocks)  # lines the first reading left out
        if left is not None:
            out.checks.append(left)
        out.timings["escalation"] = time.perf_counter() - t0
        return out

    def _summary(self, first: Reading, witnesses: list[Witness], usable: list[Witness], mode: str, how: str,
                 skipped: list[str]) -> CheckResult:
        flagged_by = [c for c in first.checks if not c.passed]
        why = ", ".join(f"{c.name} ({c.score:g} vs {c.threshold:g})" if c.threshold is not None else c.name
                        for c in flagged_by) or "nothing"
        names = [f"{w.name} [{w.engine}]" for w in usable]
        if mode == "vote":
            what = f"voted over {len(usable)} independent engines: {', '.join(names)}"
        elif mode == "single":
            what = f"only one independent engine was usable: {names[0]}; no vote"
        else:
            what = f"no witness passed its checks; fell back to {names[0]}" if names else "no witness read anything"
        missing = [f"{w.name}: {w.error}" for w in witnesses if w.error] + skipped
        return CheckResult(
            name="escalation", passed=bool(usable) and mode != "fallback", score=float(len(usable)), threshold=2.0,
            reason=f"first reading flagged by {why}; engines that read the page: {read_by(witnesses)}; {what}; {how}"
            + (f"; unavailable: {'; '.join(missing)}" if missing else ""),
        )

    @staticmethod
    def _single_witness(witnesses: list[Witness], only: Witness, skipped: list[str], script: str | None) -> CheckResult:
        """No vote happened: one independent engine's reading stands, and the page says so."""
        others = [f"{w.name}: {w.error}" for w in witnesses if w.error] + skipped
        others += [f"{w.name}: same engine ({w.engine}) as {w.same_engine_as}, not independent"
                   for w in witnesses if w.same_engine_as]
        others += [f"{w.name}: its own checks failed ({', '.join(c.name for c in w.failed_checks[:3])})"
                   for w in witnesses if w.error is None and w.failed_checks and w is not only]
        others += [f"{w.name}: read nothing" for w in witnesses
                   if w.error is None and not w.failed_checks and not w.text.strip() and w is not only]
        return CheckResult(
            name="escalation_single_witness", passed=False, score=1.0, threshold=2.0,
            reason=f"one usable independent witness ({only.name}, engine {only.engine}) on a {script or 'unknown'}-script "
            f"page, so nothing was voted; engines that read the page: {read_by(witnesses)}; "
            f"no second engine: {'; '.join(others) or 'none configured'}",
        )

    # ---- building the voted blocks -----------------------------------------------------------

    def _vote_blocks(self, task: OcrTask, first: Reading, usable: list[Witness], first_name: str) -> tuple[list[Block], str]:
        names = [w.name for w in usable]
        single = len(usable) == 1
        # exact text-layer blocks of a mixed page are never re-voted: OCR can only make them worse
        def kept(b: Block) -> bool:
            return b.role in KEPT_ROLES or b.route == "text_layer"

        targets = [b for b in first.blocks if not kept(b)]
        # On a mixed page the witnesses read the whole render, the text layer's lines included: what
        # they read inside an exact text-layer block is that block's text again, so it is not theirs
        # to vote on (kept whole, it came out twice: the page's text under the layer's own blocks).
        layer = [grow(b.bbox, self.cfg.escalation.block_margin_pt) for b in first.blocks
                 if b.route == "text_layer" and b.text.strip()]
        if layer:
            usable = [_outside(w, layer, first) for w in usable]
        per_block = self._assign(targets, usable, first_name)
        engine_version = "; ".join(f"{w.name}: {w.engine_version}" for w in usable if w.engine_version)
        if per_block is not None:
            blocks = []
            for b in first.blocks:
                if kept(b):
                    blocks.append(b)
                    continue
                texts = per_block[id(b)]
                res = vote([(n, texts[n]) for n in names])
                if not res.text:
                    # the witnesses out-voted whatever the first reading had there (on a mixed page,
                    # often a text-layer line it read again): an empty block would still "account"
                    # for the ink under its box in the checks that follow, so it goes
                    continue
                conf = _single_conf(usable[0], b) if single else res.agreement
                blocks.append(b.model_copy(update={
                    "text": res.text, "engine": usable[0].name if single else self.name,
                    "engine_version": engine_version if not single else usable[0].engine_version or b.engine_version,
                    "route": "escalation", "confidence": float(min(1.0, max(0.0, conf))), "witnesses": names,
                }))
            return blocks, f"per block ({len(targets)} blocks by geometry)"
        # Whole page: one block spanning everything the witnesses read.
        texts = [(w.name, w.text) for w in usable]
        res = vote(texts)
        boxes = [ln.bbox for w in usable for ln in w.lines] + [b.bbox for b in targets if b.text.strip()]
        bbox = union(boxes) if boxes else (0.0, 0.0, task.width, task.height)
        conf = (sum(c * w for c, w in zip(usable[0].confidences, usable[0].weights)) / max(1, sum(usable[0].weights))) \
            if single else res.agreement
        blocks = [b for b in first.blocks if b.role == "figure" or b.route == "text_layer"]
        if res.text:
            blocks.append(Block(
                text=res.text, role="paragraph", bbox=tuple(round(v, 2) for v in bbox), page=task.number,
                engine=usable[0].name if single else self.name, engine_version=engine_version, route="escalation",
                confidence=float(min(1.0, max(0.0, conf))), order=len(blocks), witnesses=names,
            ))
        return blocks, "whole page (geometry did not allow per-block voting)"

    def _assign(self, targets: list[Block], usable: list[Witness], first_name: str) -> dict[int, dict[str, str]] | None:
        """Each target block's text per witness, or None if geometry does not allow it."""
        if not targets:
            return None
        m = self.cfg.escalation.block_margin_pt
        grown = [grow(b.bbox, m) for b in targets]
        out: dict[int, dict[str, str]] = {id(b): {} for b in targets}
        for w in usable:
            if w.name == first_name:
                for b in targets:
                    out[id(b)][w.name] = b.text
                continue
            # Tesseract lines carry word boxes: assign words (a Tesseract line may cross blocks).
            units: list[OcrLine] = []
            for ln in w.lines:
                words = ln.extra.get("words") if ln.extra else None
                if words:
                    units.extend(OcrLine(tuple(wd["bbox"]), wd["text"], wd["conf"], extra={"line": id(ln)}) for wd in words)
                else:
                    units.append(ln)
            per: list[list[OcrLine]] = [[] for _ in targets]
            inside = total = 0
            for u in units:
                n = len(u.text)
                total += n
                hit = next((k for k, g in enumerate(grown) if center_inside(u.bbox, g)), None)
                if hit is not None:
                    per[hit].append(u)
                    inside += n
            if total and inside / total < self.cfg.escalation.min_geometry_coverage:
                return None
            for b, us in zip(targets, per):
                out[id(b)][w.name] = join_text(_rows(us))
        return out


def first_reading_engine(first: Reading) -> str:
    """The engine that actually produced the first reading's OCR text (e.g. `tesseract` when
    the small reader fell back to it for a script RapidOCR's model cannot read)."""
    engines = {b.engine for b in first.blocks if b.route != "text_layer" and b.role != "figure" and b.text.strip() and b.engine}
    if len(engines) == 1:
        return engine_of(engines.pop())
    return engine_of(first.engine or FIRST)


def read_by(witnesses: list[Witness]) -> str:
    """`engine (witness, witness), engine (witness)`: which engines produced text for the page."""
    per: dict[str, list[str]] = {}
    for w in witnesses:
        if w.error is None and w.text.strip():
            per.setdefault(w.engine, []).append("first reading" if w.first else w.name)
    return ", ".join(f"{e} ({', '.join(ns)})" for e, ns in per.items()) or "none"


def _rows(units: list[OcrLine]) -> list[OcrLine]:
    """Units (words or lines) of one block regrouped into lines in reading order."""
    if not units:
        return []
    if all("line" in (u.extra or {}) for u in units):  # words: keep Tesseract's line grouping and order
        lines: dict[int, list[OcrLine]] = {}
        for u in units:
            lines.setdefault(u.extra["line"], []).append(u)
        merged = []
        for ws in lines.values():
            merged.append(OcrLine(union([x.bbox for x in ws]), " ".join(x.text for x in ws),
                                  sum(x.confidence for x in ws) / len(ws)))
        return sort_lines(merged)
    return sort_lines(units)


def _outside(w: Witness, boxes: list[tuple[float, float, float, float]], first: Reading) -> Witness:
    """`w` with only what it read outside `boxes` (a mixed page's text-layer blocks): the first
    reading without its text-layer blocks, an engine's lines (Tesseract's, word by word) without
    those centred in a box."""
    if w.first:
        texts = [b for b in first.blocks if b.route != "text_layer" and b.role != "figure" and b.text.strip()]
        return replace(w, text="\n".join(b.text for b in texts), confidences=[b.confidence for b in texts],
                       weights=[max(1, len(b.text)) for b in texts])
    lines: list[OcrLine] = []
    for ln in w.lines:
        words = (ln.extra or {}).get("words")
        if not words:
            if not any(center_inside(ln.bbox, g) for g in boxes):
                lines.append(ln)
            continue
        left = [wd for wd in words if not any(center_inside(tuple(wd["bbox"]), g) for g in boxes)]
        if len(left) == len(words):
            lines.append(ln)
        elif left:
            lines.append(OcrLine(union([tuple(wd["bbox"]) for wd in left]), " ".join(wd["text"] for wd in left),
                                 sum(wd["conf"] for wd in left) / len(left), extra={**ln.extra, "words": left}))
    return replace(w, lines=lines, text="\n".join(ln.text for ln in lines), confidences=[ln.confidence for ln in lines],
                   weights=[max(1, len(ln.text)) for ln in lines])


def _single_conf(w: Witness, b: Block) -> float:
    if not w.confidences:
        return b.confidence
    return sum(c * x for c, x in zip(w.confidences, w.weights)) / max(1, sum(w.weights))


def _witness_result(w: Witness, usable: list[Witness]) -> CheckResult:
    used = any(u is w for u in usable)
    if w.error:
        state = f"not used: {w.error}"
    elif w.failed_checks:
        state = ("used as fallback despite: " if used else "dropped, its own checks failed: ") + "; ".join(
            f"{c.name}: {c.reason}" for c in w.failed_checks[:3])
    elif not w.text.strip():
        state = "read nothing"
    elif w.same_engine_as and not used:
        state = f"not voting: same engine as {w.same_engine_as} (not an independent witness)"
    else:
        state = "used" if used else "not needed"
    extra = f" ({'; '.join(w.notes)})" if w.notes else ""
    # A dropped witness does not flag the page (the vote stands without it): passed stays True.
    return CheckResult(name=f"witness_{w.name}", passed=True, score=1.0 if used else 0.0, threshold=None,
                       reason=f"{w.name} (engine {w.engine}): {state}; {len(w.text)} chars in {w.seconds:.1f} s{extra}")
