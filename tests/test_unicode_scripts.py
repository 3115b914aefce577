"""The one script helper: character classes and the one dominant-script decision that triage
and the OCR route share (one Japanese rule, one name for Japanese pages)."""

from __future__ import annotations

import pytest

from pagerouter.config.ocr import ScriptConfig
from pagerouter.ocr.script_options import options_for, reading_script
from pagerouter.common.unicode_scripts import (
    JAPANESE,
    char_script,
    detect_script,
    dominant_script,
    engine_script_counts,
    letter_script,
    letter_script_counts,
    script_counts,
)

JA = "委員会は四半期の数字を見直しました"  # 9 Han, 8 kana
ZH_WITH_A_KANA = "委员会审查了季度数字并同意新的路由政策降低了成本の"  # 1 kana in 26


def test_character_classes():
    assert [char_script(c) for c in "aЖ中か5 ,"] == ["Latin", "Cyrillic", "Han", "Kana", "Common", "Common", "Common"]
    assert char_script("Ａ") == "Fullwidth" and char_script("，") == "Fullwidth" and char_script("、") == "Fullwidth"
    assert char_script("€") == "Common" and char_script("\u2603") == "Common"
    assert script_counts("ＡＢ") == {"Latin": 2}  # by block: full-width Latin letters are Latin
    assert engine_script_counts("ＡＢ, ab") == {"Fullwidth": 2, "Latin": 2}  # engines: their own class
    # letters only (the OCR checks and vote): a block's digits are no letters, unlisted scripts are Other
    assert script_counts("٣ab") == {"Arabic": 1, "Latin": 2}
    assert letter_script("٣") is None and letter_script("ሀ") == "Other"
    assert letter_script_counts("٣abሀ") == {"Latin": 2, "Other": 1}


def test_one_japanese_rule_and_one_name():
    assert dominant_script(script_counts(JA)).script == JAPANESE
    assert dominant_script(script_counts(JA)).share == 1.0
    assert dominant_script({"Kana": 5}).script == JAPANESE  # kana alone is Japanese too
    # a few kana in Chinese text (< 15% of kana + Han) do not make it Japanese, by either route
    assert detect_script(ZH_WITH_A_KANA) == "Han"
    assert reading_script(ZH_WITH_A_KANA, ScriptConfig()).script == "Han"
    # kana + Han must hold their own against the other scripts
    assert dominant_script({"Latin": 30, "Han": 10, "Kana": 10}).script == "Latin"
    assert dominant_script({"Latin": 20, "Han": 10, "Kana": 10}).script == JAPANESE


@pytest.mark.parametrize("counts", [{"Kana": 3}, {"Kana": 9, "Han": 1}, {"Kana": 4, "Latin": 4}, {"Kana": 1, "Han": 2}])
def test_kana_is_never_a_page_script(counts):
    assert dominant_script(counts).script != "Kana"


def test_thresholds_are_parameters():
    counts = {"Latin": 12, "Cyrillic": 8}
    assert dominant_script(counts).script == "Latin"  # triage's defaults: any letter, any share
    low = dominant_script(counts, min_letters=21)
    assert (low.script, low.letters, low.reason) == (None, 20, "20 letters < min_letters 21")
    mixed = dominant_script(counts, min_share=0.7)
    assert (mixed.script, mixed.share) == (None, 0.6) and "no script dominates (Latin 0.60 < 0.7)" == mixed.reason
    ok = dominant_script(counts, min_letters=20, min_share=0.6)
    assert (ok.script, ok.reason) == ("Latin", "Latin: 0.60 of 20 letters")
    assert dominant_script({}).script is None and detect_script("12345 !!! ---") is None


def test_ocr_route_uses_the_config_thresholds_and_finds_the_japanese_options():
    cfg = ScriptConfig()
    short = reading_script("Short text", cfg)  # 9 letters < 20
    assert short.script is None and short.letters == 9
    guess = reading_script(JA * 2, cfg)
    assert guess.script == JAPANESE
    assert options_for(guess.script, cfg) is cfg.table[JAPANESE]
