"""The VLM retry ladder and its output detectors, against a scripted fake engine and a fake clock."""

from __future__ import annotations

import math
import re

import pytest
from pydantic import ValidationError

from pagerouter.config.checks import ChecksConfig
from pagerouter.config.vlm import LadderConfig, VlmTierConfig
from pagerouter.model import CheckResult
from pagerouter.vlm.base import Generation, VlmEngine
from pagerouter.vlm.detectors import failed_reasons, judge_output
from pagerouter.vlm.ladder import Judged, run_ladder
from tests import vlm_fakes as vf

TIER = VlmTierConfig(max_new_tokens=600)
CHECKS = ChecksConfig()
INK = 0.05  # a normal printed page
FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def make_judge(ink: float = INK, tier: VlmTierConfig = TIER):
    """A tiny stand-in for the page profile: front matter -> rotation; body -> detectors."""

    def judge(gen: Generation, rotation: int) -> Judged:
        m = FRONT.match(gen.text)
        body = gen.text[m.end():] if m else gen.text
        checks = judge_output(gen, body, ink=ink, expected_script="Latin", tier=tier, checks=CHECKS)
        if m is None:
            checks.append(CheckResult(name="vlm_parse", passed=False, reason="no YAML front matter"))
            return Judged(parsed=None, checks=checks)
        correction = 0
        if "is_rotation_valid: false" in m.group(1):
            correction = int(re.search(r"rotation_correction:\s*(\d+)", m.group(1)).group(1))
        return Judged(parsed=body, checks=checks, rotation_correction=correction)

    return judge


def ladder(script, *, cfg=None, ink=INK, clock=None, region=None):
    clock = clock or vf.FakeClock()
    engine = vf.ScriptedFakeVlmEngine(script, clock=clock)
    out = run_ladder(
        engine, vf.request_builder(vf.page_image()), make_judge(ink), cfg or LadderConfig(),
        tier="escalation", engine_label="fake / olmocr-test", region=region, clock=clock,
    )
    return out, engine


def judged(out: vf.ScriptedOutput, ink: float = INK, tier: VlmTierConfig = TIER) -> dict[str, CheckResult]:
    n = out.completion_tokens if out.completion_tokens is not None else len(out.text.split())
    gen = Generation(out.text, out.finish_reason, completion_tokens=n, prompt_tokens=out.prompt_tokens,
                     mean_logprob=out.mean_logprob, error=out.error)
    m = FRONT.match(out.text)
    body = out.text[m.end():] if m else out.text
    return {r.name: r for r in judge_output(gen, body, ink=ink, expected_script="Latin", tier=tier, checks=CHECKS)}


def failed_names(attempt) -> set[str]:
    return {r.split(":", 1)[0] for r in attempt.rejected_because}


# -- the ladder ----------------------------------------------------------------------------


def test_fake_engine_implements_the_protocol():
    engine = vf.ScriptedFakeVlmEngine([vf.good_page()])
    assert isinstance(engine, VlmEngine)
    assert engine.stats() == {"requests": 0, "script_left": 1}


def test_good_page_is_accepted_on_first_attempt_with_full_record():
    out, engine = ladder([vf.good_page()], region=3)
    assert out.accepted is not None and out.accepted.parsed.startswith("# Quarterly review")
    assert out.stopped_because == "accepted"
    (a,) = out.attempts
    assert (a.tier, a.engine, a.number, a.region, a.temperature, a.rotation) == (
        "escalation", "fake / olmocr-test", 1, 3, 0.1, 0)
    assert a.accepted and a.rejected_because == [] and a.finish_reason == "stop"
    assert a.prompt_tokens == 1200 and a.completion_tokens > 50
    assert a.seconds == 1.0  # measured on the injected clock, which the fake engine moved
    assert engine.requests[0].temperature == 0.1 and engine.requests[0].max_tokens == 600


def test_temperatures_follow_the_ladder_exactly():
    out, engine = ladder([vf.truncated() for _ in range(8)])
    expected = [0.1, 0.1, 0.2, 0.3, 0.5, 0.8, 0.9, 1.0]
    assert [r.temperature for r in engine.requests] == expected
    assert [a.temperature for a in out.attempts] == expected
    assert [a.number for a in out.attempts] == list(range(1, 9))
    assert LadderConfig().temperature(20) == 1.0  # the last temperature repeats


def test_truncation_moves_to_the_next_attempt():
    out, _ = ladder([vf.truncated(), vf.good_page()])
    first, second = out.attempts
    assert not first.accepted and first.finish_reason == "length"
    assert first.rejected_because == [
        "vlm_truncated: stopped for length after 60 tokens, under max_tokens 600 and max_model_len 8192 "
        "(1200 prompt tokens): the output is cut off"]
    assert second.accepted and out.accepted.temperature == 0.1
    assert out.best is not None and out.best.generation.finish_reason == "length"


def test_truncation_names_the_limit_that_was_hit():
    """vLLM stops at max_model_len even when max_tokens is larger: the reason says which limit."""
    tier = VlmTierConfig.model_validate({"max_new_tokens": 1500, "engine": {"max_model_len": 2048}})

    def reason(prompt_tokens, n):
        out = vf.ScriptedOutput("x " * n, "length", completion_tokens=n, prompt_tokens=prompt_tokens)
        return judged(out, tier=tier)["vlm_truncated"].reason

    assert reason(581, 1467) == "hit max_model_len 2048 (581 prompt + 1467 generated tokens): the output is cut off"
    assert reason(300, 1500) == "hit max_tokens 1500 (1500 tokens generated): the output is cut off"
    assert reason(300, 900).startswith("stopped for length after 900 tokens, under max_tokens 1500 and max_model_len")


@pytest.mark.parametrize("looping", [vf.loop_to_limit, vf.degenerate_phrase, vf.repeated_table_row])
def test_loops_are_rejected(looping):
    out, _ = ladder([looping(), vf.good_page()])
    first = out.attempts[0]
    assert not first.accepted
    assert "vlm_tail_loop" in failed_names(first)
    assert out.attempts[1].accepted


def test_leaked_text_is_rejected():
    out, _ = ladder([vf.refusal(), vf.leaked_im_end(), vf.good_page()])
    refusal, im_end, good = out.attempts
    assert {"vlm_leaked_text", "vlm_parse"} <= failed_names(refusal)
    assert any("I'm sorry, but I can't transcribe" in r for r in refusal.rejected_because)
    assert failed_names(im_end) == {"vlm_leaked_text"}
    assert "'<|im_end|>'" in im_end.rejected_because[0]
    assert good.accepted


def test_empty_output_on_inked_page_is_rejected():
    out, _ = ladder([vf.empty(), vf.good_page()])
    assert failed_names(out.attempts[0]) == {"empty_output"}
    assert "near-empty output" in out.attempts[0].rejected_because[0]
    assert out.attempts[1].accepted


def test_text_invented_on_blank_page_is_rejected():
    out, _ = ladder([vf.blank_page_invention(), vf.empty()], ink=0.0)
    assert "blank_page_text" in failed_names(out.attempts[0])
    assert "hallucinated" in " ".join(out.attempts[0].rejected_because)
    # On a blank page, nothing is the right answer.
    assert out.attempts[1].accepted and out.accepted.parsed == ""


def test_rotation_feedback_is_cumulative_and_recorded():
    out, engine = ladder([vf.wrong_rotation(90), vf.wrong_rotation(90), vf.good_page()])
    assert [a.rotation for a in out.attempts] == [0, 90, 180]
    assert out.attempts[0].rejected_because == ["rotation_invalid: model asks for 90 degrees"]
    assert out.attempts[1].rejected_because == ["rotation_invalid: model asks for 90 degrees"]
    assert out.attempts[2].accepted
    assert out.rotation == 180 and out.accepted.rotation == 180
    # The caller re-rendered: portrait, landscape, portrait upside down (marker follows).
    assert [r.image_shape[:2] for r in engine.requests] == [(40, 30), (30, 40), (40, 30)]
    assert [vf.marker_corner(r.image) for r in engine.requests] == ["tl", "tr", "br"]


def test_rotation_wraps_and_feedback_can_be_off():
    out, _ = ladder([vf.wrong_rotation(270), vf.wrong_rotation(180), vf.good_page()])
    assert [a.rotation for a in out.attempts] == [0, 270, 90]
    off, engine = ladder([vf.wrong_rotation(90)], cfg=LadderConfig(rotation_feedback=False))
    assert off.accepted is not None and off.rotation == 0 and engine.requests[0].image_shape[:2] == (40, 30)


def test_rotation_not_a_right_angle_is_rejected_without_rotating():
    out, _ = ladder([vf.wrong_rotation(45), vf.good_page()])
    assert out.attempts[0].rejected_because == [
        "rotation_invalid: model asks for 45 degrees, not one of 90/180/270 (ignored)"]
    assert out.attempts[1].rotation == 0 and out.accepted is not None


def test_all_attempts_failing_keeps_the_least_bad_candidate():
    script = [vf.loop_to_limit(), vf.refusal(), vf.truncated(), vf.degenerate_phrase(),
              vf.empty(), vf.truncated(), vf.leaked_im_end(), vf.repeated_table_row()]
    out, engine = ladder(script)
    assert out.accepted is None and len(out.attempts) == 8 and not engine.script
    assert not any(a.accepted for a in out.attempts)
    assert all(a.rejected_because for a in out.attempts)
    # Three candidates fail one check (truncated x2, leaked <|im_end|>); the earliest wins.
    assert [len(a.rejected_because) for a in out.attempts][2] == 1
    assert out.best is not None and out.best.temperature == 0.2
    assert out.best.generation.finish_reason == "length"
    assert [c.name for c in out.best.checks if not c.passed] == ["vlm_truncated"]
    assert out.stopped_because == "max_attempts 8"


def test_unparsed_outputs_are_never_the_best():
    out, _ = ladder([vf.refusal(), vf.engine_failure()], cfg=LadderConfig(max_attempts=2))
    assert out.accepted is None and out.best is None and len(out.attempts) == 2


def test_max_seconds_stops_starting_attempts():
    clock = vf.FakeClock()
    script = [vf.ScriptedOutput(vf.truncated().text, "length", seconds=4.0) for _ in range(8)]
    out, engine = ladder(script, cfg=LadderConfig(max_seconds=10), clock=clock)
    # 4 s, 8 s (under 10: go on), 12 s (over: stop) -> three attempts, five replies unused.
    assert len(out.attempts) == 3 and len(engine.script) == 5
    assert [a.seconds for a in out.attempts] == [4.0, 4.0, 4.0]
    assert out.stopped_because.startswith("max_seconds 10")


def test_engine_exception_is_recorded_not_raised():
    out, _ = ladder([vf.engine_failure(), vf.good_page()])
    first, second = out.attempts
    assert first.finish_reason == "error" and not first.accepted
    assert first.rejected_because == ["vlm_error: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    assert second.accepted and second.temperature == 0.1


def test_engine_error_generation_is_rejected_by_the_detectors():
    broken = vf.ScriptedOutput("", "error", error="request timed out after 300 s")
    out, _ = ladder([broken, vf.good_page()])
    assert "vlm_error: engine error: request timed out after 300 s" in out.attempts[0].rejected_because


def test_judge_that_gives_no_reason_for_a_parse_failure_still_rejects():
    engine = vf.ScriptedFakeVlmEngine([vf.good_page()])
    out = run_ladder(engine, vf.request_builder(vf.page_image()), lambda g, r: Judged(None, []),
                     LadderConfig(max_attempts=1), tier="small_reader", engine_label="fake")
    assert out.attempts[0].rejected_because == ["vlm_parse: the output did not parse"]


# -- detectors -----------------------------------------------------------------------------


def test_clean_page_passes_every_check():
    results = judged(vf.good_page())
    assert all(r.passed for r in results.values()), failed_reasons(results.values())
    assert "low_confidence" not in results and "vlm_low_confidence" not in results
    assert {"vlm_error", "vlm_truncated", "vlm_leaked_text", "vlm_tail_loop", "empty_output",
            "repetition_phrase", "drift_trigrams", "script_expected"} <= set(results)


def test_tail_loop_catches_a_long_sentence_the_phrase_check_misses():
    results = judged(vf.loop_to_limit(finish="stop"))
    assert results["repetition_phrase"].passed  # 20-token sentence > max_phrase_tokens 16
    tail = results["vlm_tail_loop"]
    assert not tail.passed and tail.score >= 20
    assert "20-token unit 'The results of the survey" in tail.reason


def test_tail_loop_positive_cases():
    phrase = judged(vf.degenerate_phrase())["vlm_tail_loop"]
    assert not phrase.passed and "2-token unit 'the table'" in phrase.reason
    row = judged(vf.repeated_table_row(40))["vlm_tail_loop"]
    assert not row.passed and "| South | 380 | 391 | +2.9% |" in row.reason and row.score >= 40
    long_line = "Total liabilities and shareholders' equity at the end of the reporting period as restated " \
                "for the adoption of the new leasing standard in all segments"  # > 30 tokens
    results = judged(vf.ScriptedOutput(vf.PARAGRAPH + "\n" + (long_line + "\n") * 9))
    assert not results["vlm_tail_loop"].passed and "the line \"Total liabilities" in results["vlm_tail_loop"].reason


NUMBER_TABLE = "| Year | Output | Yield | Share |\n|---|---|---|---|\n" + "".join(
    f"| {1990 + i} | {round(1000 + 37.3 * i * (-1) ** i, 1)} | {round(2.5 + (i % 7) * 0.31, 2)} | {i % 5}.{i % 3}% |\n"
    for i in range(30)
)
ZERO_ROWS = "| Account | Q1 | Q2 | Q3 |\n|---|---|---|---|\n| Cash | 12 | 15 | 9 |\n" + "| | 0.00 | 0.00 | 0.00 |\n" * 12
REPEATED_HEADERS = "\n\n".join(
    f"Table {n}\n\n| Item | Qty | Unit price | Total |\n|---|---|---|---|\n| Bolt M{n} | {n * 10} | 0.{n}5 | {n * 1.5:.2f} |"
    for n in range(1, 6)
) + "\n\n| Item | Qty | Item | Qty | Item | Qty | Item | Qty | Item | Qty |"
DOT_LEADERS = "Contents\n\n" + "".join(
    f"{t} {'. ' * 30}{p}\n" for t, p in [("Introduction", 1), ("Methods", 7), ("Results", 19), ("Discussion", 40)]
) + ". " * 40 + "\n" + "." * 120
SHORT_ITEMS = "Checklist\n\n" + "".join(f"- [ ] Item {i}: checked\n" for i in range(1, 25)) + "- N/A\n" * 10


@pytest.mark.parametrize("text", [NUMBER_TABLE, ZERO_ROWS, REPEATED_HEADERS, DOT_LEADERS, SHORT_ITEMS, vf.PARAGRAPH],
                         ids=["numbers", "zero-rows", "repeated-headers", "dot-leaders", "short-items", "prose"])
def test_tail_loop_leaves_legit_repetition_alone(text):
    results = judged(vf.ScriptedOutput(text))
    assert results["vlm_tail_loop"].passed, results["vlm_tail_loop"].reason
    assert all(r.passed for n, r in results.items() if n.startswith("vlm_")), failed_reasons(results.values())


def test_repeated_headers_are_measured_but_below_threshold():
    tail = judged(vf.ScriptedOutput(REPEATED_HEADERS))["vlm_tail_loop"]
    assert tail.score == 5 and tail.threshold == 8 and "'| Item | Qty'" in tail.reason


def test_truncation_and_error_checks():
    r = judged(vf.truncated())
    assert not r["vlm_truncated"].passed and r["vlm_truncated"].score == 60
    assert r["vlm_error"].passed
    aborted = judged(vf.ScriptedOutput(vf.PARAGRAPH, "abort"))
    assert not aborted["vlm_error"].passed and "aborted" in aborted["vlm_error"].reason


def test_leak_detector_quotes_the_match_and_spares_dialogue():
    r = judged(vf.refusal())["vlm_leaked_text"]
    assert not r.passed and r.reason.startswith("status/stop text in the output: \"I'm sorry, but I can't")
    assert "…" in r.reason  # the quote is trimmed
    im_end = judged(vf.leaked_im_end())["vlm_leaked_text"]
    assert not im_end.passed and im_end.score == 1 and "'<|im_end|>'" in im_end.reason
    novel = '"I\'m sorry," said the clerk, "but the office closes at five." ' + vf.PARAGRAPH
    assert judged(vf.ScriptedOutput(novel))["vlm_leaked_text"].passed


def test_leak_in_raw_output_counts_even_if_the_profile_dropped_it():
    gen = Generation("<|im_start|>assistant\n" + vf.PARAGRAPH, "stop", completion_tokens=70)
    r = {c.name: c for c in judge_output(gen, vf.PARAGRAPH, ink=INK, expected_script=None, tier=TIER, checks=CHECKS)}
    assert not r["vlm_leaked_text"].passed


def test_low_confidence_only_when_configured_and_known():
    strict = VlmTierConfig(min_confidence=0.5)
    unsure = vf.ScriptedOutput(vf.PARAGRAPH, mean_logprob=math.log(0.3))
    r = judged(unsure, tier=strict)["vlm_low_confidence"]
    assert not r.passed and r.score == 0.3 and r.threshold == 0.5
    assert judged(vf.ScriptedOutput(vf.PARAGRAPH, mean_logprob=math.log(0.9)), tier=strict)["vlm_low_confidence"].passed
    assert "vlm_low_confidence" not in judged(vf.ScriptedOutput(vf.PARAGRAPH), tier=strict)  # no logprobs
    assert "vlm_low_confidence" not in judged(unsure)  # min_confidence 0: off


def test_failed_reasons_format():
    results = [CheckResult(name="a", passed=True, reason="fine"),
               CheckResult(name="vlm_truncated", passed=False, reason="cut")]
    assert failed_reasons(results) == ["vlm_truncated: cut"]


def test_tier_config_describes_fields_and_rejects_bad_patterns():
    for name, f in VlmTierConfig.model_fields.items():
        assert f.description, name
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        VlmTierConfig(leak_patterns=["(unclosed"])


# -- token limits against the model (pagerouter.vlm.model_limits) -----------------------------


def test_token_limits_are_checked_against_the_models_own_config(tmp_path, monkeypatch):
    import json

    from pagerouter.config.ocr import OcrConfig
    from pagerouter.vlm.model_limits import VlmLimitError, resolve_limits

    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"text_config": {"max_position_embeddings": 2048}}))
    monkeypatch.chdir(tmp_path)

    def tier(**kw):
        return VlmTierConfig.model_validate({**kw, "engine": {"model": "m", **kw.pop("engine", {})}})

    t = tier(max_new_tokens=None, prompt_budget_tokens=600, engine={"max_model_len": None})
    assert t.engine.model == str(model)  # a relative directory is made absolute at load
    done = resolve_limits(OcrConfig(), t, "ocr.escalation.vlm")
    assert (done.engine.max_model_len, done.max_new_tokens) == (2048, 1448)  # the model's max, what is left
    with pytest.raises(VlmLimitError, match=r"ocr.escalation.vlm.engine.max_model_len 16384 is above the "
                                            r"model's own maximum 2048 \(text_config.max_position_embeddings"):
        resolve_limits(OcrConfig(), tier(engine={"max_model_len": 16384}, max_new_tokens=8000), "ocr.escalation.vlm")
    with pytest.raises(VlmLimitError, match=r"max_new_tokens 1800 \+ a prompt of 600 tokens = 2400 does not fit"):
        resolve_limits(OcrConfig(), tier(engine={"max_model_len": None}, max_new_tokens=1800, prompt_budget_tokens=600),
                       "ocr.escalation.vlm")
    # numbers the config states itself are checked at load
    with pytest.raises(ValidationError, match="max_new_tokens 8000 does not fit in engine.max_model_len 2048"):
        tier(engine={"max_model_len": 2048}, max_new_tokens=8000)
