"""Triage: routes, scores and reasons on synthetic pages that stand for real failure modes, and
a sweep over the real corpus (../shared/corpus/real) that must triage every page."""

from __future__ import annotations

import collections
import time
from pathlib import Path

import numpy as np
import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config.triage import TriageConfig
from pagerouter.model import TriageDecision
from pagerouter.common.pagetext import extract_textdict
from pagerouter.triage import triage_page
from pagerouter.common.unicode_scripts import detect_script

from . import triage_fixtures as fx

CFG = TriageConfig()
REAL = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "real"


def triage(pdf: bytes, cfg: TriageConfig = CFG) -> TriageDecision:
    doc = pymupdf.open("pdf", pdf)
    page = doc[0]
    return triage_page(page, extract_textdict(page), cfg)


def reasons(d: TriageDecision) -> str:
    return " ".join(d.reasons)


# --- healthy layers in several scripts --------------------------------------------------


@pytest.mark.parametrize(
    "paragraphs,script",
    [
        ([fx.EN, fx.EN], "Latin"),
        ([fx.DE, fx.DE], "Latin"),
        ([fx.RU, fx.RU], "Cyrillic"),
        ([fx.ZH, fx.ZH], "Han"),
        ([fx.AR, fx.AR], "Arabic"),
    ],
    ids=["english", "german", "russian", "chinese", "arabic"],
)
def test_healthy_text_layers_in_many_scripts(paragraphs, script):
    d = triage(fx.text_pdf(paragraphs, title=None))
    assert d.route == "text_layer", reasons(d)
    assert d.script == script
    assert d.scores["plausible_word_share"] >= CFG.min_plausible_word_share
    assert d.scores["bad_char_share"] <= CFG.max_bad_char_share
    assert "healthy text layer" in reasons(d)


def test_short_healthy_page_is_rendered_and_still_text_layer():
    d = triage(fx.lines_pdf(["Minutes of the meeting", "Present: all members"]))
    assert d.route == "text_layer", reasons(d)
    assert "ink_share" in d.scores  # below the fast-path size, so the page was looked at
    assert d.scores["drawn_text_blobs"] < CFG.min_text_components


def test_text_drawn_as_outlines_goes_to_ocr():
    d = triage(fx.outlined_text_pdf())
    assert d.route == "ocr", reasons(d)
    assert "min_drawn_text_density" in reasons(d)


# --- layers that lie ----------------------------------------------------------------------


def test_glyph_id_tokens_go_to_ocr():
    lines = [" ".join(f"/{(i * 7 + j * 3) % 90 + 3}" for j in range(14)) for i in range(12)]
    d = triage(fx.lines_pdf(lines))
    assert d.route == "ocr"
    assert "bad_char_share" in reasons(d) and "glyph-id" in reasons(d)
    assert d.scores["bad_char_share"] > CFG.max_bad_char_share


def test_cid_markers_go_to_ocr():
    lines = ["".join(f"(cid:{(i * 5 + j) % 70 + 3})" for j in range(10)) for i in range(10)]
    d = triage(fx.lines_pdf(lines))
    assert d.route == "ocr"
    assert "(cid:N)" in reasons(d)


@pytest.mark.parametrize("how", ["pua", "fffd"])
def test_private_use_and_replacement_characters_go_to_ocr(how):
    d = triage(fx.broken_map_pdf(fx.wrap(fx.EN + " " + fx.EN), how))
    assert d.route == "ocr", reasons(d)
    if how == "pua":
        assert "private-use" in reasons(d) and "max_bad_char_share" in reasons(d)
    else:  # MuPDF ignores U+FFFD targets and falls back to glyph ids: cipher-like letters
        assert "not trustworthy" in reasons(d)


def test_font_without_tounicode_goes_to_ocr():
    """A Type0 Identity-H font with its ToUnicode stripped: MuPDF returns raw glyph ids as
    characters (control codes and letters shifted by the font's glyph order)."""
    d = triage(fx.broken_map_pdf(fx.wrap(fx.EN + " " + fx.EN), "strip"))
    assert d.route == "ocr", reasons(d)
    assert d.scores["unmapped_font_share"] > 0.9
    assert "not trustworthy" in reasons(d)
    # whichever measurement trips first, it is named with its threshold
    assert "max_bad_char_share" in reasons(d) or "max_letter_cross_entropy" in reasons(d)


def test_utf8_mojibake_goes_to_ocr():
    moji = fx.DE.encode("utf-8").decode("latin-1")  # Ã¼berprÃ¼fung
    d = triage(fx.lines_pdf(fx.wrap(moji + " " + moji)))
    assert d.route == "ocr", reasons(d)
    assert "max_mojibake_share" in reasons(d)


@pytest.mark.parametrize("k", [1, 3, 13])
def test_shifted_alphabet_goes_to_ocr(k):
    d = triage(fx.lines_pdf(fx.wrap(fx.shift_letters(fx.EN + " " + fx.EN, k))))
    assert d.route == "ocr", reasons(d)
    assert "max_letter_cross_entropy" in reasons(d) or "min_plausible_word_share" in reasons(d)


def test_white_text_on_blank_page_is_not_read():
    d = triage(fx.white_text_pdf())
    assert d.route in ("blank", "ocr")
    # the visibility check sees every span changes nothing on the render: all listed, none read
    assert " ".join(h.text for h in d.hidden_text).split() == (fx.EN + " " + fx.EN).split()
    assert all("the colour of the paper" in h.reason for h in d.hidden_text)
    # without it, the ink check still refuses the layer
    d = triage(fx.white_text_pdf(), CFG.model_copy(update={"check_visibility": False}))
    assert d.route in ("blank", "ocr")
    assert "max_inkless_text_share" in reasons(d)
    assert d.scores["inkless_text_share"] > 0.9


# --- scans ------------------------------------------------------------------------------------

SCAN_LINES = ["Invoice 2024-117", "Total due: 1,250.00 EUR", "Payment within 30 days.", "Thank you for your order."] * 4


def test_scan_without_text_goes_to_ocr():
    d = triage(fx.scan_pdf(SCAN_LINES))
    assert d.route == "ocr"
    assert "min_chars_for_text_layer" in reasons(d)
    assert d.scores["content_marks"] > CFG.blank_max_marks


PROOF_LINES = [
    "The committee reviewed the quarterly figures and agreed",
    "that the new routing policy reduced the cost of reading",
    "each page. Most documents in the archive were born digital,",
    "so their embedded text could be used directly. Scanned",
    "letters, however, needed optical character recognition,",
    "and a few files carried a hidden text layer that did not",
    "match the printed words at all. The board asked for a",
    "second review of the remaining boxes before the summer.",
] * 2


def _shift(s: str) -> str:
    return "".join(chr(ord(c) + 1) if c.isalpha() and c not in "zZ" else c for c in s)


def test_scan_with_a_right_hidden_layer_keeps_it_after_proof():
    d = triage(fx.scan_pdf(PROOF_LINES, hidden_text="\n".join(PROOF_LINES)))
    assert d.route == "text_layer" and d.hidden_layer and d.script == "Latin", reasons(d)
    assert "5 of 5 sampled lines agree" in reasons(d) and "proven to match the picture" in reasons(d)
    assert d.scores["hidden_layer_cer"] <= CFG.hidden_layer_max_cer


@pytest.mark.parametrize(
    "hidden",
    [
        # other words in the layer than on the picture
        [" ".join(reversed(ln.split())) for ln in PROOF_LINES],
        ["Quarterly shipping manifest for every container that left", "the harbour during the winter storms and",
         "the crew rosters of the vessels named in the ledger below"] * 5,
        # shifted letters that still pass as words here and there: caught by the letter check or the proof
        [_shift(ln) for ln in PROOF_LINES],
    ],
    ids=["reordered", "other_text", "shifted"],
)
def test_scan_with_a_wrong_hidden_layer_goes_to_ocr(hidden):
    d = triage(fx.scan_pdf(PROOF_LINES, hidden_text="\n".join(hidden)))
    assert d.route == "ocr" and not d.hidden_layer, reasons(d)
    assert "render mode 3" in reasons(d)
    assert "disagrees with the picture" in reasons(d) or "not plausible" in reasons(d)


def test_a_wrong_hidden_layer_is_disproven_by_the_sample():
    """Plausible English, but not what the picture shows: only the proof can tell."""
    other = [ln.replace("committee", "gardener").replace("page", "tree").replace("figures", "apples") for ln in PROOF_LINES]
    other = [" ".join(reversed(ln.split())) for ln in other]
    d = triage(fx.scan_pdf(PROOF_LINES, hidden_text="\n".join(other)))
    assert d.route == "ocr" and "disagrees with the picture" in reasons(d)
    assert "0 of 1 sampled line agrees" in reasons(d) and d.scores["hidden_layer_cer"] > CFG.hidden_layer_max_cer
    # one disagreeing line already refuses the layer (every sampled line must agree): the other
    # four are not read, so a lying layer costs one line's recognition before the page is OCR'd
    assert "the other 4 of the 5 sampled lines were not read" in reasons(d)


def test_an_unreadable_sample_goes_to_ocr():
    """Scribbles under a plausible layer (handwriting read as print): the recogniser reads nothing
    like it, so the layer is not proven."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    rng = np.random.default_rng(3)
    img = np.full((1100, 800), 255, np.uint8)
    for row in range(20):  # wavy strokes in rows, like cursive nobody can read
        y0 = 60 + row * 50
        xs = np.arange(40, 760)
        ys = (y0 + 8 * np.sin(xs / rng.uniform(3, 9)) + rng.normal(0, 2, xs.size)).astype(int)
        for dy in range(3):
            img[np.clip(ys + dy, 0, 1099), xs] = 20
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    page.insert_image(page.rect, stream=buf.getvalue())
    for i, ln in enumerate(PROOF_LINES):
        page.insert_text((60, 72 + 19 * i), ln, fontsize=12, render_mode=3)
    d = triage(doc.tobytes())
    assert d.route == "ocr" and "disagrees with the picture" in reasons(d), reasons(d)


def test_hidden_layer_proof_off_or_unreadable_script_keeps_ocr():
    pdf = fx.scan_pdf(PROOF_LINES, hidden_text="\n".join(PROOF_LINES))
    d = triage(pdf, TriageConfig(hidden_layer_proof=False))
    assert d.route == "ocr" and "hidden_layer_proof is off" in reasons(d)
    doc = pymupdf.open("pdf", pdf)
    from pagerouter.config.ocr import OcrConfig

    off = OcrConfig(enabled=False)
    d = triage_page(doc[0], extract_textdict(doc[0]), TriageConfig(hidden_layer_proof_without_ocr=False), off)
    assert d.route == "ocr" and "hidden_layer_proof_without_ocr is off" in reasons(d)
    # OCR disabled but proving allowed (the default): the proven layer beats needs_ocr
    assert triage_page(doc[0], extract_textdict(doc[0]), CFG, off).route == "text_layer"
    # a script the recogniser does not read: no proof, conservative route
    cyr = OcrConfig.model_validate({"scripts": {"table": {"Latin": {"tesseract_langs": "eng", "rapidocr": False}}}})
    d = triage_page(doc[0], extract_textdict(doc[0]), CFG, cyr)
    assert d.route == "ocr" and "rapidocr: false" in reasons(d)


def test_scan_with_invisible_wrong_layer_goes_to_ocr():
    hidden = "lorem ipsum dolor sit amet consectetur\nthis hidden layer does not match the picture at all"
    d = triage(fx.scan_pdf(SCAN_LINES, hidden_text=hidden))
    assert d.route == "ocr"
    assert "render mode 3" in reasons(d) and "max_invisible_text_share" in reasons(d)
    assert d.scores["invisible_text_share"] == 1.0


def test_scan_with_text_painted_under_the_image_goes_to_ocr():
    pdf = fx.text_under_scan_pdf(SCAN_LINES, [fx.EN[:90], fx.EN[90:180], fx.EN[180:270]])
    d = triage(pdf)
    assert d.route == "ocr", reasons(d)
    assert [h.text for h in d.hidden_text] == [fx.EN[:90], fx.EN[90:180], fx.EN[180:270]]
    # the paint-order check alone (visibility off) reaches the same route
    d = triage(pdf, CFG.model_copy(update={"check_visibility": False}))
    assert d.route == "ocr", reasons(d)
    assert "max_text_under_image_share" in reasons(d)


def test_scan_with_only_header_and_page_number_goes_to_ocr():
    d = triage(fx.scan_pdf(SCAN_LINES, header="ACME Corporation - Accounts Payable - Scanned 2024-03-01", page_no="Page 3"))
    assert d.scores["visible_chars"] >= CFG.min_chars_for_text_layer  # the stamp passes the text bar...
    assert d.route == "ocr", reasons(d)  # ...but the picture holds the content
    assert "scan_text_image_share" in reasons(d)


def test_blank_page():
    d = triage(fx.blank_pdf())
    assert d.route == "blank"
    assert "blank_max_marks" in reasons(d)
    assert d.scores["content_marks"] == 0


# A page showing one short line, a stamp or a signature is not blank, however little of its area
# is ink (0.2% for one line): losing it silently is the worst outcome. Emptiness that is not
# white (scanner grain and dust, tinted paper, a shadow at the edge) is still blank.


@pytest.mark.parametrize("dpi", [100, 150])
def test_scan_of_one_short_line_is_not_blank(dpi):
    d = triage(fx.one_line_scan_pdf(dpi))
    assert d.route == "ocr", reasons(d)
    assert d.scores["ink_share"] < 0.01  # an area share could not tell it from an empty page
    assert d.scores["content_marks"] > CFG.blank_max_marks
    assert "could be content" in reasons(d)


@pytest.mark.parametrize("frame", [True, False], ids=["framed", "bare"])
def test_small_stamp_near_a_corner_is_not_blank(frame):
    d = triage(fx.stamp_scan_pdf("PAID", frame=frame))
    assert d.route == "ocr", reasons(d)
    assert d.scores["largest_mark_pt"] >= CFG.blank_min_mark_pt or d.scores["content_marks"] > CFG.blank_max_marks


@pytest.mark.parametrize(
    "build",
    [
        lambda: fx.noisy_empty_scan_pdf(100, 0.05),
        lambda: fx.noisy_empty_scan_pdf(200, 0.08),
        lambda: fx.edge_shadow_scan_pdf(100),
        lambda: fx.edge_shadow_scan_pdf(150, width=0.15, noise=0.05),
        fx.grey_empty_scan_pdf,
    ],
    ids=["noisy-100dpi", "noisy-200dpi", "edge-shadow", "wide-edge-shadow", "uniform-grey"],
)
def test_empty_scans_with_noise_shadow_or_tone_are_blank(build):
    d = triage(build())
    assert d.route == "blank", reasons(d)
    assert d.scores["content_marks"] <= CFG.blank_max_marks
    assert d.scores["largest_mark_pt"] < CFG.blank_min_mark_pt


def test_blank_thresholds_decide():
    """The mark thresholds are what decides: allowing many marks makes the one-line scan blank."""
    loose = TriageConfig(blank_max_marks=1000, blank_min_mark_pt=1000, blank_max_text_rows=1000)
    assert triage(fx.one_line_scan_pdf(150), loose).route == "blank"
    # the rows of letters are a witness of their own: loose marks alone do not make it blank
    d = triage(fx.one_line_scan_pdf(150), TriageConfig(blank_max_marks=1000, blank_min_mark_pt=1000))
    assert d.route == "ocr" and d.scores["text_rows"] >= 1


# --- pictures -----------------------------------------------------------------------------------


def test_picture_holding_text_makes_page_mixed():
    d = triage(fx.page_with_picture_pdf(fx.text_picture_png()))
    assert d.route == "mixed", reasons(d)
    assert len(d.ocr_regions) == 1
    r = pymupdf.Rect(d.ocr_regions[0])
    assert (r & pymupdf.Rect(fx.PICTURE_RECT)).get_area() >= 0.9 * pymupdf.Rect(fx.PICTURE_RECT).get_area()
    assert "letter-sized blobs" in reasons(d)
    assert d.script == "Latin"


def test_mixed_regions_are_in_displayed_coordinates_on_rotated_pages():
    d = triage(fx.page_with_picture_pdf(fx.text_picture_png(), rotate=90))
    assert d.route == "mixed", reasons(d)
    doc = pymupdf.open("pdf", fx.page_with_picture_pdf(fx.text_picture_png(), rotate=90))
    page = doc[0]
    want = pymupdf.Rect(fx.PICTURE_RECT) * page.rotation_matrix
    got = pymupdf.Rect(d.ocr_regions[0])
    assert got in page.rect + (-1, -1, 1, 1)
    assert (got & want).get_area() >= 0.9 * want.get_area()


def test_photo_without_text_stays_text_layer():
    d = triage(fx.page_with_picture_pdf(fx.photo_png()))
    assert d.route == "text_layer", reasons(d)
    assert d.scores["sizeable_images"] == 1
    assert d.scores["text_pictures"] == 0
    assert "hold no text-like rows" in reasons(d)


# --- config and helpers ---------------------------------------------------------------------


def test_thresholds_are_config_and_decide():
    """Raising the bad-character bar lets the glyph-id page through: the threshold decides."""
    lines = [" ".join(f"/{(i * 7 + j * 3) % 90 + 3}" for j in range(14)) for i in range(12)]
    loose = TriageConfig(max_bad_char_share=1.0, min_plausible_word_share=0.0)
    assert triage(fx.lines_pdf(lines), loose).route != "ocr" or "bad_char_share" not in reasons(
        triage(fx.lines_pdf(lines), loose)
    )
    with pytest.raises(ValueError):
        TriageConfig(no_such_threshold=1)
    for name, field in TriageConfig.model_fields.items():
        assert field.description, f"{name} has no description"


@pytest.mark.parametrize(
    "text,script",
    [
        (fx.EN, "Latin"),
        (fx.DE, "Latin"),
        (fx.RU, "Cyrillic"),
        (fx.ZH, "Han"),
        (fx.AR, "Arabic"),
        ("Η επιτροπή εξέτασε τα στοιχεία", "Greek"),
        ("समिति ने तिमाही आंकड़ों की समीक्षा की", "Devanagari"),
        ("委員会は四半期の数字を見直しました", "Japanese"),
        ("위원회는 분기별 수치를 검토했습니다", "Hangul"),
        ("12345 !!! ---", None),
    ],
)
def test_detect_script(text, script):
    assert detect_script(text) == script


# --- the real corpus ---------------------------------------------------------------------------


@pytest.mark.slow
def test_real_corpus_triages_every_page():
    if not REAL.is_dir():
        pytest.fail(f"real corpus not found at {REAL} (CI lays shared/ beside the checkout)")
    routes: collections.Counter[str] = collections.Counter()
    by_file: dict[str, list[str]] = {}
    t_total, n = 0.0, 0
    for pdf in sorted(REAL.glob("*.pdf")):
        doc = pymupdf.open(pdf)
        for page in doc:
            td = extract_textdict(page)
            t = time.perf_counter()
            d = triage_page(page, td, CFG)
            t_total += time.perf_counter() - t
            n += 1
            assert d.reasons, f"{pdf.name} p{page.number + 1}: no reasons"
            routes[d.route] += 1
            by_file.setdefault(pdf.name, []).append(d.route)
    print(f"\nreal corpus: {n} pages, routes {dict(routes)}, {1000 * t_total / max(n, 1):.1f} ms/page mean")
    # hard cases whose route is known from looking at them
    assert by_file["handwriting_bad_ocr.pdf"] == ["ocr", "ocr"]  # hidden OCR layer of handwriting; a bare scan
    assert by_file["horribleocr.pdf"] == ["ocr"]  # OCR text painted under the scan
    assert by_file["some_ocr1.pdf"] == ["ocr"]
    assert by_file["edgar_image.pdf"] == ["ocr"]
    assert by_file["edgar.pdf"] == ["text_layer"]
    assert by_file["edgar-rotated90.pdf"] == ["text_layer"]
    assert by_file["olmo-page-1.pdf"] == ["ocr"]  # letters shifted by one: 'Opnbddchmfr'
    assert by_file["dolma-page-1.pdf"] == ["ocr"]
    assert routes["text_layer"] > 0.75 * n


def test_a_proven_hidden_layer_that_lacks_most_of_the_page_goes_to_ocr():
    """The sample proves the layer's own lines; text the scan shows outside the layer must not be lost."""
    lines = (PROOF_LINES * 3)[:36]
    doc = pymupdf.open()
    synth.add_scanned_page(doc, lines, hidden_text="\n".join(lines[:8]), noise=0.02, dpi=150)
    d = triage_page(doc[0], extract_textdict(doc[0]), CFG)
    assert d.route == "ocr" and not d.hidden_layer, reasons(d)
    assert "lie outside it" in reasons(d)


def test_an_all_caps_clause_is_not_judged_on_its_few_lower_case_words():
    caps = ("THE SOFTWARE IS PROVIDED AS IS, WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT "
            "LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT "
            "(see Exhibit B, p. 4; approx. 3 mm; Fig. 2, cf. Annex). ") * 3
    d = triage(fx.lines_pdf(fx.wrap(caps, 90)))
    assert d.route == "text_layer", reasons(d)


def test_a_hidden_layer_with_wrong_amounts_is_not_proven():
    """One wrong digit per line is a small CER but a wrong figure: such a layer is not trusted."""
    right = [f"Invoice {4711 + i} for shipment {20240 + 7 * i} totals {125 + 3 * i}.50 EUR net" for i in range(8)]
    wrong = [ln.replace(str(4711 + i), str(4711 + i + 1)) for i, ln in enumerate(right)]
    doc = pymupdf.open()
    synth.add_scanned_page(doc, right, hidden_text="\n".join(wrong), noise=0.0, dpi=150)
    d = triage_page(doc[0], extract_textdict(doc[0]), CFG)
    assert d.route == "ocr" and not d.hidden_layer, reasons(d)
    # the same scan with the right layer is proven
    doc = pymupdf.open()
    synth.add_scanned_page(doc, right, hidden_text="\n".join(right), noise=0.0, dpi=150)
    d = triage_page(doc[0], extract_textdict(doc[0]), CFG)
    assert d.route == "text_layer" and d.hidden_layer, reasons(d)
