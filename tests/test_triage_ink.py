"""Issue 9: ink accounting that cannot lose text, and transparency-aware coverage.

Pages are generated with PyMuPDF; assertions are on the route and on the text that comes out.
"""

from __future__ import annotations

import re

import pymupdf
import pytest

from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.ocr.text_stats import char_error_rate
from pagerouter.common.pagetext import extract_textdict
from pagerouter.triage import triage_page
from pagerouter.layout.paints import hidden_text_boxes

from . import triage_fixtures as fx

CFG = PagerouterConfig()


def triage(pdf: bytes):
    page = pymupdf.open("pdf", pdf)[0]
    return triage_page(page, extract_textdict(page), CFG.triage)


@pytest.fixture(scope="module")
def converter() -> Converter:
    return Converter()


def _text(doc) -> str:
    return "\n".join(b.text for p in doc.pages for b in p.blocks if getattr(b, "text", None))


def _words(s: str) -> list[str]:
    return re.findall(r"\w+", s)


# --- 2. a watermark painted over a healthy layer does not hide it -------------------------------


@pytest.mark.parametrize("how", ["alpha", "ca", "multiply"])
def test_watermark_over_text_keeps_the_text_layer(how, converter):
    pdf = fx.watermark_pdf(how)
    d = triage(pdf)
    assert d.route == "text_layer", d.reasons
    assert d.scores.get("text_under_image_share", 0.0) == 0.0
    page = pymupdf.open("pdf", pdf)[0]
    assert hidden_text_boxes(page, 0.02)[0] == []
    out = converter.convert(pdf, name=f"watermark-{how}.pdf")
    assert [p.route for p in out.pages] == ["text_layer"]
    text = _text(out)
    assert "DRAFT" not in text.upper().replace(" ", "")
    # the layer's words, all of them, in order
    assert _words(text) == _words(" ".join(fx.WATERMARK_BODY))


def test_opaque_image_over_text_still_hides_it():
    d = triage(fx.watermark_pdf("opaque"))
    assert d.route == "ocr", d.reasons
    assert len(d.hidden_text) == len(fx.WATERMARK_BODY)  # every line under the picture, none read
    page = pymupdf.open("pdf", fx.watermark_pdf("opaque"))[0]
    d = triage_page(page, extract_textdict(page), CFG.triage.model_copy(update={"check_visibility": False}))
    assert d.route == "ocr", d.reasons
    assert "painted over by an image" in " ".join(d.reasons)


def test_image_alpha_hides_text_only_where_opaque():
    import io

    import numpy as np
    from PIL import Image

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 100), "a line under the opaque half", fontsize=12)
    page.insert_text((60, 700), "a line under the transparent half", fontsize=12)
    px = np.zeros((842, 595, 4), np.uint8)
    px[..., :3] = 200
    px[:421, :, 3] = 255  # opaque top half, transparent bottom half
    buf = io.BytesIO()
    Image.fromarray(px, "RGBA").save(buf, format="PNG")
    page.insert_image(page.rect, stream=buf.getvalue())
    hidden, _total = hidden_text_boxes(pymupdf.open("pdf", doc.tobytes())[0], 0.02)
    assert len(hidden) == 1 and hidden[0][1] < 421


# --- 1. ink that looks like text and no layer character covers is read ------------------------


def test_scanned_short_memo_with_a_real_caption_is_read(converter):
    pdf = fx.memo_scan_pdf()
    d = triage(pdf)
    assert d.route in ("ocr", "mixed"), d.reasons
    assert "lines of letter-sized blobs" in " ".join(d.reasons)
    out = converter.convert(pdf, name="memo.pdf")
    text = _text(out)
    memo = "\n".join(fx.MEMO)
    got = "\n".join(ln for ln in text.splitlines() if "Scanned" not in ln)
    assert char_error_rate(memo, got) < 0.15, text


def test_logo_sized_text_in_a_slide_background_is_only_its_box():
    """Three short lines in a picture covering the page, next to a layer with more characters:
    only the box around the lines is OCR'd, not the whole page."""
    d = triage(fx.memo_scan_pdf(fx.MEMO[:3], caption=fx.EN[:200]))
    assert d.route == "mixed", d.reasons
    (r,) = d.ocr_regions
    assert (r[2] - r[0]) * (r[3] - r[1]) < 0.3 * 595 * 842


def test_photo_is_not_lines_of_text():
    from pagerouter.layout import ink

    import numpy as np

    gray = np.asarray(__import__("PIL.Image", fromlist=["Image"]).open(__import__("io").BytesIO(fx.photo_png())).convert("L"))
    tl = ink.text_likeness(np.ascontiguousarray(gray), 1.0, 3.0, 40.0)
    assert tl.lines < CFG.triage.min_text_lines


def _dense_neighbours(cy, x0, x1, hh):
    """The row-neighbour test over every pair of blobs (what `_row_neighbours` must equal)."""
    import numpy as np

    dy = np.abs(cy[:, None] - cy[None, :]) <= 0.35 * np.maximum(hh[:, None], hh[None, :])
    ratio = hh[:, None] / hh[None, :]
    gap = np.maximum(x0[None, :] - x1[:, None], x0[:, None] - x1[None, :])
    nb = dy & (ratio <= 2.0) & (ratio >= 0.5) & (gap <= 2.5 * np.minimum(hh[:, None], hh[None, :]))
    np.fill_diagonal(nb, False)
    return nb


def test_row_neighbours_are_the_pairs_a_full_comparison_finds():
    """Blobs in rows (letters of similar height, a tall initial, stray marks): the pairs found
    among blobs sorted by centre are exactly those of the n x n comparison, both directions."""
    import numpy as np

    from pagerouter.layout import ink

    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(1, 400))
        rows = rng.uniform(0, 1000, size=max(1, n // 20))
        cy = rows[rng.integers(0, rows.size, n)] + rng.normal(0, 2, n)
        hh = rng.choice([8.0, 9.0, 10.0, 12.0, 16.0, 20.0, 40.0], n)
        x0 = rng.uniform(0, 800, n)
        x1 = x0 + rng.uniform(1, 30, n)
        src, dst = ink._row_neighbours(cy, x0, x1, hh)
        got = np.zeros((n, n), dtype=bool)
        got[src, dst] = True
        assert (got == _dense_neighbours(cy, x0, x1, hh)).all(), trial
        assert len(set(zip(src.tolist(), dst.tolist()))) == src.size  # no pair twice


def test_unread_ink_coverage_of_all_rows_at_once_matches_row_by_row():
    import numpy as np

    from pagerouter.ocr.checks import _covered, _covered_rows

    rng = np.random.default_rng(3)
    for _ in range(100):
        def boxes_of(n, tall):
            x, y = rng.uniform(0, 500, n), rng.uniform(0, 800, n)
            return list(zip(x, y, x + rng.uniform(0, 300, n), y + rng.uniform(0, tall, n)))

        rows = boxes_of(int(rng.integers(0, 30)), 20)
        boxes = boxes_of(int(rng.integers(0, 40)), 120)
        boxes += [(r[0] + 1, r[1] - 3, r[2] - 1, r[3] + 3) for r in rows[:2]]  # edges on the grid points
        assert _covered_rows(rows, boxes) == [_covered(r, boxes) for r in rows]
