"""The per-page triage decision: read the text layer, OCR the page, OCR only its pictures, or
nothing.

Design (cheapest evidence first; each step can settle the page):

1. Walk the shared text dict once (`layer.read_layer`): visible vs. invisible (render mode 3)
   characters, visible span boxes, characters per font; list sizeable images (resource list
   first, nearly free; `get_image_info` only when the page references images). No render.
2. Invisible layer: if most text is invisible, the page is a scan with an OCR layer that
   nobody proof-read (handwriting scans carry plenty of confident nonsense). It is trusted
   only with proof (`layer_proof`): implausible layer text -> `ocr` at once; otherwise a few
   of its lines, spread over the page, are read from the image by the small reader's
   recogniser alone and compared (CER). Agreement -> `text_layer` (the reader takes the
   invisible text: `hidden_layer`); disagreement, too few lines, a script the recogniser does
   not read, or proof switched off (or OCR disabled and `hidden_layer_proof_without_ocr`
   off) -> `ocr`, saying why.
3. Text quality of the visible layer (`words.measure_text`): broken characters (U+FFFD,
   private use, control codes, `(cid:N)`, `/31` glyph ids), plausible-word share per script,
   letter-frequency cross-entropy (shifted / scrambled letter maps), UTF-8 mojibake, and text
   in fonts without a Unicode map (looked up only when the words are doubtful). Any
   failure -> `ocr`.
4. Text painted under a later image (paint-order log, only when a sizeable image exists):
   a hidden OCR layer under a scan -> `ocr`.
5. Fast path: plenty of healthy text (`fast_path_min_chars`), no sizeable image, no
   near-white text -> `text_layer` without rendering (one dict walk and a few regexes).
6. Otherwise look at the page. A full small grayscale render when the page is in question
   (sparse text, near-white text, pictures over much of it, /Rotate): too little text ->
   `blank` only if the page shows no ink that could be content (`ink.content_marks`: no
   letter-sized marks standing out from their surroundings beyond dust, away from the page
   edge; an area share would lose a page with one line, a stamp or a signature) and no rows of
   letter-like blobs (`ink.text_line_boxes`: faint print too light for the marks' gray level), else `ocr`; visible text over blank paper -> the
   layer says what the page does not show -> `ocr`; a sparse page without pictures whose
   ink outside the layer forms rows of letters -> text drawn as outlines -> `ocr`.
   Pages with enough text render only their pictures (clips).
7. Pictures: blank out the spans the layer already covers and look for letter-sized blobs in
   rows inside each sizeable image. Pictures holding text that cover much of the page while
   the layer is small (a scan stamped with a header and page number, a slide that is one
   screenshot) -> `ocr`; otherwise -> `mixed` with their boxes as `ocr_regions`; none ->
   `text_layer`. Density is not the only test: ink forming `min_text_lines` lines of
   similar-height letter blobs that no layer character covers is text to read (a full-page scan
   of a five-line memo under a scanner's caption); see `ink.text_likeness` for what separates
   such lines from stamps, logos, photos and line art.
"""

from __future__ import annotations

import numpy as np
import pymupdf

from ..config.ocr import OcrConfig
from ..config.triage import TriageConfig
from ..common.geometry import BBox
from ..model import HiddenText, TriageDecision
from ..layout import ink as inkmod
from ..layout.paints import Picture, pictures, text_under_images_share, to_display, union_share
from .layer import read_layer, unmapped_font_share
from .layer_proof import prove_hidden_layer, replace_lines
from .visibility import hidden_text
from .words import measure, quality_failures


_MIN_MARK_PX = 3.0  # a letter-sized mark (blank_min_mark_pt) must be this tall in a render to be seen


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _hidden_layer(
    page: pymupdf.Page, textdict: dict, lay, img_cov: float, cfg: TriageConfig, ocr: OcrConfig | None,
    scores: dict[str, float],
) -> TriageDecision:
    """Step 2: a page whose text is mostly invisible. `text_layer` only with proof, else `ocr`."""
    where = f" over images covering {_pct(img_cov)} of the page" if img_cov else ""
    head = (
        f"{_pct(lay.invisible_share)} of the {lay.total_chars} text-layer characters are invisible "
        f"(render mode 3, or not visible on the page){where} (invisible_text_share > max_invisible_text_share={cfg.max_invisible_text_share}): "
        "a hidden OCR layer"
    )

    def to_ocr(why: str) -> TriageDecision:
        return TriageDecision(route="ocr", scores=scores, reasons=[f"{head} that may not match the picture; {why}, so the page is OCR'd"])

    ocr = ocr or OcrConfig()
    if not cfg.hidden_layer_proof:
        return to_ocr("hidden_layer_proof is off")
    if not ocr.enabled and not cfg.hidden_layer_proof_without_ocr:
        return to_ocr("the OCR path is disabled and hidden_layer_proof_without_ocr is off (no model is loaded)")
    # cheap evidence first: implausible layer text (handwriting read as print) needs no proof
    q = measure(lay.invisible_text, cfg)
    scores["hidden_plausible_word_share"] = q.plausible_word_share
    failures = quality_failures(q, 0.0, cfg)
    if failures:
        return to_ocr("its text is not plausible: " + "; ".join(failures))
    proof = prove_hidden_layer(page, textdict, q.script, cfg, ocr)
    scores.update(proof.scores())
    if proof.agreed:
        # the sample proves the layer's lines are right, not that the layer holds all the page's text
        missing = _text_outside_hidden_layer(page, textdict, cfg)
        if missing:
            scores["hidden_layer_uncovered_lines"] = float(missing)
            return to_ocr(f"its sampled lines agree ({proof.reason}) but {missing} lines of text on the page lie "
                          f"outside it (>= min_text_lines={cfg.min_text_lines})")
        if len(lay.visible_text.strip()) >= cfg.min_letters_for_char_model:
            vq = measure(lay.visible_text, cfg)
            bad = quality_failures(vq, 0.0, cfg)
            if bad:
                return to_ocr("its visible text is not plausible: " + "; ".join(bad))
        replaced = ""
        if proof.replaced:
            # every other line is proven: only the disagreeing ones are read from the picture (the
            # text-layer reader gives their blocks the recogniser as engine, `textlayer.proof_reads`)
            replace_lines(textdict, proof.replaced)
            replaced = (f", except {len(proof.replaced)} line(s) the picture contradicts, whose text is the "
                        "recogniser's reading of the line (route ocr, engine rapidocr, for the blocks holding them)")
        return TriageDecision(
            route="text_layer",
            scores=scores,
            reasons=[f"{head} proven to match the picture: {proof.reason}; the layer is read{replaced}"],
            script=q.script,
            hidden_layer=True,
        )
    if not proof.attempted:
        return to_ocr(proof.reason)
    return to_ocr(f"it disagrees with the picture: {proof.reason}")


def triage_page(
    page: pymupdf.Page, textdict: dict, cfg: TriageConfig, ocr: OcrConfig | None = None
) -> TriageDecision:
    """Route one page: `text_layer`, `ocr`, `blank` or `mixed`, with scores and reasons.

    `textdict` is `pagerouter.common.pagetext.extract_textdict(page)`, computed once by the caller.
    `ocr` (the OCR config; defaults when None) says whether OCR is enabled and which scripts the
    small reader's recogniser reads, for proving a hidden OCR layer (step 2).

    Step 1 starts by asking which spans the page actually shows (`visibility.hidden_text`): the
    ones it does not are marked invisible in `textdict` for every later stage, and listed in the
    decision's `hidden_text`.
    """
    pics, img_cov = pictures(page, cfg.min_image_area_share, cfg.min_image_side_pt)
    hidden: list = []
    if cfg.check_visibility:
        unrotate = page.derotation_matrix if page.rotation else None
        boxes = [tuple(pymupdf.Rect(p.bbox) * unrotate) if unrotate else p.bbox for p in pics]
        try:
            hidden = hidden_text(page, textdict, boxes, min_contrast=cfg.visibility_min_contrast,
                                 min_shown_share=cfg.visibility_min_shown_share)
        except Exception as exc:  # noqa: BLE001 - a page MuPDF cannot render for the check is judged as before
            unchecked = f"the visibility of its text could not be checked ({type(exc).__name__}: {exc})"[:200]
        else:
            unchecked = ""
    d = _route(page, textdict, cfg, ocr, pics, img_cov, sum(h.chars for h in hidden))
    if cfg.check_visibility and unchecked:
        d.reasons.append(unchecked)
    if hidden:
        n = sum(h.chars for h in hidden)
        d.scores["hidden_text_chars"] = float(n)
        d.hidden_text = [HiddenText(bbox=to_display(page, h.bbox), text=h.text, reason=h.why) for h in hidden]
        d.reasons.append(f"{n} characters of the text layer in {len(hidden)} span(s) are not visible on the page and "
                         f"are left out (first: {hidden[0].text[:40]!r}, {hidden[0].why})")
    return d


def _route(page: pymupdf.Page, textdict: dict, cfg: TriageConfig, ocr: OcrConfig | None, pics: list[Picture],
           img_cov: float, hidden_chars: int) -> TriageDecision:
    scores: dict[str, float] = {}
    lay = read_layer(page, textdict, cfg.light_text_level)
    scores.update(
        visible_chars=float(lay.visible_chars),
        invisible_chars=float(lay.invisible_chars),
        invisible_text_share=lay.invisible_share,
        image_coverage=img_cov,
        sizeable_images=float(len(pics)),
    )

    def decide(route: str, reasons: list[str], script: str | None = None, regions=None) -> TriageDecision:
        return TriageDecision(route=route, scores=scores, reasons=reasons, script=script, ocr_regions=regions or [])

    # 2. a hidden layer over what is most likely a scan: render mode 3, or text the page does not
    # show over a picture (text in the paper's colour over a scan). Unshown text over bare paper
    # is no OCR layer of anything: the page is judged by what it shows (steps 3-7).
    over_scan = lay.invisible_chars - hidden_chars >= cfg.min_chars_for_text_layer or bool(pics)
    if lay.invisible_chars >= cfg.min_chars_for_text_layer and lay.invisible_share > cfg.max_invisible_text_share \
            and over_scan:
        return _hidden_layer(page, textdict, lay, img_cov, cfg, ocr, scores)

    # 3. quality of the visible text
    q = measure(lay.visible_text, cfg)
    # The font check only matters when the words are doubtful (see words.quality_failures), and
    # listing fonts scans the page resources, so it is skipped for clearly healthy text.
    unmapped_share = 0.0
    if q.plausible_word_share < cfg.strict_plausible_word_share or q.bad_char_share > 0:
        unmapped_share = unmapped_font_share(page, lay.chars_by_font)
        scores["unmapped_font_share"] = unmapped_share
    scores.update(
        bad_char_share=q.bad_char_share,
        plausible_word_share=q.plausible_word_share,
        words_checked=float(q.words),
        letter_cross_entropy=q.cross_entropy if q.entropy_letters else 0.0,
        mojibake_share=q.mojibake_share,
        light_text_share=lay.light_chars / lay.visible_chars if lay.visible_chars else 0.0,
    )
    for script, cs in q.char_scores.items():
        if cs.modeled and cs.scored:
            scores[f"char_model_bits.{script}"] = cs.bits
            if script in cfg.char_model_min_context_gain:
                scores[f"char_model_context_gain.{script}"] = cs.context_gain
    enough_text = lay.visible_chars >= cfg.min_chars_for_text_layer
    if enough_text:
        failures = quality_failures(q, unmapped_share, cfg)
        if failures:
            # a layer whose words carry another script's letter (or ASCII digits and hyphens) inside
            # words of its own script still says which script the page is written in (the reader
            # picks its engine by it), whatever else the broken letter fails (the plausible-word
            # share); a shifted map's letters say nothing about that
            named = [f for f in failures if _NAMES_SCRIPT(f)]
            if named:
                failures = named + [f for f in failures if f not in named]
            return decide("ocr", [f"the text layer is not trustworthy: {f}" for f in failures],
                          q.script if named else None)
        if q.words < cfg.min_words_for_word_check and q.script not in (None, "Latin") and q.letters:
            # too few words for the word checks to say anything: no verdict from no evidence; the
            # layer is proven against the picture line by line, or read from it
            proven = _prove_short_layer(page, textdict, q, cfg, ocr, scores)
            if proven is not None:
                return decide("ocr", [proven], q.script)

    # 4. visible text painted over by a later image
    if enough_text and pics:
        under = text_under_images_share(page, cfg.min_image_area_share)
        scores["text_under_image_share"] = under
        if under > cfg.max_text_under_image_share:
            return decide(
                "ocr",
                [
                    f"{_pct(under)} of the text-layer area is painted over by an image (text_under_image_share > "
                    f"max_text_under_image_share={cfg.max_text_under_image_share}): a hidden OCR layer under a scan"
                ],
            )

    healthy = (
        f"{lay.visible_chars} visible characters in {q.script or 'no particular'} script, "
        f"{_pct(q.plausible_word_share)} plausible words (>= {cfg.min_plausible_word_share}), "
        f"{_pct(q.bad_char_share)} bad characters (<= {cfg.max_bad_char_share})"
    )
    unmodeled = sorted(sc for sc, cs in q.char_scores.items() if not cs.modeled)
    if unmodeled:
        healthy += (
            f"; no character model for {', '.join(unmodeled)}: shifted or substituted letter maps in that script "
            "cannot be detected and are not flagged"
        )
    # 5. fast path: a healthy born-digital page with nothing to look at
    if lay.visible_chars >= cfg.fast_path_min_chars and not pics and not lay.light_chars:
        return decide(
            "text_layer",
            [f"healthy text layer: {healthy}; no image of at least min_image_area_share={cfg.min_image_area_share}"],
            q.script,
        )

    # 6. look at the page. A full render when the page itself is in question (little text,
    # near-white text, or pictures covering much of it); otherwise only the pictures are
    # rendered, so a born-digital page with a logo does not pay for a page render.
    sparse = lay.visible_chars < cfg.fast_path_min_chars
    full = sparse or lay.light_chars > 0 or img_cov >= cfg.scan_text_image_share or bool(page.rotation)
    ink = None
    if full:
        # sparse pages without pictures are looked at closely too: their content may be drawn
        # (text converted to outlines) rather than written
        # pages without enough text are looked at at image_dpi too: whether they are blank
        # is decided by letter-sized marks, which must be a few pixels tall to be seen
        dpi = cfg.image_dpi if pics or sparse else cfg.ink_dpi
        rnd = inkmod.render_gray(page, dpi, cfg.max_render_pixels)
        if not pics and rnd.scale * cfg.blank_min_mark_pt < _MIN_MARK_PX:
            # a huge page (a 200-inch poster): max_render_pixels lowered the zoom until letters are
            # under a few pixels, so ink can neither confirm the text layer nor show the page blank;
            # calling it blank threw its text away with status ok (found by tests/test_hostile.py)
            coarse = (f"rendered at {rnd.scale * 72:.1f} dpi (triage.max_render_pixels on a {page.rect.width:.0f} x "
                      f"{page.rect.height:.0f} pt page): too coarse to see letters")
            if lay.visible_chars:
                return decide("text_layer", [coarse + "; the text layer is kept as it is"], q.script)
            return decide("ocr", [coarse + "; the page is left to OCR"])
        ink = inkmod.ink_share(rnd, cfg.ink_gray_level)
        scores["ink_share"] = ink
        scores["render_dpi"] = rnd.scale * 72.0
        if not enough_text:
            marks = _marks(rnd, cfg, scores)
            faint = _faint_rows(rnd, cfg, scores) if not marks.is_content(
                cfg.blank_max_marks, cfg.blank_min_mark_pt, cfg.blank_max_text_rows) else 0
            if faint:
                return decide(
                    "ocr",
                    [
                        f"only {lay.visible_chars} visible characters (< min_chars_for_text_layer="
                        f"{cfg.min_chars_for_text_layer}) and no letter-sized marks ({_marks_text(marks, cfg)}), but "
                        f"blurred to letter size the page shows {faint} long bars of faint print (ocr.faint_rows): "
                        "a degraded scan of text, not a blank page"
                    ],
                )
            if not marks.is_content(cfg.blank_max_marks, cfg.blank_min_mark_pt, cfg.blank_max_text_rows):
                return decide(
                    "blank",
                    [
                        f"{lay.visible_chars} visible characters (< min_chars_for_text_layer="
                        f"{cfg.min_chars_for_text_layer}) and no ink that could be content: {_marks_text(marks, cfg)}"
                    ],
                )
            return decide(
                "ocr",
                [
                    f"only {lay.visible_chars} visible characters (< min_chars_for_text_layer="
                    f"{cfg.min_chars_for_text_layer}) but the page shows ink that could be content: "
                    f"{_marks_text(marks, cfg)}; the content is a picture"
                ],
                # the few letters the layer has still say the page's script when it is not Latin (the
                # reader is told, instead of reading an Arabic heading as Latin garbage)
                q.script if q.script not in (None, "Latin") and q.letters >= 2 else None,
            )
        inkless = inkmod.inkless_text_share(rnd, lay.spans, cfg.ink_gray_level)
        scores["inkless_text_share"] = inkless
        if inkless > cfg.max_inkless_text_share:
            marks = _marks(rnd, cfg, scores)
            empty = not marks.is_content(cfg.blank_max_marks, cfg.blank_min_mark_pt, cfg.blank_max_text_rows)
            return decide(
                "blank" if empty else "ocr",
                [
                    f"{_pct(inkless)} of the visible characters sit where the page shows no ink (inkless_text_share > "
                    f"max_inkless_text_share={cfg.max_inkless_text_share}): the text layer says what the page does "
                    "not show; " + ("the page itself is empty: " if empty else "the page shows: ") + _marks_text(marks, cfg)
                ],
            )
        renders = [rnd] * min(len(pics), cfg.max_pictures_checked)
        if sparse and not pics:
            drawn = _drawn_text(rnd, lay, cfg, scores, page.rotation)
            if drawn:
                return decide("ocr", [drawn])
    else:
        renders = [
            inkmod.render_clip_gray(page, p.bbox, cfg.image_dpi, cfg.max_render_pixels)
            for p in pics[: cfg.max_pictures_checked]
        ]

    # 7. pictures that hold text the layer does not cover
    regions, details = _text_pictures(renders, lay.spans, pics, cfg, page.rotation, lay.visible_chars)
    text_pic_share = union_share(regions, page.rect)
    scores["text_picture_share"] = text_pic_share
    scores["text_pictures"] = float(len(regions))
    if regions and text_pic_share >= cfg.scan_text_image_share and lay.visible_chars <= cfg.scan_max_layer_chars:
        return decide(
            "ocr",
            [
                f"pictures holding text not in the text layer cover {_pct(text_pic_share)} of the page "
                f"(>= scan_text_image_share={cfg.scan_text_image_share}) and the layer has only {lay.visible_chars} "
                f"characters (<= scan_max_layer_chars={cfg.scan_max_layer_chars}): the page is essentially a "
                f"picture of text ({details})"
            ],
        )
    if regions:
        return decide(
            "mixed",
            [
                f"healthy text layer: {healthy}; {len(regions)} picture(s) covering {_pct(text_pic_share)} of the page "
                f"hold text the layer does not cover ({details}); they are OCR'd"
            ],
            q.script,
            regions,
        )
    tail = f"; {len(pics)} sizeable picture(s) hold no text-like rows" if pics else ""
    inktxt = f"; ink on {_pct(ink)} of the page" if ink is not None else ""
    return decide("text_layer", [f"healthy text layer: {healthy}{inktxt}{tail}"], q.script)


def _marks(rnd: inkmod.Render, cfg: TriageConfig, scores: dict[str, float]) -> inkmod.Marks:
    m = inkmod.content_marks(
        rnd, cfg.ink_gray_level, cfg.blank_mark_contrast, cfg.text_component_min_height_pt, cfg.blank_max_mark_elongation,
        cfg.blank_edge_margin_pt,
    )
    # a second witness: faint print too light for the marks' gray level still forms rows of blobs
    m.rows = len(inkmod.text_line_boxes(rnd.gray, rnd.scale, cfg.text_component_min_height_pt,
                                        cfg.text_component_max_height_pt, cfg.min_line_blobs, cfg.blank_edge_margin_pt))
    scores["content_marks"] = float(m.count)
    scores["largest_mark_pt"] = m.largest_pt
    scores["text_rows"] = float(m.rows)
    return m


def _NAMES_SCRIPT(failure: str) -> bool:
    return "mix letters of two scripts" in failure or "ASCII digits or marks sit inside words" in failure


def _prove_short_layer(page: pymupdf.Page, textdict: dict, q, cfg: TriageConfig, ocr: OcrConfig | None,
                       scores: dict[str, float]) -> str | None:
    """A visible layer of too few words in a non-Latin script: None when its lines are proven
    against the picture (`layer_proof`, every line), else why the page is read by OCR instead."""
    head = (f"only {q.words} words in {q.script} script (< min_words_for_word_check={cfg.min_words_for_word_check}): "
            "too few for the word checks to judge the layer")
    ocr = ocr or OcrConfig()
    if not cfg.hidden_layer_proof or not (ocr.enabled or cfg.hidden_layer_proof_without_ocr):
        return f"{head}, and proof against the picture is off; the page is read from the picture"
    proof = prove_hidden_layer(page, textdict, q.script, cfg, ocr, visible=True)
    scores.update({k.replace("hidden_layer", "short_layer"): v for k, v in proof.scores().items()})
    if proof.agreed:
        return None
    why = proof.reason.replace("the hidden layer", "the layer")
    return f"{head}; {why if not proof.attempted else 'it disagrees with the picture: ' + why}"


_MIN_FAINT_ROWS = 2  # one bar can be a fold or a shadow; two parallel bars of print are lines of text


def _faint_rows(rnd: inkmod.Render, cfg: TriageConfig, scores: dict[str, float]) -> int:
    """Long bars of faint print on a page that shows no letter-sized marks (`ocr.faint_rows`):
    their number when at least `_MIN_FAINT_ROWS`, else 0."""
    from ..ocr.faint_rows import faint_rows

    n = len(faint_rows(rnd.gray, rnd.scale, cfg.blank_edge_margin_pt))
    scores["faint_rows"] = float(n)
    return n if n >= _MIN_FAINT_ROWS else 0


def _marks_text(m: inkmod.Marks, cfg: TriageConfig) -> str:
    return (
        f"{m.count} letter-sized mark(s) (blank allows <= blank_max_marks={cfg.blank_max_marks}) and "
        f"{m.rows} row(s) of letter-like blobs (blank allows <= blank_max_text_rows={cfg.blank_max_text_rows}), the largest "
        f"{m.largest_pt:.1f} pt (blank needs < blank_min_mark_pt={cfg.blank_min_mark_pt:g}); {m.speckles} speck(s) "
        f"ignored as noise; marks within blank_edge_margin_pt={cfg.blank_edge_margin_pt:g} of the edge (shadows), "
        "long thin lines and uniform tone are not counted"
    )


def _drawn_text(
    rnd: inkmod.Render, lay, cfg: TriageConfig, scores: dict[str, float], rotation: int = 0
) -> str | None:
    """On a sparse page without pictures: does the ink outside the text layer look like rows
    of text (text drawn as vector outlines, which no text layer holds)?"""
    gray = _upright(inkmod.blank_out_text(rnd, lay.spans), rotation)
    tl = inkmod.text_likeness(
        gray, rnd.scale, cfg.text_component_min_height_pt, cfg.text_component_max_height_pt, cfg.min_line_blobs
    )
    h, w = rnd.gray.shape
    area = max(1.0, w * h / (rnd.scale * rnd.scale))
    density = tl.aligned / area * 10_000.0
    scores["drawn_text_blobs"] = float(tl.aligned)
    scores["drawn_text_density"] = density
    scores["drawn_text_lines"] = float(tl.lines)
    rows = tl.aligned >= cfg.min_text_components and tl.aligned_share >= cfg.min_aligned_component_share
    if rows and tl.lines >= cfg.min_text_lines and density < cfg.min_drawn_text_density:
        return (
            f"only {lay.visible_chars} visible characters (< fast_path_min_chars={cfg.fast_path_min_chars}) while the "
            f"ink outside them forms {tl.lines} lines of letter-sized blobs (>= min_text_lines={cfg.min_text_lines}; "
            f"{tl.aligned} blobs in rows, {density:.1f} per 10000 pt2): text the layer does not hold"
        )
    if rows and density >= cfg.min_drawn_text_density:
        return (
            f"only {lay.visible_chars} visible characters (< fast_path_min_chars={cfg.fast_path_min_chars}) while the "
            f"ink outside them holds {tl.aligned} letter-sized blobs in rows, {density:.1f} per 10000 pt2 "
            f"(>= min_drawn_text_density={cfg.min_drawn_text_density}): text drawn as shapes, not in the layer"
        )
    return None


def _upright(gray: np.ndarray, rotation: int) -> np.ndarray:
    """Undo the page's /Rotate on a crop of the displayed render: content is usually written
    horizontally in the unrotated page, and the row test looks for horizontal rows."""
    k = (rotation // 90) % 4
    return np.ascontiguousarray(np.rot90(gray, k)) if k else gray


def _text_outside_hidden_layer(page: pymupdf.Page, textdict: dict, cfg: TriageConfig) -> int:
    """Lines of letter-like ink on the page that no hidden-layer line covers (0: none)."""
    from .layer_proof import hidden_lines

    rnd = inkmod.render_gray(page, cfg.image_dpi, cfg.max_render_pixels)
    gray = rnd.gray.copy()
    s, (h, w) = rnd.scale, gray.shape
    rot = page.rotation_matrix  # layer boxes are unrotated page space, the render is as displayed
    for ln in hidden_lines(textdict):
        r = pymupdf.Rect(ln.bbox) * rot
        pad = 0.4 * max(1.0, r.height)
        gray[max(0, int((r.y0 - pad) * s)): min(h, int((r.y1 + pad) * s) + 1),
             max(0, int((r.x0 - pad) * s)): min(w, int((r.x1 + pad) * s) + 1)] = 255
    tl = inkmod.text_likeness(gray, s, cfg.text_component_min_height_pt, cfg.text_component_max_height_pt,
                              cfg.min_line_blobs)
    if tl.ink > cfg.max_component_ink_share or tl.lines < cfg.min_text_lines:
        return 0
    return tl.lines


def _text_pictures(
    renders: list[inkmod.Render], spans, pics: list[Picture], cfg: TriageConfig, rotation: int = 0, layer_chars: int = 0
) -> tuple[list[BBox], str]:
    """Boxes of the pictures that look like they hold text the layer does not already say.

    A picture dense with letter-like blobs in rows is a picture of text (its whole box is OCR'd).
    A sparse one (a full-page scan of a short memo, a slide background) holds text when its ink
    forms `min_text_lines` lines no layer character covers: if those lines hold more blobs than
    the layer has characters the picture is the page's main text (whole box), otherwise only
    the box around the lines is OCR'd (a slide's logo and footer, not the whole slide)."""
    regions, notes = [], []
    blanked: dict[int, np.ndarray] = {}
    for pic, rnd in zip(pics, renders):
        key = id(rnd)
        if key not in blanked:
            blanked[key] = inkmod.blank_out_text(rnd, spans)
        x0, y0, x1, y1 = rnd.px(pic.bbox)
        tl = inkmod.text_likeness(
            _upright(blanked[key][y0:y1, x0:x1], rotation),
            rnd.scale,
            cfg.text_component_min_height_pt,
            cfg.text_component_max_height_pt,
            cfg.min_line_blobs,
        )
        area = max(1.0, (pic.bbox[2] - pic.bbox[0]) * (pic.bbox[3] - pic.bbox[1]))
        density = tl.aligned / area * 10_000.0
        rows = (
            tl.aligned >= cfg.min_text_components
            and tl.aligned_share >= cfg.min_aligned_component_share
            and tl.ink <= cfg.max_component_ink_share
        )
        # ink accounting: lines of text that no layer character covers are text to read,
        # however much empty paper (a full-page scan of a short memo) surrounds them
        if rows and density < cfg.min_text_blob_density and tl.lines >= cfg.min_text_lines:
            lb = tl.line_boxes
            blobs = sum(b[4] for b in lb)
            box = pic.bbox
            if blobs <= layer_chars and not rotation:
                s = rnd.scale
                ox, oy = x0 / s + rnd.origin[0], y0 / s + rnd.origin[1]
                pad = max(b[3] - b[1] for b in lb) / s
                box = (
                    max(pic.bbox[0], ox + min(b[0] for b in lb) / s - pad),
                    max(pic.bbox[1], oy + min(b[1] for b in lb) / s - pad),
                    min(pic.bbox[2], ox + max(b[2] for b in lb) / s + pad),
                    min(pic.bbox[3], oy + max(b[3] for b in lb) / s + pad),
                )
            regions.append(tuple(round(v, 2) for v in box))
            notes.append(
                f"{tl.lines} lines of letter-sized blobs not covered by the text layer (>= min_text_lines="
                f"{cfg.min_text_lines}; {tl.aligned} of {tl.components} blobs in rows, {density:.1f} per 10000 pt2)"
            )
            continue
        if rows and density >= cfg.min_text_blob_density:
            regions.append(tuple(round(v, 2) for v in pic.bbox))
            notes.append(
                f"{tl.aligned} of {tl.components} letter-sized blobs in rows (>= min_text_components="
                f"{cfg.min_text_components}, share {tl.aligned_share:.2f} >= min_aligned_component_share="
                f"{cfg.min_aligned_component_share}, {density:.1f} per 10000 pt2 >= min_text_blob_density="
                f"{cfg.min_text_blob_density})"
            )
    return regions, "; ".join(notes[:3])

