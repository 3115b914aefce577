"""Checks that flag a reading, each with its score, threshold and a reason in words.

`check_text` is pure and engine-neutral (any tier can run it on any text); `check_reading`
runs it on a whole page reading and on each sizeable block, and adds the page-level checks
that need blocks (tables, figure-only pages, blank pages).

What the checks stand for:
- confidence: the reader itself doubts the text;
- empty output on a page with ink, or text on a blank page (hallucination);
- repetition loops: a character, token, phrase or line repeated many times, anywhere;
- low-variety drift: few distinct 3-grams, very compressible text, or far more text than the
  page's ink can hold;
- language plausibility without a language model: script consistency (no CJK in a Latin
  page), share of word-like tokens, share of odd symbols. None of these favours English.
- tables: Markdown rows with differing cell counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..config.checks import ChecksConfig
from ..model import Block, CheckResult
from ..common.stages import OcrTask, Reading
from ..common.unicode_scripts import letter_script, letter_script_counts
from . import text_stats as ts

TEXT_ROLES_SKIPPED = frozenset({"figure", "table"})
"""Roles whose text is not prose: tables get their own check, figures hold no text."""


def check_text(
    text: str,
    *,
    confidences: Sequence[float] = (),
    weights: Sequence[float] | None = None,
    ink: float,
    expected_script: str | None,
    cfg: ChecksConfig,
) -> list[CheckResult]:
    """All text checks on one text. `confidences` are per-line (or per-word) 0..1 values,
    optionally weighted (e.g. by characters); `ink` is the page's ink share (0..1)."""
    results = [_confidence(confidences, weights, cfg)]
    results += _empty_or_blank(text, ink, cfg)
    results += _repetition(text, cfg)
    results += _drift(text, ink, cfg)
    results += _language(text, expected_script, cfg)
    return results


def check_reading(task: OcrTask, reading: Reading, cfg: ChecksConfig) -> list[CheckResult]:
    """Checks of a page reading: the whole text, every sizeable block, and its tables."""
    ink = task.ink if task.ink > 0 else page_ink(task)
    expected = task.decision.script if task.decision else None
    prose = [b for b in reading.blocks if b.role not in TEXT_ROLES_SKIPPED and b.text.strip()]
    text = "\n".join(b.text for b in reading.blocks if b.role != "figure" and b.text.strip())
    confs = [b.confidence for b in reading.blocks if b.text.strip()]
    weights = [max(1, ts.alnum_count(b.text)) for b in reading.blocks if b.text.strip()]
    results = check_text(text, confidences=confs, weights=weights, ink=ink, expected_script=expected, cfg=cfg)

    lines = text_rows(task, reading.rotation, cfg) if cfg.unread_ink else []
    if (cfg.unread_ink and ts.alnum_count(text) < _LITTLE_TEXT and not task.text_blocks
            and (task.decision is None or task.decision.route == "ocr")):
        # a page read by OCR alone that came out with (almost) nothing: faint print the letter-row
        # test cannot see still forms bars of grey at letter size (a degraded scan read as nothing
        # must not say `ok`); a mixed page's text layer holds its text, and its lines blur into
        # bars too
        lines += faint_text_rows(task, reading.rotation)
    # A page the layout saw only as pictures may rightly have no text: don't call it near-empty,
    # unless the page shows rows of letters (whatever the layout called them).
    has_figure = any(b.role == "figure" for b in reading.blocks)
    if has_figure and not prose and not lines:
        for i, r in enumerate(results):
            if r.name == "empty_output" and not r.passed:
                results[i] = r.model_copy(
                    update={"passed": True, "reason": r.reason + "; but the layout found only figures, so no text is expected"}
                )
    if cfg.unread_ink:
        results.append(unread_ink(lines, [*task.text_blocks, *reading.blocks], cfg))

    results += _block_results(reading.blocks, ink, expected, cfg)
    results.append(_tables(reading.blocks, cfg))
    return results


_LITTLE_TEXT = 20  # letters and digits below which a page's reading is looked at for faint print
_MIN_FAINT_ROWS = 2  # one bar can be a fold or a shadow


def faint_text_rows(task: OcrTask, rotation: int) -> list[tuple[float, float, float, float]]:
    """Bars of faint print (`ocr.faint_rows`) on the task's render at 72 dpi, displayed-page points;
    [] unless there are at least `_MIN_FAINT_ROWS` (and for pages turned sideways, where bars
    would run down the render)."""
    import cv2

    from .faint_rows import faint_rows

    img = task.image
    if img is None or img.size == 0 or task.scale <= 0 or (rotation // 90) % 2:
        return []
    gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY) if img.ndim == 3 else img
    factor = min(1.0, 1.0 / task.scale)
    if factor < 1.0:
        gray = cv2.resize(gray, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
    rows = faint_rows(gray, task.scale * factor)
    if len(rows) < _MIN_FAINT_ROWS:
        return []
    if (rotation // 90) % 4 == 2:
        W, H = gray.shape[1] / (task.scale * factor), gray.shape[0] / (task.scale * factor)
        rows = [(W - x1, H - y1, W - x0, H - y0) for x0, y0, x1, y1 in rows]
    return rows


def text_rows(task: OcrTask, rotation: int, cfg: ChecksConfig) -> list[tuple[float, float, float, float]]:
    """Rows of letter-like ink on the task's render, as displayed-page boxes (points). The render is
    turned upright first (`rotation`, clockwise) so that rows of a sideways page run across."""
    import cv2

    from ..layout.ink import text_line_boxes

    img = task.image
    if img is None or img.size == 0 or task.scale <= 0:
        return []
    gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY) if img.ndim == 3 else img
    factor = min(1.0, cfg.unread_ink_dpi / 72.0 / task.scale)
    if factor < 1.0:
        gray = cv2.resize(gray, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
    scale = task.scale * factor
    k = (rotation // 90) % 4
    h, w = gray.shape
    up = np.ascontiguousarray(np.rot90(gray, -k)) if k else gray
    boxes = text_line_boxes(up, scale, cfg.unread_ink_min_letter_pt, cfg.unread_ink_max_letter_pt,
                            cfg.unread_ink_min_blobs, cfg.unread_ink_edge_margin_pt)
    if not k:
        return boxes
    W, H = w / scale, h / scale  # displayed page size in points
    out = []
    for x0, y0, x1, y1 in boxes:  # upright -> displayed: undo k clockwise quarter turns
        pts = [(x0, y0), (x1, y1)]
        cw, ch = (W, H) if k % 2 == 0 else (H, W)
        for _ in range(k):  # a clockwise turn took (x, y) in a frame of height ph to (ph - y, x)
            ph = cw
            pts = [(y, ph - x) for x, y in pts]
            cw, ch = ch, cw
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        out.append((min(xs), min(ys), max(xs), max(ys)))
    return out


def unread_ink(rows: list[tuple[float, float, float, float]], blocks: list[Block], cfg: ChecksConfig) -> CheckResult:
    """Rows of letters on the page that no output block accounts for: text the reading left out.
    Rows inside a figure count only when the figure holds `unread_ink_figure_lines` of them (a
    chart's labels are one or two), or when the figure is a strip no taller than the row."""
    from ..common.geometry import overlap_share

    text_boxes = [b.bbox for b in blocks if b.role != "figure" and b.text.strip()]
    figures = [b.bbox for b in blocks if b.role == "figure"]
    loose: list[tuple[float, float, float, float]] = []
    in_figure: dict[int, list] = {}
    cover = _covered_rows(rows, text_boxes)
    for r, c in zip(rows, cover):
        if c >= cfg.unread_ink_min_cover:
            continue
        fig = next((i for i, f in enumerate(figures) if overlap_share(r, f) >= 0.5), None)
        # a "figure" hardly taller than the row is a picture of that line of text (an address set as an image)
        if fig is None or figures[fig][3] - figures[fig][1] <= 2.5 * (r[3] - r[1]):
            loose.append(r)
        else:
            in_figure.setdefault(fig, []).append(r)
    bad = list(loose) if len(loose) > cfg.unread_ink_max_lines else []
    for rs in in_figure.values():
        if len(rs) >= cfg.unread_ink_figure_lines:
            bad += rs
    n = len(bad)
    return CheckResult(
        name="unread_ink", passed=not n, score=float(n), threshold=float(cfg.unread_ink_max_lines),
        reason=(f"{n} row(s) of letter-like ink on the page lie outside every block of the reading (of {len(rows)} "
                "rows seen): text the reading left out") if n
        else f"all {len(rows)} rows of letter-like ink on the page lie in blocks of the reading",
        regions=[tuple(round(v, 1) for v in r) for r in bad[:50]],
    )


def _covered_rows(rows: list, boxes: list) -> list[float]:
    """`_covered` of every row, at once: the rows' grid points against all boxes in one array
    operation (a real page: hundreds of rows and blocks, 0.5 ms a row as a loop over boxes)."""
    if not rows:
        return []
    if not boxes:
        return [0.0] * len(rows)
    r = np.asarray(rows, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    # the same 3 x 9 grid as `_covered`, computed as np.linspace computes it (start + i * step,
    # the last point the stop itself), one row of points per row box
    gx = np.arange(9)[None, :] * ((r[:, 2] - r[:, 0]) / 8)[:, None] + r[:, 0:1]  # (rows, 9)
    gy = np.arange(3)[None, :] * ((r[:, 3] - r[:, 1]) / 2)[:, None] + r[:, 1:2]  # (rows, 3)
    gx[:, -1], gy[:, -1] = r[:, 2], r[:, 3]
    out: list[float] = []
    step = max(1, 2_000_000 // (27 * len(b)))  # bounds the (rows, 3, 9, boxes) array
    for i in range(0, len(r), step):
        x, y = gx[i:i + step], gy[i:i + step]
        in_x = (x[:, :, None] >= b[None, None, :, 0] - 1) & (x[:, :, None] <= b[None, None, :, 2] + 1)  # (n, 9, B)
        in_y = (y[:, :, None] >= b[None, None, :, 1] - 1) & (y[:, :, None] <= b[None, None, :, 3] + 1)  # (n, 3, B)
        inside = (in_y[:, :, None, :] & in_x[:, None, :, :]).any(axis=3)  # (n, 3, 9)
        out += inside.mean(axis=(1, 2)).tolist()
    return out


def _covered(r: tuple[float, float, float, float], boxes: list) -> float:
    """Share of box `r` inside the union of `boxes` (sampled on a small grid)."""
    if not boxes:
        return 0.0
    xs = np.linspace(r[0], r[2], 9)
    ys = np.linspace(r[1], r[3], 3)
    gx, gy = np.meshgrid(xs, ys)
    inside = np.zeros(gx.shape, dtype=bool)
    for b in boxes:
        inside |= (gx >= b[0] - 1) & (gx <= b[2] + 1) & (gy >= b[1] - 1) & (gy <= b[3] + 1)
    return float(inside.mean())


def page_ink(task: OcrTask) -> float:
    """The task's ink share when triage did not fill it in (same measure: tiny grey render)."""
    from ..common.pagetext import MUPDF_LOCK
    from .raster import ink_share, open_task_page

    with MUPDF_LOCK:
        try:
            doc, page = open_task_page(task)
        except ValueError:
            return 0.0
        try:
            return ink_share(page)
        finally:
            doc.close()


def _block_results(blocks: list[Block], ink: float, expected: str | None, cfg: ChecksConfig) -> list[CheckResult]:
    """Per-block content checks (a garbage block in an otherwise good page); failures only."""
    out: list[CheckResult] = []
    content = {"repetition_char", "repetition_token", "repetition_phrase", "repetition_line", "drift_trigrams",
               "drift_compression", "script_expected", "script_foreign", "wordlike_share", "symbol_share"}
    for b in blocks:
        if b.role in TEXT_ROLES_SKIPPED or len("".join(b.text.split())) < cfg.min_block_chars:
            continue
        for r in check_text(b.text, confidences=[b.confidence], ink=ink, expected_script=expected, cfg=cfg):
            if r.name in content and not r.passed:
                out.append(r.model_copy(update={
                    "name": f"block_{r.name}",
                    "reason": f"block {b.order} ({b.role}, bbox {tuple(round(v) for v in b.bbox)}): {r.reason}",
                }))
                if len(out) >= cfg.max_block_results:
                    return out
    return out


def _confidence(confs: Sequence[float], weights: Sequence[float] | None, cfg: ChecksConfig) -> CheckResult:
    t = cfg.min_mean_confidence
    if not confs:
        return CheckResult(name="low_confidence", passed=True, score=1.0, threshold=t, reason="no lines to score")
    w = list(weights) if weights is not None and len(weights) == len(confs) else [1.0] * len(confs)
    mean = sum(c * x for c, x in zip(confs, w)) / max(sum(w), 1e-9)
    ok = mean >= t
    return CheckResult(
        name="low_confidence", passed=ok, score=round(mean, 4), threshold=t,
        reason=f"mean confidence {mean:.2f} {'>=' if ok else '<'} {t:.2f} over {len(confs)} lines",
    )


def _empty_or_blank(text: str, ink: float, cfg: ChecksConfig) -> list[CheckResult]:
    n = ts.alnum_count(text)
    out = []
    if ink >= cfg.min_ink_for_text:
        ok = n >= cfg.min_chars_on_inked_page
        out.append(CheckResult(
            name="empty_output", passed=ok, score=float(n), threshold=float(cfg.min_chars_on_inked_page),
            reason=f"{n} letters/digits read on a page with ink share {ink:.4f}"
            + ("" if ok else f" (< {cfg.min_chars_on_inked_page}: near-empty output)"),
        ))
    if ink <= cfg.blank_max_ink:
        ok = n <= cfg.blank_max_chars
        out.append(CheckResult(
            name="blank_page_text", passed=ok, score=float(n), threshold=float(cfg.blank_max_chars),
            reason=f"page looks blank (ink share {ink:.4f} <= {cfg.blank_max_ink}) and {n} letters/digits were read"
            + ("" if ok else ": text on a blank page is hallucinated"),
        ))
    return out


def _repetition(text: str, cfg: ChecksConfig) -> list[CheckResult]:
    out = []
    ch, run = ts.longest_char_run(text, cfg.char_run_ignore)
    out.append(CheckResult(
        name="repetition_char", passed=run <= cfg.max_char_run, score=float(run), threshold=float(cfg.max_char_run),
        reason=f"longest run of one character: {run} x {ch!r}" if run else "no character runs",
    ))
    toks = ts.tokens(text)
    # Left out: single letters and punctuation, which repeat legitimately ("H H" in formulas,
    # spaced leader dots) - and leaving them out keeps "word , word , word ," a loop.
    word_toks = [t for t in toks if ts.alnum_count(t) >= 2 or letter_script(t[0]) in ts.NO_SPACE_SCRIPTS]
    p1, r1, s1 = ts.tandem_repeat(word_toks, 1, 1)
    out.append(CheckResult(
        name="repetition_token", passed=r1 <= cfg.max_token_repeats, score=float(r1),
        threshold=float(cfg.max_token_repeats),
        reason=f"token {word_toks[s1]!r} repeated {r1} times in a row" if p1 else "no token repeated back to back",
    ))
    pp, rp, sp = ts.tandem_repeat(word_toks, 2, cfg.max_phrase_tokens)
    phrase = ts.join_tokens(word_toks[sp : sp + pp])[:80] if pp else ""
    loop = rp > cfg.max_phrase_repeats and pp * rp >= cfg.min_loop_tokens
    out.append(CheckResult(
        name="repetition_phrase", passed=not loop, score=float(rp), threshold=float(cfg.max_phrase_repeats),
        reason=(f"phrase of {pp} tokens {phrase!r} repeated {rp} times in a row ({pp * rp} tokens; a loop needs "
                f"> {cfg.max_phrase_repeats} repeats over >= {cfg.min_loop_tokens} tokens)") if pp
        else "no phrase repeated back to back",
    ))
    line, n, share = ts.most_repeated_line(text, cfg.min_line_chars_for_repeat)
    loop = n > cfg.max_line_repeats and share >= cfg.min_repeated_line_share
    out.append(CheckResult(
        name="repetition_line", passed=not loop, score=float(n), threshold=float(cfg.max_line_repeats),
        reason=(f"line {line[:80]!r} occurs {n} times, {share:.0%} of the text (a loop needs > "
                f"{cfg.max_line_repeats} copies holding >= {cfg.min_repeated_line_share:.0%})") if n
        else "no long lines to compare",
    ))
    return out


def _drift(text: str, ink: float, cfg: ChecksConfig) -> list[CheckResult]:
    out = []
    toks = ts.tokens(text)
    if len(toks) >= cfg.min_tokens_for_drift:
        rate = ts.unique_ngram_rate(toks, 3)
        out.append(CheckResult(
            name="drift_trigrams", passed=rate >= cfg.min_unique_trigram_rate, score=round(rate, 4),
            threshold=cfg.min_unique_trigram_rate,
            reason=f"{rate:.0%} of the {len(toks) - 2} token 3-grams are distinct",
        ))
        comp = ts.compression_ratio(text)
        out.append(CheckResult(
            name="drift_compression", passed=comp >= cfg.min_compression_ratio, score=round(comp, 4),
            threshold=cfg.min_compression_ratio,
            reason=f"text compresses to {comp:.0%} of its size" + (" (highly repetitive)" if comp < cfg.min_compression_ratio else ""),
        ))
    else:
        out.append(CheckResult(
            name="drift_trigrams", passed=True, score=1.0, threshold=cfg.min_unique_trigram_rate,
            reason=f"only {len(toks)} tokens (< {cfg.min_tokens_for_drift}): too short to judge variety",
        ))
    if ink > 0:
        n = ts.alnum_count(text)
        limit = ink * cfg.max_chars_per_ink + cfg.length_slack_chars
        out.append(CheckResult(
            name="length_vs_ink", passed=n <= limit, score=float(n), threshold=round(limit, 1),
            reason=f"{n} letters/digits for ink share {ink:.4f} (limit {limit:.0f})"
            + ("" if n <= limit else ": far more text than the page's ink can hold"),
        ))
    return out


def _language(text: str, expected: str | None, cfg: ChecksConfig) -> list[CheckResult]:
    text = ts.strip_table_syntax(text)
    n = ts.alnum_count(text)
    if n < cfg.min_chars_for_language:
        return [CheckResult(
            name="language", passed=True, score=float(n), threshold=float(cfg.min_chars_for_language),
            reason=f"only {n} letters/digits: too short to judge plausibility",
        )]
    out = []
    counts = letter_script_counts(text)
    letters = sum(counts.values())
    if letters:
        main = expected if expected in ts.COMPANION_SCRIPTS else counts.most_common(1)[0][0]
        group = ts.COMPANION_SCRIPTS.get(main, frozenset({main}))
        if expected is not None:
            share = sum(v for k, v in counts.items() if k in group) / letters
            ok = share >= cfg.min_expected_script_share
            out.append(CheckResult(
                name="script_expected", passed=ok, score=round(share, 4), threshold=cfg.min_expected_script_share,
                reason=f"{share:.0%} of letters are {main} or its companion scripts (the page's expected script)",
            ))
        # Latin is tolerated inside every script (acronyms, names, URLs); other scripts are not.
        foreign = {k: v for k, v in counts.items() if k not in group and k != "Latin"}
        n_foreign = sum(foreign.values())
        f_share = n_foreign / letters
        ok = not (n_foreign >= cfg.min_foreign_script_chars and f_share > cfg.max_foreign_script_share)
        detail = ", ".join(f"{v} {k}" for k, v in sorted(foreign.items(), key=lambda kv: -kv[1])) or "no"
        out.append(CheckResult(
            name="script_foreign", passed=ok, score=round(f_share, 4), threshold=cfg.max_foreign_script_share,
            reason=f"{detail} letters of unrelated scripts in a {main} text"
            + ("" if ok else f" ({f_share:.1%} of letters, at least {cfg.min_foreign_script_chars})"),
        ))
    share_w, ntok = ts.wordlike_share(text)
    out.append(CheckResult(
        name="wordlike_share", passed=share_w >= cfg.min_wordlike_share, score=round(share_w, 4),
        threshold=cfg.min_wordlike_share,
        reason=f"{share_w:.0%} of {ntok} tokens look like words or numbers",
    ))
    sym = ts.symbol_share(text)
    out.append(CheckResult(
        name="symbol_share", passed=sym <= cfg.max_symbol_share, score=round(sym, 4), threshold=cfg.max_symbol_share,
        reason=f"{sym:.1%} of characters are unusual symbols",
    ))
    return out


def _table_rows(block: Block) -> list[int]:
    """Cell counts per row of a table block (its cells, else its Markdown text)."""
    if block.cells:
        return [len(r) for r in block.cells]
    rows = []
    for line in block.text.splitlines():
        s = line.strip()
        if not s.startswith("|"):
            continue
        if set(s) <= set("|-: "):  # the header separator row
            continue
        rows.append(len(s.strip("|").split("|")))
    return rows


def _tables(blocks: list[Block], cfg: ChecksConfig) -> CheckResult:
    t = cfg.max_table_row_mismatch
    worst, where = 0.0, ""
    n_tables = 0
    for b in blocks:
        if b.role != "table":
            continue
        rows = _table_rows(b)
        if len(rows) < 2:
            continue
        n_tables += 1
        mode = max(set(rows), key=rows.count)
        bad = sum(r != mode for r in rows) / len(rows)
        if bad > worst:
            worst, where = bad, f"table block {b.order}: {sum(r != mode for r in rows)} of {len(rows)} rows do not have {mode} cells"
    if not n_tables:
        return CheckResult(name="table_rows", passed=True, score=0.0, threshold=t, reason="no tables")
    return CheckResult(
        name="table_rows", passed=worst <= t, score=round(worst, 4), threshold=t,
        reason=where or f"all rows of {n_tables} tables have the same cell count",
    )
