"""The CPU small reader: RapidOCR 3.10 (PP-OCRv6 det/rec, onnxruntime), models from its wheel.

The page is detected and recognised once at the reader's render size (whole upright image, so
text the layout model missed is not lost); recognised lines are then assigned to layout
regions and joined into blocks by `regions.py`.

Script control: the only shipped recognition model is Chinese+English(+Latin languages+
Japanese); it has no Cyrillic, Greek or Arabic. On a page whose expected script is known,
decoding is restricted to the characters of the allowed scripts (`ocr.scripts.table`), so a
Latin page cannot come out with CJK characters; each suppressed character lowers that line's
confidence and is counted in the reading.
"""

from __future__ import annotations

import logging
import threading
import time
from importlib.metadata import version as _pkg_version

import numpy as np

from ..config.ocr import OcrConfig
from ..model import CheckResult
from ..stages import LayoutResult, OcrTask, Reading
from ..unicode_scripts import char_script
from .lines import OcrLine
from .script_options import OSD_SCRIPT_NAMES, allowed_mask, options_for, reading_script

__all__ = ["RapidOcrReader", "OcrLine"]


class _MaskedCTCDecode:
    """Wraps RapidOCR's CTC decoder: zeroes the probabilities of disallowed characters before
    the argmax, so the best allowed character wins, and penalises lines that needed it."""

    def __init__(self, inner, penalty: float):
        self.inner = inner
        self.penalty = penalty
        self.mask: np.ndarray | None = None
        self.suppressed = 0  # characters suppressed since the last reset

    def __getattr__(self, name):  # character list, dict, ... stay reachable
        return getattr(self.inner, name)

    def __call__(self, preds: np.ndarray, return_word_box: bool = False, **kw):
        if self.mask is None or preds.shape[-1] != self.mask.shape[0]:
            return self.inner(preds, return_word_box, **kw)
        raw_idx = preds.argmax(axis=2)
        foreign = ~self.mask[raw_idx]  # (batch, time) positions whose best token is disallowed
        # Count runs (CTC repeats one character over several frames).
        starts = foreign & ~np.concatenate([np.zeros_like(foreign[:, :1]), foreign[:, :-1]], axis=1)
        per_line = starts.sum(axis=1)
        masked = preds * self.mask[None, None, :]
        lines, words = self.inner(masked, return_word_box, **kw)
        out = []
        for (text, score), n in zip(lines, per_line):
            if n:
                self.suppressed += int(n)
                share = n / max(1, len(text) + n)
                score = float(score) * max(0.0, 1.0 - self.penalty * share)
            out.append((text, score))
        return out, words


class RapidOcrReader:
    """Implements stages.SmallReader with RapidOCR; also reads whole images for other tiers."""

    name = "rapidocr"

    def __init__(self, cfg: OcrConfig):
        from rapidocr import RapidOCR

        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        self.cfg = cfg
        sr = cfg.small_reader
        # RapidOCR shrinks images whose longest side exceeds max_side_len before detection AND
        # recognition: set it high, our render size and det_limit_side_len decide.
        max_side = 100_000
        params = {
            "Global.log_level": "warning",
            "Global.text_score": sr.text_score,
            "Global.use_cls": sr.line_direction_classifier,
            "Global.max_side_len": max_side,
            "Det.limit_type": sr.det_limit_type,
            "Det.limit_side_len": sr.det_limit_side_len,
            "Det.box_thresh": sr.box_thresh,
            "Det.unclip_ratio": sr.unclip_ratio,
        }
        if sr.threads > 0:
            params["EngineConfig.onnxruntime.intra_op_num_threads"] = sr.threads
        self.engine = RapidOCR(params=params)
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        self._det = self.engine._load_det_model()
        rec = self.engine._load_rec_model()  # load now: the decoder must be wrapped before first use
        self._decoder = _MaskedCTCDecode(rec.postprocess_op, sr.foreign_char_penalty)
        rec.postprocess_op = self._decoder
        self._characters = tuple(self._decoder.character)
        self.version = f"rapidocr {_pkg_version('rapidocr')} PP-OCRv6 small"
        self.reads_script = {s for s, o in cfg.scripts.table.items() if o.rapidocr}
        self._tables = None
        self._fallback = None  # Tesseract, for scripts this model cannot read
        self._lock = threading.Lock()
        self._local = threading.local()  # per-thread count of suppressed characters

    @property
    def tables(self):
        """Table structure reader, built on the first table (rapid-table loads a model)."""
        if self._tables is None:
            from .tables import TableReader

            self._tables = TableReader(self.cfg.tables)
        return self._tables

    # ---- whole image -------------------------------------------------------------------------

    def read_image_lines(self, image: np.ndarray, script: str | None = None) -> list[OcrLine]:
        """Detect and recognise every line of an RGB image: boxes in image pixels, text,
        confidence. With a known `script`, decoding is restricted to that script's allowed set."""
        if image.size == 0:
            return []
        opts = options_for(script, self.cfg.scripts)
        allowed = tuple(opts.rapidocr_allowed) if opts and opts.rapidocr_allowed else ()
        mask = np.array(allowed_mask(self._characters, allowed)) if allowed else None
        # The decoder's mask is per call; the pipeline reads pages from several threads, so one
        # call at a time (onnxruntime already uses every core for one call).
        side = max(self.cfg.small_reader.det_limit_side_len, int(self.cfg.small_reader.det_scale * max(image.shape[:2])))
        with self._lock:
            self._det.limit_side_len = side  # detector input follows the render size (big pages)
            self._decoder.mask = mask
            self._decoder.suppressed = 0
            try:
                # Flags passed on every call: RapidOCR keeps call flags as state (update_params),
                # so a rec-only call would otherwise leave detection off for the next page.
                res = self.engine(np.ascontiguousarray(image), use_det=True, use_rec=True,
                                  use_cls=self.cfg.small_reader.line_direction_classifier)
            finally:
                self._decoder.mask = None
                self._local.suppressed = getattr(self._local, "suppressed", 0) + self._decoder.suppressed
        boxes = getattr(res, "boxes", None)
        txts = getattr(res, "txts", None)
        if boxes is None or txts is None or len(txts) == 0:
            return []
        lines = []
        for poly, text, score in zip(boxes, txts, res.scores):
            poly = np.asarray(poly, dtype=float)
            bbox = (float(poly[:, 0].min()), float(poly[:, 1].min()), float(poly[:, 0].max()), float(poly[:, 1].max()))
            if text.strip():
                lines.append(OcrLine(bbox, text.strip(), float(score)))
        if script is None and self.cfg.scripts.auto_mask:
            self._remask_foreign_lines(image, lines)
        return lines

    def _remask_foreign_lines(self, image: np.ndarray, lines: list[OcrLine]) -> None:
        """No script was given: if the lines are dominated by one script that has an allowed
        set, re-recognise (with the mask) only the lines holding characters outside it, e.g.
        CJK characters the Chinese+English model put into an English page."""
        guess = reading_script(" ".join(ln.text for ln in lines), self.cfg.scripts)
        opts = options_for(guess.script, self.cfg.scripts) if guess.script else None
        if opts is None or not opts.rapidocr_allowed:
            return
        ok = set(opts.rapidocr_allowed) | {"Common"}
        foreign = [ln for ln in lines if any(char_script(c) not in ok for c in ln.text)]
        if not foreign:
            return
        mask = np.array(allowed_mask(self._characters, tuple(opts.rapidocr_allowed)))
        h, w = image.shape[:2]
        for ln in foreign:
            x0, y0, x1, y1 = (int(v) for v in ln.bbox)
            crop = np.ascontiguousarray(image[max(0, y0):min(h, y1 + 1), max(0, x0):min(w, x1 + 1)])
            if crop.shape[0] < 4 or crop.shape[1] < 4:
                continue
            with self._lock:
                self._decoder.mask = mask
                self._decoder.suppressed = 0
                try:
                    rec = self.engine(crop, use_det=False, use_cls=False, use_rec=True)
                finally:
                    self._decoder.mask = None
                    n = self._decoder.suppressed
            txts = getattr(rec, "txts", None) or ()
            if txts and str(txts[0]).strip():
                before = ln.text
                ln.text, ln.confidence = str(txts[0]).strip(), float(rec.scores[0])
                ln.suppressed += max(n, sum(char_script(c) not in ok for c in before))
                self._local.suppressed = getattr(self._local, "suppressed", 0) + ln.suppressed
            else:  # nothing readable in the allowed script: drop the foreign characters, penalised
                bad = sum(char_script(c) not in ok for c in ln.text)
                ln.text = "".join(c for c in ln.text if char_script(c) in ok).strip()
                ln.confidence *= max(0.0, 1.0 - self.cfg.small_reader.foreign_char_penalty * bad / max(1, len(ln.text) + bad))
                ln.suppressed += bad
                self._local.suppressed = getattr(self._local, "suppressed", 0) + bad
        lines[:] = [ln for ln in lines if ln.text]

    def take_suppressed(self) -> int:
        """Foreign characters suppressed in this thread's reads since the last call (then reset)."""
        n = getattr(self._local, "suppressed", 0)
        self._local.suppressed = 0
        return n

    # ---- SmallReader ---------------------------------------------------------------------------

    def read_batch(self, tasks: list[OcrTask], layouts: list[LayoutResult]) -> list[Reading]:
        return [self.read_task(t, lay) for t, lay in zip(tasks, layouts)]

    def read_task(self, task: OcrTask, layout: LayoutResult, script: str | None = None) -> Reading:
        """Read one task with its layout: blocks in upright page points, in reading order.

        Blank tasks (ink below `ocr.blank_ink`) give no blocks. The page's script is the
        triage's (healthy text layer) or `script`; a script the shipped model cannot read goes
        to the script fallback reader (Tesseract). With no known script and almost nothing
        read on an inked page, Tesseract OSD is asked for the script first."""
        from .regions import read_task_with_lines, upright

        t0 = time.perf_counter()
        cfg = self.cfg
        evidence = list(getattr(layout, "evidence", []) or [])  # e.g. the orientation trial
        if task.ink < cfg.blank_ink:
            return Reading(blocks=[], rotation=0, engine=self.name, script=task.decision.script, checks=evidence + [
                CheckResult(name="blank", passed=True, score=task.ink, threshold=cfg.blank_ink,
                            reason=f"ink share {task.ink:.4f} < blank_ink {cfg.blank_ink}: nothing to read")],
                timings={"read": time.perf_counter() - t0})
        script = script or task.decision.script
        opts = options_for(script, cfg.scripts)
        alt = self._script_reader(script) if opts is not None and not opts.rapidocr else None
        if alt is not None:
            reading = read_task_with_lines(task, layout, alt, cfg, script=script, tables=self.tables)
        else:
            reading = read_task_with_lines(task, layout, self, cfg, script=script, tables=self.tables)
            letters = sum(ch.isalpha() for b in reading.blocks for ch in b.text)
            if (script is None and cfg.scripts.osd_when_unread and letters < cfg.scripts.min_letters
                    and task.ink >= cfg.scripts.osd_min_ink and task.decision.route != "mixed"):
                found, why = osd_script(upright(task.image, layout.rotation), cfg.scripts.osd_min_script_conf)
                evidence.append(CheckResult(
                    name="script_osd", passed=True, score=float(letters), threshold=float(cfg.scripts.min_letters),
                    reason=f"{letters} letters read on an inked page; {why}"))
                o = options_for(found, cfg.scripts)
                if o is not None and not o.rapidocr:
                    alt = self._script_reader(found)
                    if alt is not None:
                        second = read_task_with_lines(task, layout, alt, cfg, script=found, tables=self.tables)
                        got = sum(ch.isalpha() for b in second.blocks for ch in b.text)
                        # OSD guesses on little text: keep the re-read only if it reads more letters.
                        evidence.append(CheckResult(
                            name="script_reread", passed=True, score=float(got), threshold=float(letters),
                            reason=f"{alt.name} ({found}) read {got} letters vs {letters}: "
                            + ("kept" if got > letters else "discarded")))
                        if got > letters:
                            reading = second
                    else:
                        evidence.append(CheckResult(name="script_unreadable", passed=False, reason=(
                            f"page script {found} is not read by {self.name} and no fallback reader is available")))
        reading.checks = evidence + reading.checks
        reading.timings["read"] = time.perf_counter() - t0
        return reading

    def _script_reader(self, script: str | None):
        """The reader for scripts the shipped model cannot read (Tesseract), built once; None if
        Tesseract is unavailable."""
        if self._fallback is None:
            try:
                from .reader_tesseract import TesseractReader

                self._fallback = TesseractReader(self.cfg)
            except Exception as exc:  # noqa: BLE001 - missing Tesseract: say so, keep going
                logging.getLogger(__name__).warning("Tesseract reader unavailable (%s)", exc)
                self._fallback = False
        return self._fallback or None


def osd_script(image: np.ndarray, min_conf: float) -> tuple[str | None, str]:
    """Tesseract OSD's script guess on an upright image (about 0.4 s at ~1400 px)."""
    try:
        import pytesseract
        from PIL import Image

        h, w = image.shape[:2]
        f = min(1.0, 1400 / max(h, w))
        pil = Image.fromarray(image)
        if f < 1:
            pil = pil.resize((max(1, int(w * f)), max(1, int(h * f))))
        osd = pytesseract.image_to_osd(pil, output_type=pytesseract.Output.DICT,
                                       config="--psm 0 -c min_characters_to_try=5")
    except Exception as exc:  # noqa: BLE001 - OSD refuses pages with little text
        msg = str(exc).strip().splitlines()
        return None, f"OSD gave no answer ({msg[-1][:80] if msg else type(exc).__name__})"
    name = OSD_SCRIPT_NAMES.get(osd.get("script", ""))
    conf = float(osd.get("script_conf", 0.0))
    if name is None or conf < min_conf:
        return None, f"OSD script {osd.get('script')} conf {conf:.2f} < {min_conf}"
    return name, f"OSD script {name} conf {conf:.2f}"
