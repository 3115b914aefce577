"""Proof that a hidden (render mode 3) OCR layer says what the scan under it shows.

A scan with an invisible OCR layer is either a gift (a good OCR engine already read it: its
text is better than the small reader's) or a trap (handwriting and poor scans carry confident
nonsense). The proof: a few of the layer's lines, spread over the page (top, middle, bottom), are cropped
from the page image at the recogniser's input height and read by the small reader's
*recognition model alone* (RapidOCR's PP-OCR rec: no detection, no layout, one batch), then
compared with the layer's text at the same place. When they agree, every other line the layer
contributes is read the same way (`hidden_layer_every_line`): a sample cannot see the one line
of an earlier revision that says "may sublet" where the picture says "may not sublet", and that
line is exactly what a reader cannot afford to lose. Line crops through the recogniser cost a
fraction of OCR of the page (no detection, no layout), so proving every line stays the cheaper
way to read such a page whenever the layer is right. Agreement keeps the layer (`text_layer`);
one disagreeing line, an unreadable sample, too few lines to sample, layer text in lines that
cannot be cropped (not horizontal) or a script the recogniser does not read keeps the
conservative route (`ocr`: the page is read from the picture).

A line agrees at a small character error rate, with exactly the same digits, and with no word
put in or taken out (`_word_change`): a negation is three characters of a sixty-character line,
well under any CER threshold an honest recogniser needs.

Laziness: nothing here imports RapidOCR until a page needs proof; born-digital runs never
load it. The recogniser is built once per process (a few hundred ms) and shared.

Comparison: both texts are NFKC-normalised, typographic quotes/dashes are folded to ASCII and
whitespace is removed (recognisers drop and add spaces; that is not disagreement about content);
case and everything else count. Per line `char_error_rate(layer, read)`; the sample's CER is the
character-weighted mean.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from dataclasses import dataclass, field

import numpy as np
import pymupdf

from ..config.ocr import OcrConfig
from ..config.triage import TriageConfig
from ..common.geometry import BBox
from ..common.load_once import LoadOnce
from ..ocr.onnx_sessions import use_our_options
from ..ocr.script_options import options_for
from ..ocr.text_stats import char_error_rate
from ..layout.paints import to_display
from ..textlayer.proof_reads import READ_BY_PROOF
from . import proof_cost

# Crop padding around a layer line, as a share of its height: OCR layers' boxes are tight (or
# a little off); the recogniser wants some paper around the letters, but not the next line.
_PAD_Y = 0.2
_PAD_X = 0.6
_PAD_X_WORD = 0.25  # a digit word's crop: less paper beside it, so less of its neighbours
_TOKEN = re.compile(r"\w+")
_REST_BATCH = 8  # lines read per recogniser call once the spread sample agrees
_MAX_DIR_Y = 0.08  # a line whose direction leaves the horizontal by more (sin) is not sampled
_FOLD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"',
                       "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00ad": None})


@dataclass
class HiddenLine:
    bbox: BBox  # unrotated page space (as in the text dict)
    text: str
    word: bool = False  # one word holding digits (`digit_words`), not a whole line

    @property
    def height(self) -> float:
        return self.bbox[3] - self.bbox[1]


@dataclass
class SampledLine:
    layer: str
    read: str
    cer: float
    confidence: float
    word: bool = False  # a digit word's crop: it agrees when the read holds the word as it is
    bbox: BBox | None = None  # the layer line's box (unrotated page space)


@dataclass
class Proof:
    attempted: bool  # False: the proof could not be tried (`reason` says why)
    agreed: bool = False
    reason: str = ""
    script: str | None = None
    lines: list[SampledLine] = field(default_factory=list)
    cer: float = 1.0
    agreeing: int = 0
    seconds: float = 0.0
    # disagreeing lines whose reading is sound (`_replaceable`): the layer is kept with these
    # lines read from the picture instead (`replace_lines`)
    replaced: list[SampledLine] = field(default_factory=list)
    # the proof's estimated cost against OCR's (`proof_cost`), when every line was to be proven
    cost: proof_cost.CostEstimate | None = None
    abandoned_after: int = 0  # lines read when the proof was given up for OCR midway (0: it was not)

    def scores(self) -> dict[str, float]:
        cost = self.cost.scores() if self.cost is not None else {}
        if self.abandoned_after:
            cost["hidden_layer_proof_abandoned_after_lines"] = float(self.abandoned_after)
        if not self.attempted:
            return cost
        return {
            **cost,
            "hidden_layer_sampled_lines": float(len(self.lines)),
            "hidden_layer_agreeing_lines": float(self.agreeing),
            "hidden_layer_cer": self.cer,
            "hidden_layer_proof_seconds": self.seconds,
            "hidden_layer_replaced_lines": float(len(self.replaced)),
        }


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def _norm(s: str) -> str:
    return "".join(unicodedata.normalize("NFKC", s).translate(_FOLD).split())


def hidden_lines(textdict: dict, visible: bool = False) -> list[HiddenLine]:
    """The invisible text as horizontal rows: the dict's line fragments (OCR layers often place
    every word or phrase separately) are joined when they sit on the same row, left to right.
    `visible`: the visible text instead (a short layer proven the same way)."""
    out: list[HiddenLine] = []
    for block in textdict.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", ()):
            d = line.get("dir", (1.0, 0.0))
            if d[0] <= 0 or abs(d[1]) > _MAX_DIR_Y:
                continue
            spans = [s for s in line.get("spans", ()) if (s.get("alpha", 255) == 0) != visible
                     and s.get("text", "").strip()]
            if not spans:
                continue
            text = " ".join(" ".join(s["text"].split()) for s in spans)
            x0 = min(s["bbox"][0] for s in spans)
            y0 = min(s["bbox"][1] for s in spans)
            x1 = max(s["bbox"][2] for s in spans)
            y1 = max(s["bbox"][3] for s in spans)
            if out:
                p = out[-1]
                h = min(y1 - y0, p.height)
                overlap = min(y1, p.bbox[3]) - max(y0, p.bbox[1])
                if h > 0 and overlap >= 0.5 * h and -0.5 * h <= x0 - p.bbox[2] <= 2.5 * max(h, p.height):
                    p.bbox = (min(p.bbox[0], x0), min(p.bbox[1], y0), max(p.bbox[2], x1), max(p.bbox[3], y1))
                    p.text = f"{p.text} {text}"
                    continue
            out.append(HiddenLine((x0, y0, x1, y1), text))
    return out


def _spread(items: list, n: int) -> list:
    """Up to `n` of `items`, evenly spread from first to last."""
    if len(items) <= n:
        return list(items)
    if n <= 0:
        return []
    idx = sorted({round(i * (len(items) - 1) / (n - 1)) for i in range(n)}) if n > 1 else [len(items) // 2]
    return [items[i] for i in idx]


def pick_sample(lines: list[HiddenLine], n: int, min_chars: int, min_height: float) -> list[HiddenLine]:
    """Up to `n` sampleable lines spread evenly from the top of the page to the bottom."""
    ok = [ln for ln in lines if len(_norm(ln.text)) >= min_chars and ln.height >= min_height]
    ok.sort(key=lambda ln: (ln.bbox[1], ln.bbox[0]))
    return _spread(ok, n)


def digit_words(page: pymupdf.Page, lines: list[HiddenLine], skip: list[HiddenLine], n: int,
                min_height: float) -> list[HiddenLine]:
    """The words holding digits (amounts, dates, part numbers: where one wrong character changes
    what the document says) on up to `n` more lines, spread over the lines that hold digits; each
    word is its own crop, so checking the numbers of a page costs a few short reads."""
    from ..common.pagetext import words_in

    skipped = {id(ln) for ln in skip}
    with_digits = [ln for ln in lines if id(ln) not in skipped and _digits(ln.text) and ln.height >= min_height]
    with_digits.sort(key=lambda ln: (ln.bbox[1], ln.bbox[0]))
    out: list[HiddenLine] = []
    for ln in _spread(with_digits, n):
        for w in words_in(page, ln.bbox):
            if _digits(w[4]):
                out.append(HiddenLine(tuple(w[:4]), w[4], word=True))
    return out


class _Recogniser:
    """RapidOCR's recognition model alone (the small reader's), with the reader's script mask."""

    def __init__(self, ocr: OcrConfig):
        import logging

        from rapidocr import RapidOCR

        from ..ocr.reader_rapidocr import _MaskedCTCDecode

        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        params: dict = {"Global.log_level": "warning"}
        if ocr.small_reader.threads > 0:
            params["EngineConfig.onnxruntime.intra_op_num_threads"] = ocr.small_reader.threads
        engine = RapidOCR(params=params)  # loads no model by itself
        logging.getLogger("RapidOCR").setLevel(logging.WARNING)
        self.rec = engine._load_rec_model()
        use_our_options(ocr, self.rec)  # our session options (ocr/onnx_sessions.py)
        self.decoder = _MaskedCTCDecode(self.rec.postprocess_op, ocr.small_reader.foreign_char_penalty)
        self.rec.postprocess_op = self.decoder
        self.characters = tuple(self.decoder.character)
        self.height = int(self.rec.rec_image_shape[1])
        self.lock = threading.Lock()

    def read(self, crops: list[np.ndarray], allowed: tuple[str, ...]) -> list[tuple[str, float]]:
        from rapidocr.ch_ppocr_rec import TextRecInput

        from ..ocr.script_options import allowed_mask

        mask = np.array(allowed_mask(self.characters, allowed)) if allowed else None
        with self.lock:
            self.decoder.mask = mask
            try:
                res = self.rec(TextRecInput(img=crops))
            finally:
                self.decoder.mask = None
        return [(str(t), float(s)) for t, s in zip(res.txts, res.scores)]


_REC: LoadOnce[_Recogniser] = LoadOnce()


def recogniser(ocr: OcrConfig) -> _Recogniser:
    """The process's shared recogniser, built on the first page that needs proof."""
    return _REC.get(lambda: _Recogniser(ocr))


def proof_may_run(triage: TriageConfig, ocr: OcrConfig) -> bool:
    """Whether this config proves hidden layers at all (`decide._hidden_layer`'s gates, each of
    which it reports there with its own reason)."""
    return triage.hidden_layer_proof and (ocr.enabled or triage.hidden_layer_proof_without_ocr)


def prepare(triage: TriageConfig, ocr: OcrConfig) -> dict:
    """Load the recogniser now when this config may prove hidden layers (`decide._hidden_layer`'s
    gates), so the first such page does not pay for it: about 0.9 s in a fresh process, most of
    it importing RapidOCR (its model table is parsed at import). Says whether it is loaded, and
    why not when it could not be (the pages that need it say so themselves)."""
    error = None
    if proof_may_run(triage, ocr):
        try:
            recogniser(ocr)
        except Exception as exc:  # noqa: BLE001 - reported; a page that needs the proof says it again
            error = f"{type(exc).__name__}: {exc}"[:300]
    return {"proof_recogniser": _REC.value is not None, "error": error}


def _unproven_chars(textdict: dict, lines: list[HiddenLine], cfg: TriageConfig) -> int:
    """Invisible characters that no provable line holds (vertical or slanted lines, which
    `hidden_lines` leaves out, and lines too low to crop), beyond a few specks: 0 when the layer
    can be proven line by line."""
    total = 0
    for block in textdict.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", ()):
            for s in line.get("spans", ()):
                if s.get("alpha", 255) == 0:
                    total += len("".join(s.get("text", "").split()))
    provable = sum(len("".join(ln.text.split())) for ln in lines if ln.height >= cfg.hidden_layer_min_line_height_pt)
    left = total - provable
    return left if left > max(3, 0.01 * total) else 0


def _needed(cfg: TriageConfig, lines: int) -> int:
    """Agreeing lines needed to keep the layer when `lines` sampled lines were read."""
    return max(cfg.hidden_layer_min_sample_lines, int(np.ceil(cfg.hidden_layer_min_agreeing_share * lines)))


def _word_change(layer: str, read: str) -> bool:
    """Whether the read puts in or takes out a word the layer lacks or has (a "not", an "un-",
    another verb), beyond a recogniser's slips. Compared word by word (NFKC, case folded): a
    whole word of 2+ letters only on one side is a change; a word read differently is a change
    when the two differ in length by 3+ characters (2+ when one has 5+: "lawful"/"unlawful",
    "may"/"maynot" with the space lost) or differ in most of their letters ("covers"/"excludes").
    "rn" read as "m", "all" read as "l", words split or joined differently are slips."""
    from difflib import SequenceMatcher

    a = _TOKEN.findall(unicodedata.normalize("NFKC", layer).translate(_FOLD).casefold())
    b = _TOKEN.findall(unicodedata.normalize("NFKC", read).translate(_FOLD).casefold())
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        x, y = "".join(a[i1:i2]), "".join(b[j1:j2])
        if x == y:
            continue  # the same letters, split or joined differently
        if op in ("insert", "delete"):
            if len(x) + len(y) >= 2:
                return True
            continue
        diff, longer, shorter = abs(len(x) - len(y)), max(len(x), len(y)), min(len(x), len(y))
        if diff >= 3 or (diff >= 2 and longer >= 5):
            return True
        if shorter >= 4 and char_error_rate(x, y) * len(x) > 0.5 * longer:
            return True
    return False


def _agrees(s: SampledLine, cfg: TriageConfig) -> bool:
    """A sampled line agrees at a small CER with exactly the same digits and no word changed; a
    digit word's crop (which may catch a letter of its neighbours) when the read holds the word
    unchanged."""
    if s.word:
        return _norm(s.layer) in _norm(s.read)
    return (s.cer <= cfg.hidden_layer_max_line_cer and _digits(s.layer) == _digits(s.read)
            and not _word_change(s.layer, s.read))


_REPLACE_MIN_CONFIDENCE = 0.9  # the recogniser's own score of a reading that may stand in for the layer's line
_REPLACE_MAX_CER = 0.35  # beyond this the crop holds another line than the layer's (a box off its text)
_REPLACE_MAX_SHARE = 0.2  # a layer disagreeing on more of its lines is not this page's layer: OCR it all


def _replaceable(s: SampledLine) -> bool:
    """A disagreeing line whose reading can stand in for the layer's: a whole line (not a digit
    word's crop, which may catch its neighbours), read with a confident score, and close enough
    to the layer's text that the box held that very line (a word or a number differs, not the
    line): the line's box and its reading are both trusted."""
    return (not s.word and s.bbox is not None and s.confidence >= _REPLACE_MIN_CONFIDENCE and bool(_norm(s.read))
            and s.cer <= _REPLACE_MAX_CER)


def replace_lines(textdict: dict, replaced: list[SampledLine]) -> int:
    """Put each replaced line's reading into the text dict in place of the layer's words (the
    first invisible span on the line's row takes the reading, the others are emptied), marking
    the span `READ_BY_PROOF` for the block's provenance. Returns the spans changed."""
    changed = 0
    for s in replaced:
        x0, y0, x1, y1 = s.bbox
        first = True
        for block in textdict.get("blocks", ()):
            if block.get("type", 0) != 0:
                continue
            for line in block.get("lines", ()):
                for sp in line.get("spans", ()):
                    if sp.get("alpha", 255) != 0 or not sp.get("text", "").strip():
                        continue
                    b = sp["bbox"]
                    cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
                    if not (x0 - 1 <= cx <= x1 + 1 and y0 - 1 <= cy <= y1 + 1):
                        continue
                    sp["text"] = " ".join(s.read.split()) if first else ""
                    sp[READ_BY_PROOF] = {"layer": s.layer, "read": s.read, "confidence": s.confidence,
                                         "engine": "rapidocr", "engine_version": _engine_version()}
                    first = False
                    changed += 1
    return changed


def _engine_version() -> str:
    from importlib.metadata import version

    return f"rapidocr {version('rapidocr')} PP-OCR rec (hidden-layer proof, line by line)"


def _column_box(line: BBox, every: list[HiddenLine]) -> BBox:
    """`line` widened to the column it sits in: from the leftmost to the rightmost edge of the
    layer's lines that start where it starts (within two line heights). The picture's line may be
    longer than the layer's box for it ("may sublet" in the layer, "may not sublet" on the page)."""
    x0, y0, x1, y1 = line
    h = y1 - y0
    col = [ln.bbox for ln in every if not ln.word and abs(ln.bbox[0] - x0) <= 2 * h]
    return (min([x0, *(b[0] for b in col)]), y0, max([x1, *(b[2] for b in col)]), y1)


def _reread_whole_lines(page: pymupdf.Page, every: list[HiddenLine], replaced: list[SampledLine], rec,
                        allowed: tuple[str, ...]) -> str:
    """Read each line to be replaced again over its column's width (`_column_box`), so that the
    reading holds the whole line the picture shows, not the layer's shorter box of it; the
    reading replaces the first one when it is still sound. Returns why not, or ""."""
    boxes = [_column_box(r.bbox, every) for r in replaced]
    crops = [_crop(page, HiddenLine(b, r.layer), rec.height) for b, r in zip(boxes, replaced)]
    if any(c is None for c in crops):
        return "; a line to read from the picture could not be cropped over its column, so the page is OCR'd"
    for r, (txt, conf) in zip(replaced, rec.read(crops, allowed)):
        cer = char_error_rate(_norm(r.layer), _norm(txt))
        if conf < _REPLACE_MIN_CONFIDENCE or cer > _REPLACE_MAX_CER or not _norm(txt):
            return (f"; the line {r.layer[:50]!r} read over its column's width ({txt[:50]!r}, score {conf:.2f}, CER "
                    f"{cer:.2f}) is not sound enough to stand in for the layer's, so the page is OCR'd")
        r.read, r.confidence, r.cer = txt, conf, cer
    return ""


def _crop(page: pymupdf.Page, line: HiddenLine, height_px: int) -> np.ndarray | None:
    x0, y0, x1, y1 = line.bbox
    h = y1 - y0
    px = _PAD_X_WORD if line.word else _PAD_X
    box = (x0 - px * h, y0 - _PAD_Y * h, x1 + px * h, y1 + _PAD_Y * h)
    clip = pymupdf.Rect(to_display(page, box)) & page.rect
    if clip.is_empty:
        return None
    zoom = height_px / (box[3] - box[1])
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=clip, colorspace=pymupdf.csGRAY, alpha=False)
    g = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width)
    k = (page.rotation // 90) % 4
    if k:
        g = np.rot90(g, k)
    if g.shape[0] < 8 or g.shape[1] < 8:
        return None
    return np.ascontiguousarray(np.repeat(g[:, :, None], 3, axis=2))


def _digit_word_ratios(lines: list[HiddenLine], skip: list[HiddenLine], n: int, min_height: float) -> list[float]:
    """Crop ratios of the digit words `digit_words` would read, from the layer's text alone (a
    word's box as its share of the line's characters): the estimate must not cost a page lookup."""
    skipped = {id(ln) for ln in skip}
    with_digits = [ln for ln in lines if id(ln) not in skipped and _digits(ln.text) and ln.height >= min_height]
    with_digits.sort(key=lambda ln: (ln.bbox[1], ln.bbox[0]))
    out = []
    for ln in _spread(with_digits, n):
        x0, y0, x1, y1 = ln.bbox
        per_char = (x1 - x0) / max(1, len(ln.text))
        out += [proof_cost.crop_ratio((0.0, y0, per_char * len(w), y1), word=True) for w in ln.text.split() if _digits(w)]
    return out


def _ocr_estimate(page: pymupdf.Page, every: list[HiddenLine], ocr: OcrConfig) -> float:
    sr = ocr.small_reader
    r = page.rect
    zoom = ocr.render_target(sr.render_engine).zoom_for(r.width, r.height)
    return proof_cost.ocr_ms(r.width, r.height, [ln.bbox for ln in every], zoom, sr.det_limit_side_len, sr.det_scale)


def prove_hidden_layer(
    page: pymupdf.Page, textdict: dict, script: str | None, cfg: TriageConfig, ocr: OcrConfig, visible: bool = False
) -> Proof:
    """Read a sample of the hidden layer's lines from the image and compare (see module doc).
    `visible`: prove the visible layer instead, every line of it, however few (a layer of too
    few words for the word checks to judge)."""
    opts = options_for(script, ocr.scripts)
    if script is None or opts is None:
        return Proof(False, reason=f"the hidden layer's script is {script or 'unknown'}, not one the small reader's "
                     "recogniser is configured for (ocr.scripts.table), so agreement cannot be proven")
    if not opts.rapidocr:
        return Proof(False, script=script, reason=f"the hidden layer is in {script} script, which the small reader's "
                     f"recogniser does not read (ocr.scripts.table.{script}.rapidocr: false), so agreement cannot be proven")
    every = hidden_lines(textdict, visible)
    sample = pick_sample(every, cfg.hidden_layer_sample_lines, cfg.hidden_layer_min_line_chars,
                         cfg.hidden_layer_min_line_height_pt)
    if visible:  # a short layer: every line, however short, and one is enough to read
        sample = [ln for ln in every if ln.height >= cfg.hidden_layer_min_line_height_pt and _norm(ln.text)]
    if not sample or (not visible and len(sample) < cfg.hidden_layer_min_sample_lines):
        return Proof(False, script=script, reason=f"only {len(sample)} hidden line(s) of at least "
                     f"hidden_layer_min_line_chars={cfg.hidden_layer_min_line_chars} characters to sample (< "
                     f"hidden_layer_min_sample_lines={cfg.hidden_layer_min_sample_lines}), so agreement cannot be proven")
    t0 = time.perf_counter()
    try:
        rec = recogniser(ocr)
    except Exception as exc:  # noqa: BLE001 - no recogniser: the conservative route, said why
        return Proof(False, script=script, reason=f"the recogniser for the proof could not be loaded ({exc})")
    # The lines spread over the page first, then the numbers of other lines, only while the layer
    # can still be kept: the first read takes just enough lines for their disagreement to decide
    # (one, when every sampled line must agree), so a lying layer costs one short read, not five
    # lines' worth, before the page goes to OCR; an honest layer is read whole either way.
    def needed(n: int) -> int:  # a short visible layer: every line must agree, however few
        return n if visible else _needed(cfg, n)

    slack = len(sample) - needed(len(sample))  # >= 0: the sample has min_sample_lines
    rest: list[HiddenLine] = []
    if cfg.hidden_layer_every_line:
        # every line the layer contributes, not a sample: a line lower than min_line_height is a
        # rule or a speck, anything else is text the reader would take from the layer
        sampled = {id(ln) for ln in sample}
        rest = [ln for ln in every if id(ln) not in sampled and ln.height >= cfg.hidden_layer_min_line_height_pt
                and _norm(ln.text)]
        unproven = 0 if visible else _unproven_chars(textdict, every, cfg)
        if unproven:
            return Proof(False, script=script, reason=f"{unproven} characters of the hidden layer lie in lines that "
                         "cannot be cropped and read (not horizontal, or lower than hidden_layer_min_line_height_pt="
                         f"{cfg.hidden_layer_min_line_height_pt:g}), so they cannot be proven line by line")
    # the other lines in short batches, top to bottom: a layer that lies on one line is refused at
    # the batch holding it, not after every line is read (the page then pays for OCR as well)
    rest.sort(key=lambda ln: (ln.bbox[1], ln.bbox[0]))
    phases = [sample[:slack + 1], sample[slack + 1:], *(rest[i:i + _REST_BATCH] for i in range(0, len(rest), _REST_BATCH)),
              None]
    lines: list[SampledLine] = []
    edits = chars = 0.0
    tried = 0  # sampled lines cropped and read (a crop off the page is tried, not read)
    # with every line read, a disagreeing line whose reading is sound is replaced, not a refusal,
    # as long as few lines need it (`_REPLACE_MAX_SHARE` of the layer's lines)
    can_replace = cfg.hidden_layer_every_line and not visible
    max_replaced = int(_REPLACE_MAX_SHARE * (len(sample) + len(rest)))

    def refusing(got: list[SampledLine]) -> int:
        bad = [s for s in got if not _agrees(s, cfg)]
        if not can_replace:
            return len(bad)
        sound = [s for s in bad if _replaceable(s)]
        return len(bad) - len(sound) + max(0, len(sound) - max_replaced)

    # the cheaper of proof and OCR for this page (`proof_cost`): estimated before any line is
    # read, and weighed again after each batch against the disagreements found so far
    cost: proof_cost.CostEstimate | None = None
    calls: list[list[float]] = []
    if can_replace and cfg.hidden_layer_cheaper_route:
        calls = [[proof_cost.crop_ratio(ln.bbox) for ln in ph] for ph in phases if ph]
        calls.append(_digit_word_ratios(every, sample, cfg.hidden_layer_digit_lines, cfg.hidden_layer_min_line_height_pt))
        cost = proof_cost.CostEstimate(proof_cost.proof_ms(calls), _ocr_estimate(page, every, ocr),
                                       sum(len(c) for c in calls), len(proof_cost.rows([ln.bbox for ln in every])))
        if not cost.proof_cheaper:
            return Proof(False, script=script, cost=cost, reason=f"OCR of the page is the cheaper way to read it: "
                         f"{cost.said()}")
    replacing: list[HiddenLine] = []
    for k, phase in enumerate(phases):
        disagreeing = refusing(lines)
        if disagreeing > slack or (phase is None and disagreeing):
            break
        if cost is not None and lines and phase is not None:
            whole = [s for s in lines if not s.word]
            bad = sum(not _agrees(s, cfg) for s in whole)
            left = sum(len(ph) for ph in phases[k:] if ph)
            rest_calls = [[proof_cost.crop_ratio(ln.bbox) for ln in ph] for ph in phases[k:] if ph] + calls[-1:]
            go, why, _ = proof_cost.continue_or_ocr(bad, len(whole), left, max_replaced, proof_cost.proof_ms(rest_calls),
                                                    cost.ocr_ms)
            if not go:
                return Proof(False, script=script, cost=cost, abandoned_after=len(whole), lines=lines,
                             seconds=time.perf_counter() - t0, reason=f"the proof was given up for OCR midway: {why}")
        if phase is not None and not phase:
            continue
        if phase is not None:
            tried += len(phase)
        if phase is None:
            # a line read from the picture instead needs no word-by-word check of the layer's digits
            phase = digit_words(page, every, sample + replacing, cfg.hidden_layer_digit_lines,
                                cfg.hidden_layer_min_line_height_pt)
        try:
            crops, kept = [], []
            for ln in phase:
                c = _crop(page, ln, rec.height)
                if c is not None:
                    crops.append(c)
                    kept.append(ln)
            reads = rec.read(crops, tuple(opts.rapidocr_allowed or ())) if crops else []
        except Exception as exc:  # noqa: BLE001 - a proof that breaks proves nothing: the page is OCR'd
            return Proof(False, script=script, reason=f"reading the sample failed ({type(exc).__name__}: {exc})"[:300])
        for ln, (txt, conf) in zip(kept, reads):
            ref, hyp = _norm(ln.text), _norm(txt)
            cer = char_error_rate(ref, hyp)
            lines.append(SampledLine(ln.text, txt, cer, conf, word=ln.word, bbox=ln.bbox))
            if can_replace and not _agrees(lines[-1], cfg) and _replaceable(lines[-1]):
                replacing.append(ln)
            if not ln.word:  # the sample's CER is the lines' (a word crop's neighbours are no error)
                edits += cer * len(ref)
                chars += len(ref)
    p = Proof(True, script=script, lines=lines, seconds=time.perf_counter() - t0)
    p.cer = edits / chars if chars else 1.0
    # a wrong digit is a wrong amount, date or part number however small its share of the line:
    # a line agrees only when its digits are exactly the ones read
    p.agreeing = sum(_agrees(s, cfg) for s in lines)
    need = needed(len(lines))
    lines_note = ""
    if can_replace and not refusing(lines):
        p.replaced = [s for s in lines if not _agrees(s, cfg)]  # all of them sound, few enough
    if p.replaced:
        # the layer's other lines must agree as an honest layer's do: the CER without the replaced ones
        kept = [s for s in lines if not s.word and not any(s is r for r in p.replaced)]
        n_kept = sum(len(_norm(s.layer)) for s in kept)
        p.cer = sum(s.cer * len(_norm(s.layer)) for s in kept) / n_kept if n_kept else 1.0
        p.agreed = p.agreeing + len(p.replaced) >= need and p.cer <= cfg.hidden_layer_max_cer
        if p.agreed:
            why = _reread_whole_lines(page, every, p.replaced, rec, tuple(opts.rapidocr_allowed or ()))
            if why:
                p.agreed = False
                lines_note = why
        if not p.agreed:
            p.replaced = []
    else:
        p.agreed = p.agreeing >= need and p.cer <= cfg.hidden_layer_max_cer
    # the worst line: a digit mismatch first (it is what makes the layer untrustworthy), then CER
    worst = max(lines, key=lambda s: (not _agrees(s, cfg), _digits(s.layer) != _digits(s.read), s.cer)) if lines else None
    example = (f"; worst: layer {worst.layer[:40]!r} vs read {worst.read[:40]!r} (CER {worst.cer:.2f})"
               if worst is not None and (not p.agreed or worst.cer > 0) else "")
    words = [s for s in lines if s.word]
    sampled = [s for s in lines[:len(sample)] if not s.word]
    others = [s for s in lines[len(sample):] if not s.word]
    ns, agree_s = len(sampled), sum(_agrees(s, cfg) for s in sampled)
    counted = f"{agree_s} of {ns} sampled line{'s' * (ns != 1)} agree{'s' * (ns == 1)}"
    if others:
        counted += (f", and {sum(_agrees(s, cfg) for s in others)} of the layer's {len(others)} other line"
                    f"{'s' * (len(others) != 1)} (every line the layer contributes is read)")
    if words:
        counted += f"; {sum(_agrees(s, cfg) for s in words)} of {len(words)} digit words agree"
    unread = len(sample) - min(tried, len(sample))
    unread_note = (f"; the other {unread} of the {len(sample)} sampled lines were not read: the layer was already refused"
                   if unread > 0 and not p.agreed else "") + lines_note
    if p.replaced:
        example = "; " + "; ".join(f"line {r.layer[:50]!r} disagrees with the picture, which reads {r.read[:50]!r} "
                                   f"(score {r.confidence:.2f}, CER {r.cer:.2f}): read from the picture instead"
                                   for r in p.replaced[:3])
    p.reason = (
        f"{counted}, CER {p.cer:.2f} over {int(chars)} characters "
        f"between the layer and the small reader's recogniser on line crops (a line agrees at CER <= "
        f"hidden_layer_max_line_cer={cfg.hidden_layer_max_line_cer} with the same digits and no word put in or "
        f"taken out; {need} must agree and the CER be <= hidden_layer_max_cer={cfg.hidden_layer_max_cer})"
        f"{example}{unread_note}"
    )
    if cost is not None:
        p.cost = cost
        p.reason += f"; the proof was chosen as the cheaper way to read the page: {cost.said()}"
    return p
