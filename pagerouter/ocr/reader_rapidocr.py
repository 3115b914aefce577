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
from collections import Counter
from importlib.metadata import version as _pkg_version

import numpy as np

from ..config.ocr import OcrConfig
from ..model import CheckResult
from ..common.stages import LayoutResult, OcrTask, Reading
from ..common.unicode_scripts import char_script
from .lines import OcrLine
from .unread_lines import ReadLines
from .onnx_sessions import use_our_options
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
        self.per_line: list[int] | None = None  # when a list: suppressed count of each decoded row, appended

    def __getattr__(self, name):  # character list, dict, ... stay reachable
        return getattr(self.inner, name)

    def __call__(self, preds: np.ndarray, return_word_box: bool = False, **kw):
        if self.mask is None or preds.shape[-1] != self.mask.shape[0]:
            if self.per_line is not None:
                self.per_line.extend([0] * preds.shape[0])
            return self.inner(preds, return_word_box, **kw)
        raw_idx = preds.argmax(axis=2)
        foreign = ~self.mask[raw_idx]  # (batch, time) positions whose best token is disallowed
        # Count runs (CTC repeats one character over several frames).
        starts = foreign & ~np.concatenate([np.zeros_like(foreign[:, :1]), foreign[:, :-1]], axis=1)
        per_line = starts.sum(axis=1)
        if self.per_line is not None:
            self.per_line.extend(int(n) for n in per_line)
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
        # every model now, with our session options (onnx_sessions.py)
        self._det = self.engine._load_det_model()
        rec = self.engine._load_rec_model()  # load now: the decoder must be wrapped before first use
        models = [self._det, rec]
        if sr.line_direction_classifier:
            models.append(self.engine._load_cls_model())
        use_our_options(cfg, *models)
        self._decoder = _MaskedCTCDecode(rec.postprocess_op, sr.foreign_char_penalty)
        rec.postprocess_op = self._decoder
        self._characters = tuple(self._decoder.character)
        self.version = f"rapidocr {_pkg_version('rapidocr')} PP-OCRv6 small"
        self.reads_script = {s for s, o in cfg.scripts.table.items() if o.rapidocr}
        self._tables = None
        self._fallback = None  # Tesseract, for scripts this model cannot read
        self._lock = threading.Lock()
        self._local = threading.local()  # per-thread count of suppressed characters
        # pages whose lines went into one `read_images_lines` call (one recognition run per
        # script mask), by count: what a served batch really bought (`batch_stats`)
        self.pages_per_run: Counter[int] = Counter()

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
        lines, suppressed = self.read_images_lines([(image, script)])
        self._local.suppressed = getattr(self._local, "suppressed", 0) + suppressed[0]
        return lines[0]

    def read_images_lines(
        self, requests: list[tuple[np.ndarray, str | None]]
    ) -> tuple[list[list[OcrLine]], list[int]]:
        """`read_image_lines` of several images (pages and crops of several pages): detection
        per image, then recognition of ALL their text lines in one batched ONNX run per script
        mask (line crops of every image sorted by width together, `rec_batch_num` per run).
        Returns the lines of each image and the characters suppressed in each."""
        det = [self._detect(image) for image, _script in requests]
        rec: list[list[tuple[str, float, int, list[float] | None]]] = [[] for _ in requests]
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, (_image, script) in enumerate(requests):
            if det[i] is not None:
                groups.setdefault(self._allowed(script), []).append(i)
        for allowed, members in groups.items():
            crops = [c for i in members for c in det[i][2]]
            got = self._recognise(crops, allowed)
            k = 0
            for i in members:
                n = len(det[i][2])
                rec[i], k = got[k:k + n], k + n
        out_lines, out_suppressed = [], []
        for (image, script), d, r in zip(requests, det, rec):
            lines = ReadLines()
            if d is not None:
                ori, op, crops, det_res = d
                for poly, (text, score, _n, spikes) in zip(self._boxes_on_original(ori, op, det_res), r):
                    if text.strip():
                        poly = np.asarray(poly, dtype=float)
                        bbox = (float(poly[:, 0].min()), float(poly[:, 1].min()),
                                float(poly[:, 0].max()), float(poly[:, 1].max()))
                        ln = OcrLine(bbox, text.strip(), float(score))
                        if score < self.cfg.small_reader.text_score:
                            # not output, but not forgotten: the page's checks ask whether the
                            # reading holds it elsewhere (`ocr.unread_lines`)
                            lines.below_cut.append(ln)
                            continue
                        words = word_spans(text, spikes, bbox) if spikes is not None else None
                        if words:  # where each word and character sits (lines.py cuts and marks by them)
                            ln.extra["word_x"] = words
                            ln.extra["char_x"] = [bbox[0] + s * (bbox[2] - bbox[0]) for s in spikes]
                        lines.append(ln)
            suppressed = sum(n for _t, _s, n, _w in r)
            if script is None and self.cfg.scripts.auto_mask and lines:
                before = getattr(self._local, "suppressed", 0)
                self._remask_foreign_lines(image, lines)
                suppressed += getattr(self._local, "suppressed", 0) - before
                self._local.suppressed = before
            out_lines.append(lines)
            out_suppressed.append(suppressed)
        return out_lines, out_suppressed

    def _allowed(self, script: str | None) -> tuple[str, ...]:
        opts = options_for(script, self.cfg.scripts)
        return tuple(opts.rapidocr_allowed) if opts and opts.rapidocr_allowed else ()

    def _detect(self, image: np.ndarray):
        """RapidOCR's own detection steps (load, bound, detect, crop) on one image: (original,
        its op record, line crops, detection result), or None when no text is found."""
        from rapidocr.main import RapidOCRError

        if image.size == 0:
            return None
        sr = self.cfg.small_reader
        side = max(sr.det_limit_side_len, int(sr.det_scale * max(image.shape[:2])))
        eng = self.engine
        with self._lock:  # the detector's input size is per image; calls share the session
            self._det.limit_side_len = side  # detector input follows the render size (big pages)
            # Flags set on every call: RapidOCR keeps call flags as state (update_params), so a
            # rec-only call (the script re-mask) would otherwise leave detection off.
            eng.update_params(use_det=True, use_rec=True, use_cls=sr.line_direction_classifier)
            ori = eng.load_img(np.ascontiguousarray(image))
            img, op = eng.preprocess_img(ori)
            try:
                got = self._detect_in_ink_window(img, op, side)
                crops, det_res = got if got is not None else eng.detect_and_crop(img, op)
            except RapidOCRError:  # RapidOCR's "no text found"
                return None
            if sr.line_direction_classifier and crops:
                crops, _cls = eng.cls_and_rotate(crops)
        return (ori, op, crops, det_res) if crops else None

    def _detect_in_ink_window(self, img: np.ndarray, op: dict, side: int):
        """RapidOCR's `detect_and_crop` of `img` with the detector run only on the window
        around the ink (`small_reader.det_crop_to_ink`): (line crops, detection result), or
        None to detect the whole image (cropping off, too little to save, or an image RapidOCR
        would pad or rescale first).

        The detector's cost is its input's area, and blank margins hold no text (an A4 scan
        with a few lines: 0.8 -> 0.1 CPU s). The window is seen at the whole image's scale:
        the image is resized exactly as the detector resizes the whole of it, the window is
        cut on the network's 32-pixel grid, and its probability map is put back in place in
        an empty page-sized map before RapidOCR's own box extraction, so boxes, their order
        and their crops are the whole image's. Not bit-identical: the network's global
        pooling sees less white, so box edges move by a few pixels (the CER effect is
        measured in the bench, issue 23)."""
        import cv2

        from rapidocr.ch_ppocr_det.utils import TextDetOutput

        from .raster import ink_bbox

        sr = self.cfg.small_reader
        eng, det = self.engine, self._det
        h, w = img.shape[:2]
        pre = op.get("preprocess", {})
        if (not sr.det_crop_to_ink or sr.det_limit_type != "max"
                or pre.get("ratio_h", 1.0) != 1.0 or pre.get("ratio_w", 1.0) != 1.0):
            return None
        if eng.cfg.Global.use_vertical_padding and (
                h <= eng.min_height or (eng.width_height_ratio != -1 and w / h > eng.width_height_ratio)):
            return None
        box = ink_bbox(img, sr.det_crop_ink_level, sr.det_crop_margin_px)
        if box is None:  # nothing dark enough to bound: the detector sees everything
            return None
        # the detector's input for the whole image (DetPreProcess.resize, limit type `max`)
        ratio = side / max(h, w) if max(h, w) > side else 1.0
        rh, rw = int(round(int(h * ratio) / 32) * 32), int(round(int(w * ratio) / 32) * 32)
        if rh <= 0 or rw <= 0:
            return None
        sy, sx = rh / h, rw / w
        x0, y0 = int(box[0] * sx) // 32 * 32, int(box[1] * sy) // 32 * 32
        x1, y1 = min(rw, -(-int(np.ceil(box[2] * sx)) // 32) * 32), min(rh, -(-int(np.ceil(box[3] * sy)) // 32) * 32)
        if (x1 - x0) * (y1 - y0) > (1.0 - sr.det_crop_min_saving) * rw * rh:
            return None
        window = np.ascontiguousarray(cv2.resize(img, (rw, rh))[y0:y1, x0:x1])
        prep = det.get_preprocess()
        prep.limit_side_len = max(window.shape[:2])  # the window as it is: already at the detector's scale
        preds = np.asarray(det.session(prep(window)))
        full = np.zeros(preds.shape[:2] + (rh, rw), dtype=preds.dtype)
        full[:, :, y0:y1, x0:x1] = preds
        boxes, scores = det.postprocess_op(full, (h, w))
        op["padding_1"] = {"top": 0, "left": 0}  # what detect_and_crop records without padding
        if len(boxes) < 1:
            return [], TextDetOutput()
        boxes = det.sorted_boxes(boxes)
        return eng.crop_text_regions(img, boxes), TextDetOutput(img, boxes, scores)

    def _boxes_on_original(self, ori: np.ndarray, op: dict, det_res) -> list:
        from rapidocr.utils.process_img import map_boxes_to_original

        return list(map_boxes_to_original(det_res.boxes, op, ori.shape[0], ori.shape[1]))

    def _recognise(self, crops: list[np.ndarray], allowed: tuple[str, ...]) -> list[tuple[str, float, int, list[float] | None]]:
        """(text, score, suppressed characters, character positions) per crop, in crop order, from
        one recogniser call. Positions: each non-space character's CTC frame centre as a share
        of the crop's width (None for a crop turned upright from a tall box): where the words
        sit, so a line the detector drew across a column gutter can be cut there (`lines.py`)."""
        from rapidocr.ch_ppocr_rec.typings import TextRecInput

        if not crops:
            return []
        rec = self.engine._load_rec_model()
        mask = np.array(allowed_mask(self._characters, allowed)) if allowed else None
        # The recogniser sorts crops by width and decodes them in runs of rec_batch_num; the
        # decoder counts suppressed characters per decoded row in that order, so the same
        # argsort maps them back to crops.
        order = np.argsort(np.array([c.shape[1] / float(c.shape[0]) for c in crops]))
        with self._lock:  # the decoder's mask is per call
            self._decoder.mask = mask
            self._decoder.per_line = []
            try:
                res = rec(TextRecInput(img=crops, return_word_box=True))
            finally:
                self._decoder.mask = None
                per_line, self._decoder.per_line = self._decoder.per_line, None
        counts = [0] * len(crops)
        for k, n in enumerate(per_line or []):
            counts[int(order[k])] = int(n)
        shares = [_frame_shares(info) if c.shape[1] >= c.shape[0] else None for info, c in zip(res.word_results, crops)]
        return [(str(t), float(sc), n, sh) for t, sc, n, sh in zip(res.txts, res.scores, counts, shares)]

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
        h, w = image.shape[:2]
        todo, crops = [], []
        for ln in foreign:
            x0, y0, x1, y1 = (int(v) for v in ln.bbox)
            crop = np.ascontiguousarray(image[max(0, y0):min(h, y1 + 1), max(0, x0):min(w, x1 + 1)])
            if crop.shape[0] >= 4 and crop.shape[1] >= 4:
                todo.append(ln)
                crops.append(crop)
        # every foreign line of the page in ONE recognition run (it was one run per line)
        for ln, (text, score, n, _spikes) in zip(todo, self._recognise(crops, tuple(opts.rapidocr_allowed))):
            ln.extra.pop("word_x", None)  # positions of the text replaced
            ln.extra.pop("char_x", None)
            if text.strip():
                before = ln.text
                ln.text, ln.confidence = text.strip(), score
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
        """Read several pages (of any requests) with ONE recognition run over all their text
        lines (`read_images_lines`); pages RapidOCR does not read itself (blank, or a script
        it lacks: Tesseract) are read on their own. Raises if any page fails: the caller
        (a Serve batch) then reads page by page so the bad page fails alone."""
        from .regions import PreparedLines, line_images

        own = [i for i, t in enumerate(tasks) if self._reads_itself(t)]
        requests, spans = [], {}
        for i in own:
            script = tasks[i].decision.script or None
            images = line_images(tasks[i], layouts[i], self.cfg)
            spans[i] = (len(requests), len(images))
            requests.extend((im, script) for im in images)
        lines, suppressed = self.read_images_lines(requests) if requests else ([], [])
        if requests:
            self.pages_per_run[len(spans)] += 1
        out = []
        for i, (task, layout) in enumerate(zip(tasks, layouts)):
            prepared = None
            if i in spans:
                a, n = spans[i]
                prepared = PreparedLines(self, lines[a:a + n], sum(suppressed[a:a + n]))
            out.append(self.read_task(task, layout, prepared=prepared))
        return out

    def batch_stats(self) -> dict:
        """{"pages_per_recognition_run": {pages: runs}} since this reader was built."""
        return {"pages_per_recognition_run": dict(self.pages_per_run)}

    def _reads_itself(self, task: OcrTask) -> bool:
        """Whether `read_task` would read this task with RapidOCR's own lines first."""
        if task.ink < self.cfg.blank_ink:
            return False
        opts = options_for(task.decision.script, self.cfg.scripts)
        return opts is None or opts.rapidocr

    def read_task(self, task: OcrTask, layout: LayoutResult, script: str | None = None, prepared=None) -> Reading:
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
            # `prepared`: this page's lines from a batched recognition run (`read_batch`)
            first_reader = prepared if prepared is not None and script == task.decision.script else self
            reading = read_task_with_lines(task, layout, first_reader, cfg, script=script, tables=self.tables)
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


def _frame_shares(info) -> list[float] | None:
    """Each decoded non-space character's CTC frame centre as a share of its crop's width
    (RapidOCR's `WordInfo`: frame columns per word, `line_txt_len` frames over the crop)."""
    n = getattr(info, "line_txt_len", 0.0) or 0.0
    cols = [c for wc in (getattr(info, "word_cols", None) or []) for c in wc]
    if n <= 0 or not cols:
        return None
    return [(c + 0.5) / n for c in cols]


def word_spans(text: str, shares: list[float], bbox) -> list[tuple[float, float]] | None:
    """(x0, x1) in image pixels of each whitespace-separated word of `text`, from its
    characters' frame shares across the line box; None when the counts disagree. A word
    reaches half a character pitch beyond its first and last character centres."""
    words = text.split()
    if sum(len(w) for w in words) != len(shares):
        return None
    x0, x1 = bbox[0], bbox[2]
    width = max(1.0, x1 - x0)
    half = 0.5 * width / max(1, len(text.strip()))
    out, k = [], 0
    for w in words:
        a, b = shares[k], shares[k + len(w) - 1]
        out.append((max(x0, x0 + a * width - half), min(x1, x0 + b * width + half)))
        k += len(w)
    return out


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
