"""Triage's character models on text and on PDF pages: shifted and substituted letter maps in
every modeled script go to OCR with a reason naming the script; healthy text in the same
scripts stays on the text layer."""

from __future__ import annotations

import pytest

from tests import triage_fixtures as fx
from tests.test_triage import CFG, reasons, triage


# --- character models: shifted and substituted letter maps in every modeled script ----------

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

# script -> (healthy text, shifted garbage, substituted garbage); the garbage is built from
# the same healthy text (a font map off by a constant, or letters swapped consistently)
SCRIPT_CASES = {
    "Latin": (fx.EN_PROSE, fx.shift_letters(fx.EN_PROSE, 3), fx.substitute(fx.EN_PROSE, "tnhdeaoi")),
    "Latin-de": (fx.DE, fx.shift_letters(fx.DE, 3), fx.substitute(fx.DE, "tnhdeaoi")),
    "Latin-pl": (fx.PL, fx.shift_letters(fx.PL, 3), fx.substitute(fx.PL, "tnsrlcdm")),
    "Cyrillic": (fx.RU, fx.shift_script(fx.RU, 1, 0x430, 0x44E), fx.substitute(fx.RU, "тнаоср")),
    "Greek": (fx.EL, fx.shift_script(fx.EL, 1, 0x3B1, 0x3C8), fx.substitute(fx.EL, "τπνσαο")),
    "Arabic": (fx.AR, fx.shift_script(fx.AR, 2, 0x621, 0x648), fx.substitute(fx.AR, "لعرقتفنص")),
    "Hebrew": (fx.HE, fx.shift_script(fx.HE, 1, 0x5D0, 0x5E9), fx.substitute(fx.HE, "וסהצרג")),
    "Devanagari": (fx.HI, fx.shift_script(fx.HI, 1, 0x900, 0x97E), fx.substitute(fx.HI, "कवरसतन")),
    "Thai": (fx.TH, fx.shift_script(fx.TH, 1, 0xE01, 0xE5A), fx.substitute(fx.TH, "กขนมรว")),
    "Han": (fx.ZH + fx.ZH_TW, fx.shift_script(fx.ZH + fx.ZH_TW, 1, 0x4E00, 0x9FFE), fx.shift_script(fx.ZH + fx.ZH_TW, 7, 0x4E00, 0x9FF0)),
}


def _text_failures(text: str) -> list[str]:
    from pagerouter.triage.words import measure_text, quality_failures

    q = measure_text(
        text,
        max_words=CFG.max_words_checked,
        max_consonant_run=CFG.max_consonant_run,
        max_case_switches=CFG.max_case_switches,
        min_char_model_letters=CFG.min_letters_for_char_model,
    )
    return quality_failures(q, 0.0, CFG)


@pytest.mark.parametrize("case", sorted(SCRIPT_CASES))
def test_char_model_passes_healthy_text(case):
    script = case.split("-")[0]
    healthy, _, _ = SCRIPT_CASES[case]
    from pagerouter.triage.words import measure_text

    q = measure_text(healthy, max_words=400, max_consonant_run=6, max_case_switches=1, min_char_model_letters=100)
    assert q.char_scores[script].modeled and q.char_scores[script].scored >= 100
    assert _text_failures(healthy) == []


@pytest.mark.parametrize("case", sorted(SCRIPT_CASES))
@pytest.mark.parametrize("how", ["shift", "substitution"])
def test_char_model_flags_shifted_and_substituted_text(case, how):
    script = case.split("-")[0]
    _, shifted, substituted = SCRIPT_CASES[case]
    failures = _text_failures(shifted if how == "shift" else substituted)
    assert any(f.startswith(f"{script} letters") for f in failures), failures


def test_issue_example_consonant_swap_is_the_substitution_built_here():
    assert fx.substitute("The committee reviewed", "tnhdeaoi") == "Nda cimmonnaa ravoawah"


def test_script_without_model_is_named_and_not_flagged():
    text = " ".join([fx.KO] * 3)
    d = triage(fx.lines_pdf([text[i : i + 40] for i in range(0, len(text), 40)], fontname="korea"))
    assert d.route == "text_layer", reasons(d)
    assert "no character model for Hangul" in reasons(d)


def _script_pdf(text: str, script: str) -> bytes:
    if script == "Han":
        lines = [text[i : i + 36] for i in range(0, len(text), 36)]
        return fx.lines_pdf(lines, fontname="china-s")
    if script == "Latin":
        return fx.lines_pdf(fx.wrap(text, 90))
    return fx.lines_pdf(fx.wrap(text, 80), fontname="dejavu", fontfile=DEJAVU)


@pytest.mark.parametrize("script", ["Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Han"])
def test_pdf_pages_with_garbage_layers_go_to_ocr_naming_the_script(script):
    healthy, shifted, substituted = SCRIPT_CASES[script]
    # twice the text, so the page is above the fast-path size like a real page
    d = triage(_script_pdf(healthy + " " + healthy, script))
    assert d.route == "text_layer", reasons(d)
    assert f"char_model_bits.{script}" in d.scores
    for garbage in (shifted, substituted):
        d = triage(_script_pdf(garbage + " " + garbage, script))
        assert d.route == "ocr", reasons(d)
        assert f"{script} letters" in reasons(d)


def test_hebrew_prose_from_a_small_vocabulary_stays_on_the_text_layer():
    """Real Hebrew words in a repetitive order (a form, a generated page) have a weak letter context
    under the small Hebrew model (about -1.0 bits/letter): still healthy, unlike a substituted map
    (-1.6 and below, and too many bits per letter)."""
    import random

    bank = "נמל עמוק מדד את הר ליד מגדל רחוק וגם חקר חווה ישן צייר ספר בנה נהר רחב גדול ראה עיר חדש גשר שדה סגר ים שקט בית".split()
    rng = random.Random(1)
    text = " ".join(rng.choice(bank) for _ in range(120))
    d = triage(_script_pdf(text, "Hebrew"))
    assert d.route == "text_layer", reasons(d)


def test_normalised_words_fast_path_matches_the_per_character_reading():
    """normalise_words reads marks-free text with a regex and ASCII Latin tokens without the
    per-character path; on mixed scripts, marks, digits, underscores, ligatures and case it must
    give exactly the words the per-character definition gives."""
    import random

    from pagerouter.triage import char_model as cm

    def by_character(text: str, script: str) -> list[str]:
        words = []
        for tok in cm._tokens(text):
            if cm._prose_token(tok, script):
                w = "".join(cm._norm_char(c, script) for c in tok)
                if len(w) >= 2:
                    words.append(w)
        return words

    rng = random.Random(7)
    pool = "abcXYZéÉñßΑβγДжзعربיתहिंदीไทย\u0301\u0308\u064e123_-–’“ǉǄﬁＡ    "
    texts = ["The Quick brown FOX, iPhone ADDR10 naïve café ﬁle", "Ярлык ǉубовь and Ωmega"]
    texts += ["".join(rng.choice(pool) for _ in range(rng.randint(1, 60))) for _ in range(2000)]
    for text in texts:
        for script in cm._NGRAM_SCRIPTS:
            assert cm.normalise_words(text, script) == by_character(text, script), (script, text)
    assert cm.normalise_words("The Quick brown FOX iPhone x", "Latin") == ["the", "quick", "brown"]
