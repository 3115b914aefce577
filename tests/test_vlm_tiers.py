"""The VLM tiers wired into the page graph, with FAKE engines (random-weight models read nothing,
so outputs are scripted): the region reader's prompts and parsers, the page escalator's ladder,
rotation feedback, fallback and the vote with a real third engine, attempts in the page JSON.

Layout, RapidOCR and Tesseract run for real; only the VLM's answers are scripted.

What these tests do NOT test: how well a real VLM reads. The fake answers with text the test
wrote, so measuring the page's character error rate against that text would only measure the
script. The tests assert what pagerouter does with the answers instead: the prompt and image it
sent, which rung of the retry ladder was accepted and why the others were rejected, whose
reading the page keeps (the VLM's, or the first reading on disagreement or exhaustion), and the
checks and flags that say so. A real model's reading quality is measured by the GPU benchmarks.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.bench.systems import ROUTER_STAGES
from pagerouter.convert.converter import Converter
from pagerouter.flow.engines import EngineSet
from pagerouter.model import TriageDecision
from pagerouter.render.output import to_json
from pagerouter.common.stages import LayoutResult, OcrTask, Region
from pagerouter.vlm.escalator_page import VlmPageEscalator
from pagerouter.vlm.profiles import PAGE_PROMPT
from pagerouter.vlm.reader_region import VlmRegionReader
from tests.vlm_fakes import (
    PromptRoutedFakeVlmEngine, RecordingFakeWitness, ScriptedFakeVlmEngine, ScriptedOutput, engine_failure,
    front_matter, loop_to_limit, truncated, wrong_rotation,
)

TRUTH = "Invoice number 4711\nTotal due 99 EUR"
# What a scripted VLM answers for the page: one Markdown paragraph per line. A page that took the
# VLM's answer holds exactly these as `vlm_page` blocks; RapidOCR's own first reading of the scan
# is one `rapidocr` block, so the two are told apart by engine and by the split.
VLM_PARAGRAPHS = TRUTH.splitlines()


@pytest.fixture(scope="module")
def scanned_pdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("vlm") / "scan.pdf"
    doc = pymupdf.open()
    synth.add_scanned_page(doc, TRUTH.splitlines(), size=(320, 220), fontsize=14)
    doc.save(path)
    doc.close()
    return path


def converter(cfg: PagerouterConfig, **prebuilt) -> Converter:
    conv = Converter(cfg)
    conv.engines = EngineSet(cfg.ocr, prebuilt=prebuilt)
    return conv


def escalating_cfg(**escalation) -> PagerouterConfig:
    """Small reader RapidOCR (real); escalation the page VLM. The confidence bar is set above
    what any OCR line scores, so the page always escalates (the fake forces the failure)."""
    return PagerouterConfig.model_validate({"ocr": {
        "checks": {"min_mean_confidence": 1.0},
        "escalation": {"kind": "vlm", **escalation},
    }})


def page_text(page) -> str:
    return "\n".join(b.text for b in page.blocks if b.text.strip())


# -- the region reader ---------------------------------------------------------------------------


def test_region_reader_reads_each_region_with_its_task_prompt():
    cfg = PagerouterConfig()
    table_html = "<table><tr><td>Item</td><td>Qty</td></tr><tr><td>Bolts</td><td>40</td></tr></table>"
    fake = PromptRoutedFakeVlmEngine({
        "OCR:": [ScriptedOutput("Quarterly report", mean_logprob=-0.02)],
        "Table Recognition:": [ScriptedOutput(table_html, mean_logprob=-0.05)],
        "Formula Recognition:": [ScriptedOutput("$$E = mc^2$$", mean_logprob=-0.1)],
    })
    reader = VlmRegionReader(cfg.ocr, engine=fake)
    img = np.full((400, 300, 3), 255, np.uint8)
    img[20:380, 20:280] = 0  # ink everywhere the regions are
    task = OcrTask(source="t.pdf", number=3, width=150, height=200, decision=TriageDecision(route="ocr"),
                   image=img, scale=2.0, page_bytes=b"", ink=0.5)
    layout = LayoutResult(rotation=0, regions=[
        Region("title", (20, 20, 280, 60), 0.9, 0), Region("table", (20, 80, 280, 200), 0.9, 1),
        Region("figure", (20, 210, 280, 300), 0.9, 2), Region("equation", (20, 310, 280, 380), 0.9, 3),
    ])
    (reading,) = reader.read_batch([task], [layout])
    roles = [(b.role, (b.text.splitlines() or [""])[0]) for b in reading.blocks]
    assert roles[0] == ("heading", "Quarterly report")
    assert roles[1][0] == "table" and reading.blocks[1].cells == [["Item", "Qty"], ["Bolts", "40"]]
    assert roles[2] == ("figure", "")
    assert reading.blocks[3].role == "formula" and "E = mc^2" in reading.blocks[3].text
    # provenance: page points (pixels / scale), engine, route, confidence from the log-probabilities
    assert reading.blocks[1].bbox == (10.0, 40.0, 140.0, 100.0)
    assert all(b.page == 3 and b.route == "ocr" and b.engine == "vlm_region" for b in reading.blocks)
    assert reading.blocks[0].confidence == pytest.approx(np.exp(-0.02), abs=1e-3)
    # the figure was not sent; three prompts, one per readable region
    assert sorted(r.prompt for r in fake.requests) == ["Formula Recognition:", "OCR:", "Table Recognition:"]
    assert [a.accepted for a in reading.attempts] == [True, True, True]
    assert not reading.flagged


def test_region_reader_retries_a_truncated_region_then_flags_the_page():
    cfg = PagerouterConfig()
    fake = PromptRoutedFakeVlmEngine({"OCR:": [truncated(max_tokens=40)]})
    reader = VlmRegionReader(cfg.ocr, engine=fake)
    img = np.zeros((200, 300, 3), np.uint8)
    task = OcrTask(source="t.pdf", number=1, width=150, height=100, decision=TriageDecision(route="ocr"),
                   image=img, scale=2.0, page_bytes=b"", ink=0.5)
    (reading,) = reader.read_batch([task], [LayoutResult(rotation=0, regions=[Region("text", (0, 0, 300, 200), 0.9)])])
    assert [a.temperature for a in reading.attempts] == [0.1, 0.1]  # the small tier's two tries
    assert all(not a.accepted and any(r.startswith("vlm_truncated") for r in a.rejected_because) for a in reading.attempts)
    failed = {c.name: c for c in reading.checks if not c.passed}
    assert "vlm_regions" in failed and "region 0 (text)" in failed["vlm_regions"].reason
    # the least-bad text is kept as a low-confidence witness, never lost and never trusted
    assert reading.blocks and reading.blocks[0].confidence <= 0.3


# -- the page escalator ----------------------------------------------------------------------------


def test_escalation_ladder_rotation_feedback_and_attempts_in_json(scanned_pdf):
    good = ScriptedOutput(front_matter() + TRUTH.replace("\n", "\n\n"), mean_logprob=-0.01)
    fake = ScriptedFakeVlmEngine([wrong_rotation(90), truncated(max_tokens=20), good])
    cfg = escalating_cfg()
    t0 = time.perf_counter()
    doc = converter(cfg, escalation=VlmPageEscalator(cfg.ocr, engine=fake)).convert(scanned_pdf)
    wall = time.perf_counter() - t0
    page = doc.pages[0]
    # one key per stage (the escalator's own figures are not counted again), adding up to at most the wall time
    assert "escalate" in page.timings and set(page.timings) <= set(ROUTER_STAGES), page.timings
    assert sum(page.timings.values()) <= wall
    attempts = [a for a in page.attempts if a.tier == "escalation"]
    assert [(a.number, a.temperature, a.rotation, a.accepted) for a in attempts] == [
        (1, 0.1, 0, False), (2, 0.1, 90, False), (3, 0.2, 90, True)]
    assert any(r.startswith("rotation_invalid") for r in attempts[0].rejected_because)
    assert any(r.startswith("vlm_truncated") for r in attempts[1].rejected_because)
    # the re-render was turned a quarter: width and height swapped
    h, w = fake.requests[0].image_shape[:2]
    assert fake.requests[1].image_shape[:2] == (w, h)
    assert page.rotation == 90
    # every rung sent the page prompt (a scan has no text layer to anchor it) with the tier's token budget
    assert [r.prompt for r in fake.requests] == [PAGE_PROMPT] * 3
    assert {r.max_tokens for r in fake.requests} == {cfg.ocr.escalation.vlm.max_new_tokens}
    # the page holds the accepted third answer, nothing of the two rejected ones
    assert [b.text for b in page.blocks] == VLM_PARAGRAPHS
    assert "Q3" not in page_text(page) and "committee" not in page_text(page)
    assert {b.engine for b in page.blocks} == {"vlm_page"} and {b.route for b in page.blocks} == {"escalation"}
    assert next(c for c in page.checks if c.name == "vlm_page").reason == "accepted after 3 attempt(s)"
    # every attempt is in the JSON a user gets back
    data = json.loads(to_json(doc))
    assert [a["finish_reason"] for a in data["pages"][0]["attempts"] if a["tier"] == "escalation"] == ["stop", "length", "stop"]


def test_agreeing_vlm_reading_is_taken_and_placed_on_the_small_readers_boxes(scanned_pdf):
    fake = ScriptedFakeVlmEngine([ScriptedOutput(front_matter() + TRUTH.replace("\n", "\n\n"))])
    witness = RecordingFakeWitness()
    cfg = escalating_cfg()
    page = converter(cfg, escalation=VlmPageEscalator(cfg.ocr, engine=fake, witness=witness)).convert(scanned_pdf).pages[0]
    # the first rung was accepted; the readings agree, so no third engine was asked and no vote was held
    assert [(a.number, a.accepted) for a in page.attempts if a.tier == "escalation"] == [(1, True)]
    assert witness.calls == [] and not [c for c in page.checks if c.name == "vlm_vote"]
    assert [b.text for b in page.blocks] == VLM_PARAGRAPHS and {b.engine for b in page.blocks} == {"vlm_page"}
    # boxes come from the first reading's matching lines, not the whole page
    assert all(b.bbox != (0.0, 0.0, page.width, page.height) for b in page.blocks)
    for b in page.blocks:
        x0, y0, x1, y1 = b.bbox
        assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height
        assert (x1 - x0) * (y1 - y0) < 0.5 * page.width * page.height


def test_disagreeing_readings_are_decided_by_a_real_third_engine(scanned_pdf):
    """The VLM invents digits; RapidOCR's first reading passed its own checks (only its
    confidence was low). The CPU vote (RapidOCR hi-res + Tesseract) is the witness."""
    lie = ScriptedOutput(front_matter() + "Invoice number 4117\n\nTotal due 66 EUR")
    fake = ScriptedFakeVlmEngine([lie])
    cfg = escalating_cfg()
    page = converter(cfg, escalation=VlmPageEscalator(cfg.ocr, engine=fake)).convert(scanned_pdf).pages[0]
    vote_check = next(c for c in page.checks if c.name == "vlm_vote")
    assert "kept the first reading" in vote_check.reason, vote_check.reason
    assert "witness vote" in vote_check.reason and "< 0.8" in vote_check.reason  # the disagreement, then the vote
    # the page keeps RapidOCR's first reading; none of the VLM's invented digits
    assert {b.engine for b in page.blocks} == {"rapidocr"} and {b.route for b in page.blocks} == {"ocr"}
    assert "4117" not in page_text(page) and "66 EUR" not in page_text(page)


def test_every_attempt_failing_keeps_the_first_reading_flagged(scanned_pdf):
    fake = ScriptedFakeVlmEngine([loop_to_limit(max_tokens=300)] * 6 + [engine_failure()] * 2)
    cfg = escalating_cfg()
    page = converter(cfg, escalation=VlmPageEscalator(cfg.ocr, engine=fake)).convert(scanned_pdf).pages[0]
    attempts = [a for a in page.attempts if a.tier == "escalation"]
    assert [a.temperature for a in attempts] == [0.1, 0.1, 0.2, 0.3, 0.5, 0.8, 0.9, 1.0]
    assert not any(a.accepted for a in attempts)
    assert attempts[-1].finish_reason == "error" and "CUDA out of memory" in attempts[-1].rejected_because[0]
    assert page.status == "flagged" and "vlm_ladder_exhausted" in page.flags
    exhausted = next(c for c in page.checks if c.name == "vlm_ladder_exhausted")
    assert exhausted.reason.startswith("kept the first reading (rapidocr); page: 8 attempts failed"), exhausted.reason
    assert all(any(r.startswith("vlm_tail_loop") for r in a.rejected_because) for a in attempts[:6])
    # the fallback: the small reader's blocks survive, none of the looping answers' text
    assert page.blocks and {b.engine for b in page.blocks} == {"rapidocr"}
    assert "survey" not in page_text(page)


def test_tier_config_errors_are_clear():
    with pytest.raises(ValueError, match="openai_server needs base_url"):
        PagerouterConfig.model_validate({"ocr": {"escalation": {"kind": "vlm", "vlm": {"engine": {"kind": "openai_server"}}}}})
    with pytest.raises(ValueError, match="needs `model`"):
        cfg = PagerouterConfig.model_validate({"ocr": {"escalation": {"kind": "vlm"}}})
        EngineSet(cfg.ocr).get("escalation")


def test_page_prompt_anchor_and_configured_prompt():
    from pagerouter.model import Block
    from pagerouter.vlm.profiles import PAGE_PROMPT, page_prompt

    blocks = [Block(text="Total  due\n99 EUR", role="paragraph", bbox=(72.4, 100.6, 200, 120), page=1,
                    engine="pymupdf", route="text_layer", confidence=1.0)]
    assert page_prompt(None) == PAGE_PROMPT
    with_anchor = page_prompt(blocks)
    assert with_anchor.startswith(PAGE_PROMPT) and "[72x101]Total due 99 EUR" in with_anchor
    assert page_prompt(blocks, template="Read it. Layer: {anchor}") == "Read it. Layer: [72x101]Total due 99 EUR"
    assert page_prompt(blocks, max_chars=5) == PAGE_PROMPT  # an anchor that does not fit is left out


def test_parse_page_front_matter_and_errors():
    from pagerouter.vlm.profiles import ProfileParseError, parse_page

    out = parse_page(front_matter(False, 270, table=True) + "| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert (out.is_rotation_valid, out.rotation_correction, out.is_table, out.primary_language) == (False, 270, True, "en")
    assert out.body.startswith("| a | b |")
    for bad, why in [("just text, no front matter", "front matter"),
                     ("---\nis_rotation_valid: true\n---\nx", "rotation_correction"),
                     ("---\nis_rotation_valid: true\nrotation_correction: 45\n---\nx", "not 0, 90, 180 or 270"),
                     ("---\n: : [\n---\nx", "YAML")]:
        with pytest.raises(ProfileParseError, match=why):
            parse_page(bad)


def test_page_markdown_becomes_blocks_with_roles_cells_and_formulas():
    from pagerouter.vlm.markdown_blocks import markdown_to_blocks

    body = ("# Results\n\nThe yield rose.\nIt rose again.\n\n- first point\n- second point\n\n"
            "<table><tr><th>Item</th><th>Qty</th></tr>\n<tr><td>Bolts</td><td>40</td></tr></table>\n\n"
            "$$\nE = mc^2\n$$\n\n![A bar chart of yields](figure)\n\n## Notes\n\nDone.")
    blocks = markdown_to_blocks(body, page=2, page_box=(0, 0, 600, 800), engine="vlm_page", engine_version="v",
                                confidence=0.9)
    assert [(b.role, b.level) for b in blocks] == [
        ("heading", 1), ("paragraph", None), ("list_item", None), ("list_item", None), ("table", None),
        ("formula", None), ("figure", None), ("heading", 2), ("paragraph", None)]
    assert blocks[1].text == "The yield rose.\nIt rose again."
    assert blocks[4].cells == [["Item", "Qty"], ["Bolts", "40"]]
    assert blocks[5].text == "$$\nE = mc^2\n$$" and blocks[6].text == "A bar chart of yields"
    assert [b.order for b in blocks] == list(range(9)) and all(b.page == 2 and b.route == "escalation" for b in blocks)


def test_parser_edge_cases_from_review():
    from pagerouter.vlm.markdown_blocks import split_markdown
    from pagerouter.vlm.profiles import parse_page, parse_table

    # an inline formula at the start of a line is prose, not an unclosed display formula
    chunks = split_markdown("$$E=mc^2$$ is famous.\n\n# Next\n\nMore text.")
    assert [c[0] for c in chunks] == ["paragraph", "heading", "paragraph"]
    # an unclosed table or formula does not swallow the rest of the page
    assert [c[0] for c in split_markdown("<table><tr><td>a\n\nLater prose.")][-1] == "paragraph"
    # CRLF output and front matter inside a code fence
    crlf = front_matter().replace("\n", "\r\n") + "Body line\r\n"
    assert parse_page(crlf).body == "Body line"
    fenced = "```yaml\n" + front_matter() + "```\nBody"
    assert parse_page(fenced).body == "Body"
    # a one-dash separator row is not a data row
    assert parse_table("| a | b |\n|-|-|\n| 1 | 2 |") == [["a", "b"], ["1", "2"]]


def test_page_text_is_not_mistaken_for_leaked_status_text():
    from pagerouter.config.vlm import VlmTierConfig
    from pagerouter.vlm.base import Generation
    from pagerouter.vlm.detectors import judge_output

    cfg = PagerouterConfig()
    tier = VlmTierConfig()
    for text in ("I cannot attend the meeting on Friday, but my deputy will present the figures.",
                 "Here is the text of the agreement between the parties named below."):
        checks = judge_output(Generation(text=text, finish_reason="stop"), text, ink=0.05, expected_script=None,
                              tier=tier, checks=cfg.ocr.checks)
        assert not [c for c in checks if c.name == "vlm_leaked_text" and not c.passed], text
    refusal = "I'm sorry, but I can't transcribe this document."
    checks = judge_output(Generation(text=refusal, finish_reason="stop"), refusal, ink=0.05, expected_script=None,
                          tier=tier, checks=cfg.ocr.checks)
    assert [c for c in checks if c.name == "vlm_leaked_text" and not c.passed]


def test_mixed_page_keeps_its_text_layer_through_the_vlm_tiers():
    from tests import triage_fixtures as fx

    pdf = fx.page_with_picture_pdf(fx.text_picture_png())
    fake = PromptRoutedFakeVlmEngine({"OCR:": [ScriptedOutput("Text inside the picture", mean_logprob=-0.01)]})
    cfg = PagerouterConfig.model_validate({"ocr": {"small_reader": {"kind": "vlm"}, "escalation": {"enabled": False}}})
    page = converter(cfg, small_reader=VlmRegionReader(cfg.ocr, engine=fake)).convert(pdf).pages[0]
    assert page.route == "mixed"
    engines = {b.engine for b in page.blocks if b.text.strip()}
    assert "vlm_region" in engines and "pymupdf" in engines, [(b.engine, b.text[:30]) for b in page.blocks]
    assert [b.order for b in page.blocks] == list(range(len(page.blocks)))


def test_lightonocr_profile_sends_the_page_alone_and_reads_plain_markdown(scanned_pdf):
    """LightOnOCR-2: no text prompt (the model echoes one), a 1540 px render, Markdown with no
    front matter back (scripted: no weights here)."""
    fake = ScriptedFakeVlmEngine([ScriptedOutput(TRUTH.replace("\n", "\n\n"), mean_logprob=-0.01)])
    cfg = escalating_cfg(vlm={"profile": "lightonocr", "max_new_tokens": 4096})
    page = converter(cfg, escalation=VlmPageEscalator(cfg.ocr, engine=fake)).convert(scanned_pdf).pages[0]
    (req,) = fake.requests
    assert req.prompt == "" and max(req.image_shape[:2]) == 1540
    # plain Markdown, no front matter: parsed as-is into the page's blocks
    assert [b.text for b in page.blocks] == VLM_PARAGRAPHS and {b.engine for b in page.blocks} == {"vlm_page"}
    assert [a.accepted for a in page.attempts if a.tier == "escalation"] == [True]


def test_the_lightonocr_block_in_serve_gpu_yaml_is_a_valid_tier():
    from pathlib import Path

    import yaml

    text = (Path(__file__).resolve().parents[1] / "configs" / "serve-gpu.yaml").read_text()
    block = text.split("replace escalation.vlm below by:\n", 1)[1].split("#                (and serve", 1)[0]
    vlm = yaml.safe_load("\n".join(line.split("#", 1)[1][16:] for line in block.splitlines()))["vlm"]
    cfg = PagerouterConfig.model_validate({"ocr": {"escalation": {"kind": "vlm", "vlm": vlm}}})
    tier = cfg.ocr.escalation.vlm
    assert tier.profile == "lightonocr" and tier.engine.model == "lightonai/LightOnOCR-2-1B"
    assert cfg.ocr.render_target(tier.render_key()).longest_side_px == 1540
