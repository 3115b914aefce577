"""Issue 34: a hidden layer is proven line by line only where that is cheaper than OCR of the
page (`triage/proof_cost.py`), and the proof is given up midway when the lines that disagree
so far make the rest dearer than OCR. Pages made fresh (`lost_cases.layer_cost_case`, a lying
layer built here), read through the real Converter and judged against their truth by CER.

On the code before the rule: the 80-short-line page was proven line by line (96 crops) and
kept `text_layer`; the one-word-a-line layer was read crop by crop until a word crop caught its
neighbours' letters and only then OCR'd; the many-lies layer was read until the replaceable
lines ran out; no page said what either way would cost."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pymupdf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import lost_cases as lc  # noqa: E402
import lost_judge as lj  # noqa: E402

from pagerouter.config import PagerouterConfig  # noqa: E402
from pagerouter.config.output import OutputConfig  # noqa: E402
from pagerouter.convert.converter import Converter  # noqa: E402
from pagerouter.render.output import page_markdown  # noqa: E402

CFG = PagerouterConfig()


@pytest.fixture(scope="module")
def conv():
    with Converter(CFG) as c:
        yield c


def read(conv, c: lc.Case):
    (page,) = conv.convert(c.pdf, name=f"{c.name}.pdf").pages
    md = page_markdown(page, OutputConfig(page_markers=False))
    return page, md, lj.judge(c.pages[0], md)


def ocrd(conv, c: lc.Case, why: str):
    """The page read, after asserting that triage sent it to OCR for `why`."""
    page, md, verdict = read(conv, c)
    assert page.route == "ocr", page.triage.reasons
    assert why in page.triage.reasons[0], page.triage.reasons
    return page, md, verdict


# --- the estimate itself -------------------------------------------------------------------------
def test_words_of_one_row_are_one_detector_row_and_columns_are_not():
    from pagerouter.triage import proof_cost as pc

    h = 11.0
    words = [(60 + 45 * k, 100, 60 + 45 * k + 38, 100 + h) for k in range(8)]  # 7 pt gaps
    assert len(pc.rows(words)) == 1
    columns = [(60, 100, 100, 100 + h), (300, 100, 340, 100 + h)]  # 200 pt apart: two boxes
    assert len(pc.rows(columns)) == 2
    lines = [(60, 100 + 20 * k, 500, 100 + 20 * k + h) for k in range(5)]
    assert len(pc.rows(lines)) == 5


def test_short_crops_cost_the_recognisers_least_width():
    from pagerouter.triage import proof_cost as pc

    # a crop narrower than 320 px at 48 px high costs what a 320 px one does
    assert pc.rec_ms([[1.0] * 6]) == pytest.approx(pc.rec_ms([[pc.REC_MIN_RATIO] * 6]))
    assert pc.rec_ms([[20.0] * 6]) > pc.rec_ms([[10.0] * 6])


def test_the_chance_of_failing_grows_with_the_lines_that_disagree():
    from pagerouter.triage import proof_cost as pc

    # 20 lines, at most 4 may be replaced: one of one read disagreeing is no verdict yet; five
    # of ten is
    assert pc.fail_chance(0, 10, 10, 4) < 0.05
    assert pc.fail_chance(1, 1, 19, 4) < 0.5
    assert pc.fail_chance(5, 10, 10, 4) == 1.0
    assert pc.fail_chance(3, 6, 14, 4) > 0.7
    assert pc.fail_chance(1, 19, 1, 4) == 0.0


# --- through the Converter -----------------------------------------------------------------------
def _cost_case(v: int) -> lc.Case:
    return lc.layer_cost_case(random.Random(f"cost34-{v}"), v)


@pytest.mark.slow
@pytest.mark.parametrize("v", [0, 1, 2, 3])  # 0, 2: 80 short lines; 1, 3: one word a line
def test_a_layer_dearer_to_prove_than_to_ocr_is_ocrd_at_once(conv, v):
    page, md, verdict = ocrd(conv, _cost_case(v), "cheaper way to read it")
    s = page.triage.scores
    assert s["hidden_layer_ocr_est_ms"] < s["hidden_layer_proof_est_ms"], s
    assert "hidden_layer_sampled_lines" not in s  # not one line was cropped and read for a proof
    assert verdict.cer < 0.03, (verdict, md[:400])


@pytest.mark.slow
@pytest.mark.parametrize("v", [0, 3, 5])  # the generated 14-20-line layers, lying and true
def test_a_page_of_long_lines_keeps_its_proof(conv, v):
    c = lc.BUILDERS["layer_lie"](random.Random(f"cost34-layer_lie-{v}"), v)
    page, md, verdict = read(conv, c)
    s = page.triage.scores
    assert page.route == "text_layer" and page.triage.hidden_layer, page.triage.reasons
    assert s["hidden_layer_proof_est_ms"] < s["hidden_layer_ocr_est_ms"], s
    assert "the proof was chosen as the cheaper way" in page.triage.reasons[0]
    for lie in c.pages[0].forbidden:
        assert lie not in md
    assert not verdict.wrong and verdict.cer < 0.03, verdict


_NEGATE = (("may", "may not"), ("is", "is not"), ("will", "will not"))


def _many_lies(seed: int) -> lc.Case:
    """A scan of 24 clause lines whose hidden layer is an older revision that lacks the "not"
    of every other line (12 of 24: far more than the fifth that can be read from the picture)."""
    rng = random.Random(f"lies34-{seed}")
    words = lc.Words(rng)
    doc = pymupdf.open()
    page = doc.new_page(width=lc.A4[0], height=lc.A4[1])
    shown, texts = [], []
    for k in range(24):
        head = " ".join(words.sentence().rstrip(".").split()[:4])
        modal, neg = _NEGATE[k % 3]
        tail = " ".join(words.sentence().rstrip(".").split()[-3:])
        picture = f"{head} {neg if k % 2 == 1 else modal} {tail}"
        layer = f"{head} {modal} {tail}"
        y = 70 + 30 * k
        page.insert_text((60, y), picture, fontname="helv", fontsize=12)
        shown.append(picture)
        texts.append(((60, y), layer, "helv", 12.0))
    pdf = lc._scan_with_layer(lc._pdf(doc), texts, seed=seed)
    forbidden = [t[1] for k, t in enumerate(texts) if k % 2 == 1]
    return lc.Case(f"many_lies-{seed}", "layer_cost", pdf, [lc.PageTruth("\n".join(shown), forbidden)])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_a_layer_that_keeps_disagreeing_is_given_up_for_ocr_midway(conv, seed):
    c = _many_lies(seed)
    page, md, verdict = ocrd(conv, c, "given up for OCR midway")
    s = page.triage.scores
    assert 0 < s["hidden_layer_proof_abandoned_after_lines"] < 24, s
    for lie in c.pages[0].forbidden:
        assert lie not in md
    assert verdict.cer < 0.03, (verdict, md[:400])
