"""Factories for the OCR engines and the in-process OCR path the pipeline calls.

    task = make_ocr_task(page, number, source, decision, text_blocks, cfg)
    ocr = LocalOcr(cfg)          # builds engines once
    reading = ocr.run(task)      # layout -> read -> checks -> escalate if flagged

Block bboxes are PDF points in the UPRIGHT page frame (after the rotation the layout stage
applied, recorded in `reading.rotation`; width/height swap for 90/270), origin top-left, y down.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pymupdf

from ..config.ocr import OcrConfig
from ..model import Block, CheckResult, TriageDecision
from ..stages import LayoutEngine, LayoutResult, OcrTask, Reading, SmallReader
from .regions import read_task_with_lines, upright
from .render import ink_share, render_page
from .scripts import OSD_SCRIPT_NAMES, options_for

log = logging.getLogger(__name__)


def build_layout_engine(cfg: OcrConfig) -> LayoutEngine:
    if cfg.layout.kind == "rapid_layout":
        from .layout_rapid import RapidLayoutEngine

        return RapidLayoutEngine(cfg)
    if cfg.layout.kind == "none":
        from .layout_rapid import NoLayoutEngine

        return NoLayoutEngine(cfg)
    raise ValueError(f"ocr.layout.kind {cfg.layout.kind!r} is not a known layout engine")


def build_small_reader(cfg: OcrConfig) -> SmallReader:
    if cfg.small_reader.kind == "rapidocr":
        from .reader_rapidocr import RapidOcrReader

        return RapidOcrReader(cfg)
    raise ValueError(f"ocr.small_reader.kind {cfg.small_reader.kind!r} is not a known small reader")


def single_page_pdf(page: pymupdf.Page) -> bytes:
    """The page alone as a PDF (so any tier, in any process, can re-render it)."""
    out = pymupdf.open()
    out.insert_pdf(page.parent, from_page=page.number, to_page=page.number)
    try:
        return out.tobytes(garbage=1, deflate=True)
    finally:
        out.close()


def make_ocr_task(
    page: pymupdf.Page, number: int, source: str, decision: TriageDecision, text_blocks: list[Block], cfg: OcrConfig
) -> OcrTask:
    """Render the page at the small reader's target and package it for the OCR stages."""
    try:
        image, scale = render_page(page, cfg.render_target(cfg.small_reader.render_engine))
        if page.parent.is_pdf:
            page_bytes = single_page_pdf(page)
        else:  # an image (or XPS/EPUB...) document: its page converted to a one-page PDF
            page_bytes = page.parent.convert_to_pdf(page.number, page.number)
        ink = ink_share(page)
    except Exception as exc:  # noqa: BLE001 - name file and page, never a bare traceback
        raise ValueError(f"{source} page {number}: cannot render for OCR: {exc}") from None
    return OcrTask(
        source=source, number=number, width=page.rect.width, height=page.rect.height, decision=decision,
        image=image, scale=scale, page_bytes=page_bytes, page_kind="pdf", text_blocks=list(text_blocks), ink=ink,
    )


class LocalOcr:
    """The OCR path in one process: engines built once, `run` per task."""

    def __init__(self, cfg: OcrConfig):
        self.cfg = cfg
        self.layout = build_layout_engine(cfg)
        self.reader = build_small_reader(cfg)
        self.escalator = None
        if cfg.escalation.enabled:
            try:
                from .escalate import build_escalator  # built by the checks/escalation helper

                self.escalator = build_escalator(cfg)
            except ImportError as exc:
                log.warning("no escalator available (%s): flagged pages stay flagged", exc)
        self._script_readers: dict[str, object] = {}

    # -- script fallback: scripts the small reader's model cannot read -------------------------

    def _reader_for_script(self, script: str):
        """A line reader for a script RapidOCR cannot read (Tesseract with the table's packs)."""
        if script not in self._script_readers:
            try:
                from .reader_tesseract import TesseractReader

                self._script_readers[script] = TesseractReader(self.cfg)
            except Exception as exc:  # noqa: BLE001
                log.warning("Tesseract reader unavailable (%s)", exc)
                self._script_readers[script] = None
        return self._script_readers[script]

    def _osd_script(self, image: np.ndarray) -> tuple[str | None, str]:
        """Tesseract OSD's script guess on the upright image (about 0.4 s at ~1000 px)."""
        try:
            import pytesseract
            from PIL import Image

            h, w = image.shape[:2]
            f = min(1.0, 1400 / max(h, w))
            small = Image.fromarray(image).resize((max(1, int(w * f)), max(1, int(h * f)))) if f < 1 else Image.fromarray(image)
            osd = pytesseract.image_to_osd(small, output_type=pytesseract.Output.DICT, config="--psm 0 -c min_characters_to_try=5")
        except Exception as exc:  # noqa: BLE001 - OSD refuses pages with little text
            return None, f"OSD gave no answer ({str(exc).strip().splitlines()[-1][:80] if str(exc).strip() else exc})"
        name = OSD_SCRIPT_NAMES.get(osd.get("script", ""))
        conf = float(osd.get("script_conf", 0.0))
        if name is None or conf < self.cfg.scripts.osd_min_script_conf:
            return None, f"OSD script {osd.get('script')} conf {conf:.2f} < {self.cfg.scripts.osd_min_script_conf}"
        return name, f"OSD script {name} conf {conf:.2f}"

    def read(self, task: OcrTask, layout: LayoutResult) -> Reading:
        """The small reader's reading, with the script chosen (and a script fallback reader)."""
        cfg = self.cfg
        script = task.decision.script
        opts = options_for(script, cfg.scripts)
        if opts is not None and not opts.rapidocr and self._reader_for_script(script) is not None:
            return read_task_with_lines(task, layout, self._reader_for_script(script), cfg, script=script)
        reading = self.reader.read_task(task, layout, script=script)
        letters = sum(ch.isalpha() for b in reading.blocks for ch in b.text)
        if (script is None and cfg.scripts.osd_when_unread and letters < cfg.scripts.min_letters
                and task.ink >= cfg.scripts.osd_min_ink and task.decision.route != "mixed"):
            found, why = self._osd_script(upright(task.image, layout.rotation))
            reading.checks.append(CheckResult(name="script_osd", passed=True, score=float(letters),
                                              threshold=float(cfg.scripts.min_letters),
                                              reason=f"{letters} letters read on an inked page; {why}"))
            o = options_for(found, cfg.scripts)
            if o is not None and not o.rapidocr:
                alt = self._reader_for_script(found)
                if alt is not None:
                    second = read_task_with_lines(task, layout, alt, cfg, script=found)
                    second.checks = reading.checks + second.checks
                    return second
                reading.checks.append(CheckResult(name="script_unreadable", passed=False, reason=(
                    f"page script {found} is not read by {self.reader.name} and no fallback reader is available")))
        return reading

    def run(self, task: OcrTask) -> Reading:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        if task.ink < self.cfg.blank_ink:
            return Reading(blocks=[], rotation=0, engine=self.reader.name, checks=[CheckResult(
                name="blank", passed=True, score=task.ink, threshold=self.cfg.blank_ink,
                reason=f"ink share {task.ink:.4f} < blank_ink {self.cfg.blank_ink}: nothing to read")],
                timings={"ocr": time.perf_counter() - t0})
        layout = self.layout.detect_batch([task])[0]
        timings["layout"] = time.perf_counter() - t0
        orient = getattr(self.layout, "last_orientation", None)
        reading = self.read(task, layout)
        if orient is not None and task.decision.route != "mixed":
            reading.checks.insert(0, CheckResult(name="orientation", passed=True, score=float(layout.rotation),
                                                 reason=orient.reason))
        timings["read"] = time.perf_counter() - t0 - timings["layout"]
        try:
            from .checks import check_reading
        except ImportError:
            check_reading = None
        if check_reading is not None:
            t1 = time.perf_counter()
            reading.checks.extend(check_reading(task, reading, self.cfg.checks))
            timings["checks"] = time.perf_counter() - t1
        if reading.flagged and self.escalator is not None:
            t1 = time.perf_counter()
            escalated = self.escalator.escalate(task, reading)
            escalated.rotation = escalated.rotation or reading.rotation
            timings["escalation"] = time.perf_counter() - t1
            reading = escalated
        reading.timings.update(timings)
        return reading
