"""Lines the OCR reader detected but left out of its output flag the page (`ocr.unread_lines`).

The first tests go through the OCR route's block assembly with a fake line reader (no model):
a line read under the score cut, or a sentence inside a region kept as a figure, that no text
block covers fails `unread_lines` with its box, what was read and its score; the same line
covered by a block, a speck, noise and a chart's labels do not. The last test converts a scan
built for it (a photo with a white sentence on a dark band, pasted between paragraphs): the
old code returned it `ok` with the sentence gone.
"""

from __future__ import annotations

import numpy as np
import pymupdf
import pytest

from pagerouter.config.checks import ChecksConfig
from pagerouter.config.ocr import OcrConfig
from pagerouter.model import Block, TriageDecision
from pagerouter.ocr.lines import OcrLine
from pagerouter.ocr.regions import read_task_with_lines
from pagerouter.ocr.unread_lines import ReadLines, still_unread
from pagerouter.common.stages import LayoutResult, OcrTask, Region

SCALE = 2.0  # fake render: pixels per point


class FakeLineReader:
    """A line reader that hands out fixed lines, and the lines it 'read under its cut'."""

    name = "fake"
    version = "0"

    def __init__(self, kept, below=()):
        self.kept, self.below = kept, below

    def read_image_lines(self, image, script=None):
        return ReadLines([OcrLine(l.bbox, l.text, l.confidence) for l in self.kept],
                         [OcrLine(l.bbox, l.text, l.confidence) for l in self.below])


def _line(text, box_pt, conf=0.99):
    return OcrLine(tuple(v * SCALE for v in box_pt), text, conf)


def _read(kept, below=(), regions=()):
    h, w = int(842 * SCALE), int(595 * SCALE)
    task = OcrTask("fake.pdf", 1, 595, 842, TriageDecision(route="ocr"), np.full((h, w, 3), 255, np.uint8), SCALE, b"")
    return read_task_with_lines(task, LayoutResult(0, list(regions)), FakeLineReader(kept, below), OcrConfig(),
                                script="Latin")


BODY = [_line("The tenant may not sublet the premises.", (72, 120, 400, 134)),
        _line("Rent is due on the first day of the month.", (72, 140, 410, 154))]


def _check(reading):
    return next((c for c in reading.checks if c.name == "unread_lines"), None)


def test_a_line_read_under_the_score_cut_and_in_no_block_flags_the_page():
    lost = _line("Deposit 1,250 held by the landlord", (72, 180, 360, 194), conf=0.41)
    reading = _read(BODY, [lost])
    check = _check(reading)
    assert check is not None and not check.passed
    assert "Deposit 1,250 held by the landlord" in check.reason and "0.41" in check.reason
    assert check.regions == [(72.0, 180.0, 360.0, 194.0)]
    assert "Deposit" not in " ".join(b.text for b in reading.blocks)  # not output: its reading is not trusted


def test_a_below_cut_duplicate_of_a_kept_line_is_accounted_for():
    # the detector found the same line twice; the second box read worse
    dup = _line("The tenant may not sublet", (72, 121, 300, 133), conf=0.45)
    check = _check(_read(BODY, [dup]))
    assert check is not None and check.passed


@pytest.mark.parametrize("noise", [_line("Deposit held by landlord", (72, 180, 360, 194), conf=0.12),  # noise read
                                   _line(".,", (72, 180, 80, 194), conf=0.45),  # a speck
                                   _line("i l", (72, 180, 80, 194), conf=0.45),
                                   # a logo's lettering in the top band (real corpus: Arabic read as Latin)
                                   _line("stlslasT", (50, 30, 108, 48), conf=0.43)])
def test_noise_and_specks_under_the_cut_are_not_text(noise):
    assert _check(_read(BODY, [noise])) is None


def test_a_sentence_inside_a_figure_flags_but_chart_labels_do_not():
    fig = Region("figure", tuple(v * SCALE for v in (60, 200, 540, 460)), 0.9)
    sentence = _line("Keep this door closed at all times", (110, 300, 480, 330))
    labels = [_line("2019", (80, 440, 110, 452)), _line("2020", (300, 440, 330, 452))]
    flagged = _check(_read(BODY + [sentence] + labels, regions=[fig]))
    assert flagged is not None and not flagged.passed
    assert "Keep this door closed at all times" in flagged.reason
    # once a figure holds words, its other lines are text left out too
    assert sorted(flagged.regions) == [(80.0, 440.0, 110.0, 452.0), (110.0, 300.0, 480.0, 330.0),
                                       (300.0, 440.0, 330.0, 452.0)]
    assert _check(_read(BODY + labels, regions=[fig])) is None


def test_an_escalation_that_reads_the_line_clears_it_and_one_that_does_not_keeps_it():
    first = _check(_read(BODY, [_line("Deposit 1,250 held by the landlord", (72, 180, 360, 194), conf=0.41)]))
    cfg = ChecksConfig()
    reread = [Block(text="Deposit 1,250 held by the landlord", role="paragraph", bbox=(70, 178, 362, 196), page=1,
                    engine="vote", route="escalation", confidence=0.9)]
    assert still_unread([first], reread, cfg).passed
    kept = still_unread([first], [], cfg)
    assert not kept.passed and kept.regions == first.regions and "Deposit" in kept.reason
    assert still_unread([], [], cfg) is None


def _photo_scan(caption: str | None) -> bytes:
    """A scan (one picture, no text layer): four lines of body, a photo with `caption` in white
    on a dark band inside it, two more lines."""
    import cv2

    d = pymupdf.open()
    p = d.new_page(width=612, height=792)
    y = 80
    for t in ("The tenant may not sublet the premises without consent.", "Rent is due on the first day of every month.",
              "The deposit of 1,250 dollars is held by the landlord.", "Either party may end this lease with notice."):
        p.insert_text((72, y), t, fontsize=12, fontname="helv")
        y += 22
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:500, 0:900]
    shade = 90 + 80 * np.sin(xx / 90.0) * np.cos(yy / 70.0) + rng.normal(0, 12, (500, 900))
    rgb = np.stack([shade, shade * 0.8 + 30, shade * 0.6 + 60], -1).clip(0, 255).astype(np.uint8)
    p.insert_image(pymupdf.Rect(72, 200, 540, 460), stream=cv2.imencode(".png", rgb)[1].tobytes())
    if caption:
        p.draw_rect(pymupdf.Rect(100, 300, 500, 336), color=None, fill=(0.1, 0.1, 0.1))
        p.insert_text((112, 325), caption, fontsize=18, fontname="hebo", color=(1, 1, 1))
    y = 500
    for t in ("Repairs above 300 dollars need written approval.", "This agreement is governed by local law."):
        p.insert_text((72, y), t, fontsize=12, fontname="helv")
        y += 22
    pix = p.get_pixmap(dpi=200, colorspace=pymupdf.csRGB)
    out = pymupdf.open()
    q = out.new_page(width=612, height=792)
    q.insert_image(q.rect, stream=pix.tobytes("png"))
    return out.tobytes()


@pytest.mark.slow
def test_a_scan_whose_photo_holds_a_sentence_is_flagged_and_the_plain_photo_is_not():
    from pagerouter.config import PagerouterConfig
    from pagerouter.convert.converter import Converter

    with Converter(PagerouterConfig()) as conv:
        with_text = conv.convert(_photo_scan("Keep this door closed at all times"), name="photo.pdf").pages[0]
        plain = conv.convert(_photo_scan(None), name="plain.pdf").pages[0]
    assert with_text.route == "ocr" and plain.route == "ocr"
    out = " ".join(b.text for b in with_text.blocks)
    assert "Keep this door" not in out  # the reader still leaves the picture's text out of the body...
    assert with_text.status == "flagged" and "unread_lines" in with_text.flags  # ...but says so
    check = next(c for c in with_text.checks if c.name == "unread_lines" and not c.passed)
    assert "Keep this door closed at all times" in check.reason
    (x0, y0, x1, y1), = check.regions
    assert 95 <= x0 <= 115 and 295 <= y0 <= 320 and 400 <= x1 <= 505 and 310 <= y1 <= 340
    assert plain.status == "ok", plain.flags
    assert "The deposit of 1,250 dollars is held by the landlord." in " ".join(b.text for b in plain.blocks)


@pytest.mark.slow
def test_the_vlm_escalation_rejudges_the_lines_the_first_reading_left_out():
    """The page VLM re-reads a page flagged `unread_lines`: an answer that also leaves the photo's
    sentence out keeps the page flagged for it (before, the VLM tier dropped the first reading's
    check and the page could come out `ok`); an answer that reads it clears the check."""
    from pagerouter.config import PagerouterConfig
    from pagerouter.convert.converter import Converter
    from pagerouter.flow.engines import EngineSet
    from pagerouter.vlm.escalator_page import VlmPageEscalator
    from tests.vlm_fakes import ScriptedFakeVlmEngine, ScriptedOutput, front_matter

    body = ["The tenant may not sublet the premises without consent.", "Rent is due on the first day of every month.",
            "The deposit of 1,250 dollars is held by the landlord.", "Either party may end this lease with notice.",
            "Repairs above 300 dollars need written approval.", "This agreement is governed by local law."]
    sentence = "Keep this door closed at all times"
    cfg = PagerouterConfig.model_validate({"ocr": {"escalation": {"kind": "vlm"}}})
    scan = _photo_scan(sentence)

    def escalated(paragraphs: list[str]):
        fake = ScriptedFakeVlmEngine([ScriptedOutput(front_matter() + "\n\n".join(paragraphs))] * 8)
        with Converter(cfg) as conv:
            conv.engines = EngineSet(cfg.ocr, prebuilt={"escalation": VlmPageEscalator(cfg.ocr, engine=fake)})
            page = conv.convert(scan, name="photo.pdf").pages[0]
        assert {b.engine for b in page.blocks} == {"vlm_page"}, page.flags  # the VLM's answer was taken
        return page, [c for c in page.checks if c.name == "unread_lines"]

    skipped, checks = escalated(body)
    assert [c.passed for c in checks] == [False] and "unread_lines" in skipped.flags and skipped.status == "flagged"
    assert sentence in checks[0].reason
    read, checks = escalated(body[:3] + [sentence] + body[3:])
    assert checks and all(c.passed for c in checks) and "unread_lines" not in read.flags
