"""A real vLLM engine on this CPU (the `vlm-cpu` extra) with the tiny random-weight Qwen2-VL the
tests build locally (tests/tiny_vlm.py). Random weights read nothing: these tests prove the
plumbing (image prompts through the chat template, continuous batching seen in vLLM's own
scheduler stats, max_tokens and finish_reason "length" driving the ladder, streaming), and
that a reader built on the real engine never loses a page.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.config.vlm import LadderConfig, VlmEngineConfig, VlmTierConfig
from pagerouter.convert.converter import Converter
from pagerouter.flow.engines import EngineSet
from pagerouter.vlm.base import VlmRequest
from pagerouter.vlm.detectors import judge_output
from pagerouter.vlm.ladder import Judged, run_ladder

pytestmark = [pytest.mark.vlm, pytest.mark.slow]


def tiny_engine_config(model_dir) -> dict:
    return {"kind": "vllm", "model": str(model_dir), "dtype": "float32", "enforce_eager": True,
            "max_model_len": None, "cpu_kv_cache_gib": 1, "max_num_seqs": 32}


@pytest.fixture(scope="module")
def engine(tiny_vlm_dir):
    from pagerouter.vlm.engine_vllm import VllmEngine

    e = VllmEngine(VlmEngineConfig.model_validate(tiny_engine_config(tiny_vlm_dir)))
    yield e
    e.close()


def page(seed: int = 0, h: int = 200, w: int = 300) -> np.ndarray:
    return (np.random.default_rng(seed).random((h, w, 3)) * 255).astype(np.uint8)


def test_concurrent_region_requests_are_batched_by_the_engine(engine):
    """16 callers on 16 threads (as the region reader's ladders run): vLLM's scheduler runs them
    together, seen in its own per-step running-request counts."""
    before = dict(engine.stats()["batch_sizes"])
    results = [None] * 16

    def call(i):
        results[i] = engine.generate([VlmRequest(prompt="OCR:", image=page(i), max_tokens=16, temperature=0.0)])[0]

    threads = [threading.Thread(target=call, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    stats = engine.stats()
    new_steps = {k: v - before.get(k, 0) for k, v in stats["batch_sizes"].items() if v > before.get(k, 0)}
    assert max(new_steps) > 1, f"engine ran every step with one request: {new_steps}"
    assert all(r is not None and r.finish_reason in ("length", "stop") for r in results)
    assert all(r.completion_tokens <= 16 and r.prompt_tokens > 10 for r in results)  # the image is in the prompt


def test_max_tokens_is_honoured_and_length_triggers_the_next_attempt(engine):
    cfg = PagerouterConfig()
    tier = VlmTierConfig(max_new_tokens=8, ladder=LadderConfig(max_attempts=3))
    img = page(1)

    def build(temperature, rotation):
        return VlmRequest(prompt="OCR:", image=img, max_tokens=tier.max_new_tokens, temperature=temperature, seed=7)

    def judge(gen, rotation):
        return Judged(parsed=gen.text, checks=judge_output(gen, gen.text, ink=0.3, expected_script=None,
                                                           tier=tier, checks=cfg.ocr.checks))

    out = run_ladder(engine, build, judge, tier.ladder, tier="escalation", engine_label=engine.version)
    lengths = [a for a in out.attempts if a.finish_reason == "length"]
    assert lengths, [a.finish_reason for a in out.attempts]
    for a in lengths:
        assert a.completion_tokens == 8 and not a.accepted
        assert any(r.startswith("vlm_truncated") for r in a.rejected_because)
    first_length = out.attempts.index(lengths[0])
    assert len(out.attempts) > first_length + 1 or out.accepted is not None  # a length never ends the ladder
    assert [a.temperature for a in out.attempts] == [0.1, 0.1, 0.2][: len(out.attempts)]


def test_streaming_gives_the_same_text_piece_by_piece(engine):
    req = VlmRequest(prompt="OCR:", image=page(2), max_tokens=12, temperature=0.0)
    pieces = list(engine.stream(req))
    whole = engine.generate([req])[0].text
    assert len(pieces) > 1
    assert "".join(pieces) == whole


def test_a_real_engine_reads_pages_through_both_tiers_and_never_loses_one(tmp_path, tiny_vlm_dir, engine):
    """Region VLM as small reader, page VLM as escalation, both on the real engine: garbage in
    every attempt, so every page must come out flagged, with all attempts recorded."""
    from pagerouter.vlm.escalator_page import VlmPageEscalator
    from pagerouter.vlm.reader_region import VlmRegionReader

    path = tmp_path / "scan.pdf"
    doc = pymupdf.open()
    synth.add_scanned_page(doc, ["Invoice number 4711", "Total due 99 EUR"], size=(320, 220), fontsize=14)
    synth.add_blank_page(doc)
    doc.save(path)
    eng = tiny_engine_config(tiny_vlm_dir)
    cfg = PagerouterConfig.model_validate({"ocr": {
        "small_reader": {"kind": "vlm", "render_engine": "paddleocr_vl",
                         "vlm": {"engine": eng, "max_new_tokens": 24, "ladder": {"max_attempts": 2}}},
        "escalation": {"kind": "vlm", "vlm": {"engine": eng, "max_new_tokens": 24, "ladder": {"max_attempts": 3}}},
    }})
    conv = Converter(cfg)
    conv.engines = EngineSet(cfg.ocr, prebuilt={
        "small_reader": VlmRegionReader(cfg.ocr, engine=engine),
        "escalation": VlmPageEscalator(cfg.ocr, engine=engine),
    })
    t0 = time.perf_counter()
    result = conv.convert(path)
    scan, blank = result.pages
    assert blank.route == "blank" and not blank.attempts
    assert scan.status == "flagged", scan.flags
    tiers = [a.tier for a in scan.attempts]
    assert "small_reader" in tiers and tiers.count("escalation") == 3
    assert all(a.engine.startswith("vllm 0.32") for a in scan.attempts)
    assert "vlm_ladder_exhausted" in scan.flags
    assert time.perf_counter() - t0 < 600

