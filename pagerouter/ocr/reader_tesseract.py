"""Tesseract (Debian `tesseract-ocr`, through pytesseract) as an independent line reader.

Used as a witness in the CPU escalation vote and as the reader for scripts RapidOCR's model
cannot read. Language packs come from the per-script table in config (`ocr.scripts.table`),
filtered to the packs actually installed (`tesseract --list-langs`); what was wanted but
missing is recorded in `last_notes` so the reading can say so.

Size: Tesseract refuses images over 32767 px a side ("Image too large"), and huge renders are
slow, so a render taller than `escalation.tesseract_max_side_px` is cut into horizontal strips
at the emptiest pixel row near each cut, and a too-wide one is scaled down.
"""

from __future__ import annotations

import shutil
import time
from functools import lru_cache

import numpy as np

from ..config.ocr import OcrConfig
from ..common.geometry import union
from ..common.stages import OcrTask
from .dropped_words import dropped_stretches
from .lines import OcrLine
from .regions import upright
from .unread_lines import ReadLines, below_cut_of
from .raster import render_task
from .script_options import options_for


class TesseractUnavailable(RuntimeError):
    """Tesseract (or pytesseract) is not installed."""


@lru_cache(maxsize=4)
def _installed(cmd: str) -> tuple[str, tuple[str, ...]]:
    import pytesseract

    pytesseract.pytesseract.tesseract_cmd = cmd
    return str(pytesseract.get_tesseract_version()), tuple(pytesseract.get_languages(config=""))


class TesseractReader:
    """Implements the LineReader protocol (`read_image_lines`) with Tesseract word boxes."""

    name = "tesseract"

    def __init__(self, cfg: OcrConfig):
        esc = cfg.escalation
        cmd = esc.tesseract_cmd or shutil.which("tesseract")
        if not cmd:
            raise TesseractUnavailable("tesseract is not installed (no `tesseract` on PATH)")
        try:
            import pytesseract  # noqa: F401
        except ImportError as exc:
            raise TesseractUnavailable(f"pytesseract is not installed: {exc}") from None
        try:
            ver, langs = _installed(cmd)
        except Exception as exc:  # noqa: BLE001 - a broken install is "unavailable", with the reason
            raise TesseractUnavailable(f"tesseract at {cmd} does not run: {exc}") from None
        self.cfg = cfg
        self.cmd = cmd
        self.version = f"tesseract {ver}"
        self.langs = frozenset(langs) - {"osd"}
        self.last_notes: list[str] = []

    # ---- languages -------------------------------------------------------------------------

    def languages_for(self, script: str | None, requested: tuple[str, ...] = ()) -> tuple[str, str]:
        """Tesseract `-l` value for a script from the config table, restricted to installed
        packs; and a note saying what was used and what was missing. `requested` (a request's
        `languages` option, validated as installed at the front) replaces the table."""
        if requested:
            have = [w for w in requested if w in self.langs]
            if have:
                lang = "+".join(have)
                return lang, f"tesseract languages {lang} (requested)"
        opts = options_for(script, self.cfg.scripts)
        wanted = (opts.tesseract_langs if opts else self.cfg.escalation.tesseract_fallback_lang).split("+")
        have = [w for w in wanted if w in self.langs]
        missing = [w for w in wanted if w not in self.langs]
        if not have:
            fb = self.cfg.escalation.tesseract_fallback_lang
            have = [fb] if fb in self.langs else sorted(self.langs)[:1]
        lang = "+".join(have)
        note = f"tesseract languages {lang} for script {script or 'unknown'}"
        if missing:
            note += f" (wanted but not installed: {'+'.join(missing)})"
        return lang, note

    # ---- images ----------------------------------------------------------------------------

    def read_image_lines(
        self, image: np.ndarray, script: str | None = None, languages: tuple[str, ...] = ()
    ) -> list[OcrLine]:
        """Every text line of an RGB image: boxes in image pixels, text, mean word confidence
        (0..1); word boxes in `line.extra["words"]`. `languages`: the request's packs, if any.
        Raises on timeout or engine failure."""
        if image.size == 0:
            return []
        lang, note = self.languages_for(script, languages)
        self.last_notes = [note]
        esc = self.cfg.escalation
        if esc.tesseract_median_filter >= 3:
            import cv2

            k = esc.tesseract_median_filter | 1
            image = cv2.medianBlur(np.ascontiguousarray(image), k)
        h, w = image.shape[:2]
        factor = 1.0
        if w > esc.tesseract_max_side_px:  # too wide: scale down (tiling across columns cuts words)
            factor = esc.tesseract_max_side_px / w
            image = _resize(image, factor)
            self.last_notes.append(f"render {w}x{h} px scaled by {factor:.2f} for tesseract")
        lines: list[OcrLine] = []
        dropped: list[OcrLine] = []
        strips = _strips(image, esc.tesseract_max_side_px)
        if len(strips) > 1:
            self.last_notes.append(f"render cut into {len(strips)} strips for tesseract")
        for y0, y1 in strips:
            got = self._read(image[y0:y1], lang)
            # stretches of a line Tesseract read around and left out (no row in its output): the
            # `unread_lines` net's, as the small reader's below-cut lines are (`dropped_words`)
            gaps = dropped_stretches(image[y0:y1], got)
            for ln in [*got, *gaps]:
                b = ln.bbox
                ln.bbox = ((b[0]) / factor, (b[1] + y0) / factor, (b[2]) / factor, (b[3] + y0) / factor)
                for wd in ln.extra.get("words", []):
                    wb = wd["bbox"]
                    wd["bbox"] = (wb[0] / factor, (wb[1] + y0) / factor, wb[2] / factor, (wb[3] + y0) / factor)
            lines += got
            dropped += gaps
        return ReadLines(lines, below_cut=dropped)

    def _read(self, image: np.ndarray, lang: str) -> list[OcrLine]:
        import pytesseract
        from PIL import Image

        pytesseract.pytesseract.tesseract_cmd = self.cmd
        esc = self.cfg.escalation
        data = pytesseract.image_to_data(
            Image.fromarray(np.ascontiguousarray(image)), lang=lang, config=f"--psm {esc.tesseract_psm}",
            output_type=pytesseract.Output.DICT, timeout=esc.tesseract_timeout_s,
        )
        groups: dict[tuple[int, int, int], list[dict]] = {}
        for i, text in enumerate(data["text"]):
            conf = float(data["conf"][i])
            if conf < 0 or not str(text).strip():  # conf -1: a structural row (page/block/line), no word
                continue
            key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
            x, y, bw, bh = data["left"][i], data["top"][i], data["width"][i], data["height"][i]
            groups.setdefault(key, []).append(
                {"text": str(text).strip(), "conf": conf / 100.0, "bbox": (float(x), float(y), float(x + bw), float(y + bh))}
            )
        lines = []
        for key in sorted(groups):  # Tesseract's own reading order: block, paragraph, line
            words = groups[key]
            boxes = [wd["bbox"] for wd in words]
            n = [max(1, len(wd["text"])) for wd in words]
            conf = sum(wd["conf"] * k for wd, k in zip(words, n)) / sum(n)
            lines.append(OcrLine(
                union(boxes),
                " ".join(wd["text"] for wd in words), conf, extra={"words": words, "key": key},
            ))
        return lines

    def take_suppressed(self) -> int:
        return 0

    # ---- pages -----------------------------------------------------------------------------

    def read_task_lines(self, task: OcrTask, rotation: int = 0, script: str | None = None) -> tuple[list[OcrLine], float]:
        """Re-render the task's page at the Tesseract target (300 DPI, pixel-capped), turn it
        upright and read it: lines with boxes in upright PAGE POINTS; and the seconds spent."""
        t0 = time.perf_counter()
        image, zoom = render_task(task, self.cfg.render_target("tesseract"))
        image = upright(image, rotation)
        lines = self.read_image_lines(image, script, task.languages)
        for ln in [*lines, *below_cut_of(lines)]:
            ln.bbox = tuple(v / zoom for v in ln.bbox)
            for wd in ln.extra.get("words", []):
                wd["bbox"] = tuple(v / zoom for v in wd["bbox"])
        self.last_notes.append(f"rendered at {zoom * 72:.0f} DPI")
        return lines, time.perf_counter() - t0


def _resize(image: np.ndarray, factor: float) -> np.ndarray:
    from PIL import Image

    h, w = image.shape[:2]
    return np.asarray(Image.fromarray(image).resize((max(1, int(w * factor)), max(1, int(h * factor)))))


def _strips(image: np.ndarray, max_h: int) -> list[tuple[int, int]]:
    """Row ranges of at most `max_h` rows, each cut at the emptiest row in its last 15%
    (between text lines, so no line is cut in half)."""
    h = image.shape[0]
    if h <= max_h:
        return [(0, h)]
    grey = image.mean(axis=2) if image.ndim == 3 else image
    darkness = (255 - grey).sum(axis=1)
    out, y = [], 0
    while h - y > max_h:
        lo = y + int(max_h * 0.85)
        cut = lo + int(np.argmin(darkness[lo : y + max_h]))
        out.append((y, cut))
        y = cut
    out.append((y, h))
    return out
