"""Checks that flag a reading: loops and drift are flagged, ordinary pages in any script are not."""

from __future__ import annotations

import random

import numpy as np
import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config.checks import ChecksConfig
from pagerouter.model import Block, TriageDecision
from pagerouter.ocr import text_stats as ts
from pagerouter.ocr.checks import check_reading, check_text
from pagerouter.common.stages import OcrTask, Reading

CFG = ChecksConfig()

ORDINARY = {
    "Latin": synth.LOREM + " " + "Routing each page to the cheapest reader that reads it well keeps costs low.",
    "German": "Der Ausschuss prüfte die Quartalszahlen und stellte fest, dass die neue Richtlinie die Kosten für "
    "das Lesen jeder Seite senkte. Größere Änderungen am Archiv folgen im nächsten Jahr; die Übersicht liegt bei.",
    "Cyrillic": "Комитет рассмотрел квартальные показатели и согласился, что новая политика маршрутизации снизила "
    "стоимость чтения каждой страницы. Большинство документов в архиве были созданы в цифровом виде.",
    "Han": "委员会审查了季度数据，并同意新的路由策略降低了阅读每一页的成本。大多数文件是电子原生的，"
    "因此可以直接使用其中嵌入的文本。扫描的信件则需要光学字符识别。",
    "Arabic": "راجعت اللجنة الأرقام الفصلية واتفقت على أن سياسة التوجيه الجديدة خفضت تكلفة قراءة كل صفحة. "
    "معظم الوثائق في الأرشيف كانت رقمية منذ البداية، لذلك أمكن استخدام نصها مباشرة.",
}


def failed(results):
    return {r.name for r in results if not r.passed}


def run(text, *, ink=0.05, script=None, confidences=(0.95,)):
    return check_text(text, confidences=list(confidences), ink=ink, expected_script=script, cfg=CFG)


@pytest.mark.parametrize("script", sorted(ORDINARY))
def test_ordinary_text_in_any_script_passes(script):
    expected = None if script == "German" else script
    results = run(ORDINARY[script], script=expected)
    assert failed(results) == set(), [r.reason for r in results if not r.passed]
    # every result carries its measurement and, where it decides, the configured threshold
    assert all(r.reason for r in results)


def test_repetition_loops_are_flagged_anywhere_in_the_text():
    base = synth.LOREM
    sentence = "The total amount due is shown on the next page of this invoice."
    assert "repetition_phrase" in failed(run(base + " " + " ".join([sentence] * 8) + " " + base))
    assert "repetition_char" in failed(run(base + " " + "a" * 80))
    assert "repetition_token" in failed(run(base + " " + " ".join(["total"] * 20)))
    # a line repeated many times, not back to back
    lines = [f"Item {i} was delivered" for i in range(3)]
    looped = "\n".join(lines + ["Please sign the delivery note here"] * 12)
    assert "repetition_line" in failed(run(looped))
    # a CJK loop without spaces is caught through per-character tokens
    assert failed(run(ORDINARY["Han"] + "我们今天去公园玩。" * 10)) & {"repetition_phrase", "drift_trigrams"}


def test_low_variety_drift_is_flagged():
    # A reader drifting around a few sentences in shifting order: no back-to-back loop,
    # but few distinct 3-grams, very compressible, and far longer than the page's ink allows.
    sentences = [
        "the value of the account is reported in the table below",
        "the value of the table is reported in the account below",
        "the account below is reported in the value of the table",
        "the table of the value is reported below the account",
    ]
    rng = random.Random(7)
    out, prev = [], None
    for _ in range(80):
        s = rng.choice([x for x in sentences if x != prev])
        out.append(s)
        prev = s
    drift = ". ".join(out)
    assert ts.tandem_repeat(ts.tokens(drift), 9, 12)[1] <= 2  # genuinely not a simple loop
    flags = failed(run(drift, ink=0.01))
    assert {"drift_trigrams", "drift_compression", "length_vs_ink"} <= flags
    assert not flags & {"repetition_phrase", "repetition_token"}


def test_language_plausibility_flags_foreign_script_and_garbage():
    polluted = synth.LOREM.replace("the ", "的 ", 4).replace("and", "了")
    results = run(polluted)
    assert "script_foreign" in failed(results)
    assert "Han" in next(r.reason for r in results if r.name == "script_foreign")
    garbage = " ".join(["~^ l1|I;: ¤§¶ ©®™ fr0m }{ 8@#x ¶¶ ©© ;l,. q§ ¦¨ x¬y"] * 3) + " Jh ~~ ¤1"
    assert failed(run(garbage)) & {"wordlike_share", "symbol_share"}
    # a Latin reading of a page triage found Cyrillic is inconsistent
    assert "script_expected" in failed(run(synth.LOREM, script="Cyrillic"))


def test_confidence_empty_and_blank():
    low = run(synth.LOREM, confidences=[0.5, 0.6])
    assert "low_confidence" in failed(low)
    assert next(r for r in low if r.name == "low_confidence").threshold == CFG.min_mean_confidence
    assert "empty_output" in failed(run("", ink=0.05))
    assert "empty_output" in failed(run("ab", ink=0.05))
    blank = run("", ink=0.0)
    assert failed(blank) == set() and any(r.name == "blank_page_text" for r in blank)
    assert "blank_page_text" in failed(run("Thank you for watching, please subscribe", ink=0.0))


def _task(ink: float = 0.05, script: str | None = None) -> OcrTask:
    doc = pymupdf.open()
    synth.add_blank_page(doc)
    return OcrTask(
        source="t.pdf", number=1, width=595, height=842,
        decision=TriageDecision(route="ocr", script=script), image=np.zeros((10, 10, 3), np.uint8),
        scale=1.0, page_bytes=doc.tobytes(), ink=ink,
    )


def _block(text, role="paragraph", order=0, conf=0.95, cells=None):
    return Block(text=text, role=role, bbox=(50, 50 + 100 * order, 500, 140 + 100 * order), page=1,
                 engine="rapidocr", route="ocr", confidence=conf, order=order, cells=cells)


def test_check_reading_per_block_and_tables():
    good = _block(synth.LOREM, order=0)
    garbage = _block(" ".join(["~^ l1|I;: ¤§¶ ©®™ fr0m }{ 8@#x ¶¶ ©© ;l,. q§ ¦¨ x¬y"] * 6), order=1)
    more = [_block(synth.LOREM, order=2), _block(synth.LOREM, order=3)]
    results = check_reading(_task(), Reading(blocks=[good, garbage, *more]), CFG)
    block_fails = [r for r in results if r.name.startswith("block_") and not r.passed]
    assert block_fails and all("block 1" in r.reason for r in block_fails)

    table_ok = _block("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |", role="table", order=3)
    table_bad = _block("| a | b | c |\n|---|---|---|\n| 1 | 2 |\n| 3 |\n| 4 | 5 | 6 | 7 |", role="table", order=4)
    ok = check_reading(_task(), Reading(blocks=[good, table_ok]), CFG)
    assert "table_rows" not in failed(ok)
    bad = check_reading(_task(), Reading(blocks=[good, table_bad]), CFG)
    assert "table_rows" in failed(bad)
    cells_bad = _block("x", role="table", order=5, cells=[["a", "b"], ["1"], ["2"], ["3", "4", "5"]])
    assert "table_rows" in failed(check_reading(_task(), Reading(blocks=[good, cells_bad]), CFG))


def test_check_reading_figure_only_page_and_ink_fallback():
    fig = Block(text="", role="figure", bbox=(0, 0, 500, 500), page=1, engine="rapidocr", route="ocr", confidence=0.9)
    results = check_reading(_task(ink=0.2), Reading(blocks=[fig]), CFG)
    assert "empty_output" not in failed(results)
    assert "empty_output" in failed(check_reading(_task(ink=0.2), Reading(blocks=[]), CFG))
    # ink not filled in by triage: measured from the page bytes (a blank page here), so text is hallucinated
    results = check_reading(_task(ink=0.0), Reading(blocks=[_block("Thanks for reading this page today")]), CFG)
    assert "blank_page_text" in failed(results)


def test_real_text_layers_are_not_flagged_as_loops():
    """Born-digital pages (tables, schematics, references) stand for ordinary content."""
    from pathlib import Path

    real = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
    if not real.is_dir():
        pytest.fail(f"real corpus not found at {real} (CI lays shared/ beside the checkout)")
    pages = flagged = 0
    for name in ["instructions_and_schematics.pdf", "not_parsing2.pdf", "lots_of_sci_tables.pdf", "overrun_on_pg8.pdf"]:
        with pymupdf.open(real / name) as doc:
            for page in list(doc)[:12]:
                text = page.get_text()
                if ts.alnum_count(text) < 50:
                    continue
                pages += 1
                res = [r for r in run(text, ink=0.1) if r.name != "length_vs_ink"]
                flagged += bool(failed(res))
    assert pages >= 20 and flagged == 0
