"""The large tier served by Ray Serve LLM (`ray.serve.llm`, graph/llm_app.py) on this CPU: the
tiny random-weight Qwen2-VL in an LLMServer deployment at zero replicas; pagerouter's page VLM
tier reaches it as `engine.kind: openai_server` and wakes it with a flagged page."""

from __future__ import annotations

import time

import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from tests.serve_fixtures import wait_for

pytestmark = [pytest.mark.vlm, pytest.mark.serve, pytest.mark.slow]
pytest_plugins = ["tests.serve_fixtures"]

APP = "llm"
MODEL_ID = "tiny-qwen2vl"


def tier_config(model_dir, base_url: str) -> PagerouterConfig:
    return PagerouterConfig.model_validate({
        "serve": {"escalation_timeout_s": 400, "large_reader": {
            "num_cpus": 1, "min_replicas": 0, "initial_replicas": 0, "max_replicas": 1, "upscale_delay_s": 0,
            "downscale_delay_s": 2, "downscale_to_zero_delay_s": 2, "look_back_period_s": 2, "metrics_interval_s": 0.5,
        }},
        "ocr": {
            "checks": {"min_mean_confidence": 1.0},  # every OCR page escalates (forces the tier to wake)
            "escalation": {"kind": "vlm", "vlm": {
                "engine": {"kind": "openai_server", "base_url": base_url, "model": str(model_dir),
                           "served_model_name": MODEL_ID, "dtype": "float32", "enforce_eager": True,
                           "max_model_len": None, "cpu_kv_cache_gib": 1, "timeout_s": 300},
                "max_new_tokens": 16, "ladder": {"max_attempts": 2}}},
        },
    })


@pytest.fixture(scope="module")
def llm_app(serve_session, tiny_vlm_dir):
    from ray import serve

    from pagerouter.graph.llm_app import build_llm_app

    cfg = tier_config(tiny_vlm_dir, f"{serve_session.http_url}/{APP}/v1")
    serve.run(build_llm_app(cfg, "escalation"), name=APP, route_prefix=f"/{APP}")
    yield cfg
    serve.delete(APP)


def llm_replicas() -> int:
    from ray import serve

    deps = serve.status().applications[APP].deployments
    return sum(int(d.replica_states.get("RUNNING", 0)) for name, d in deps.items() if "LLMServer" in name)


def test_serve_llm_tier_wakes_from_zero_and_reads_a_flagged_page(llm_app, tmp_path):
    assert llm_replicas() == 0
    path = tmp_path / "scan.pdf"
    doc = pymupdf.open()
    synth.add_scanned_page(doc, ["Invoice number 4711", "Total due 99 EUR"], size=(320, 220), fontsize=14)
    doc.save(path)
    doc.close()
    t0 = time.perf_counter()
    page = Converter(llm_app).convert(path).pages[0]
    print(f"\npage through the Serve LLM tier woken from zero: {time.perf_counter() - t0:.1f} s")
    attempts = [a for a in page.attempts if a.tier == "escalation"]
    assert len(attempts) == 2 and all(a.engine.startswith("openai_server") for a in attempts)
    # the server answered (random weights: text that fails the checks), it did not error
    assert all(a.finish_reason in ("length", "stop") and a.prompt_tokens > 10 for a in attempts), attempts
    assert page.status == "flagged" and "vlm_ladder_exhausted" in page.flags
    assert "Invoice" in "\n".join(b.text for b in page.blocks)  # the small reader's reading is kept
    wait_for(lambda: llm_replicas() == 0, 120, "the LLM deployment back at zero")


def test_llm_config_follows_the_tier_and_its_deployment_settings():
    from pagerouter.graph.llm_app import llm_config_for

    def cfg(**serve):
        return PagerouterConfig.model_validate({
            "serve": {"large_reader": {"min_replicas": 0, **serve}},
            "ocr": {"escalation": {"kind": "vlm", "vlm": {"engine": {
                "model": "/models/olmocr", "served_model_name": "olmocr", "quantization": "fp8", "max_model_len": 16384,
                "gpu_memory_utilization": 0.6, "cpu_kv_cache_gib": 2, "engine_kwargs": {"max_num_batched_tokens": 8192}}}}},
        })

    gpu = cfg(num_gpus=0.6)
    llm = llm_config_for(gpu.ocr.escalation.vlm, gpu.serve.large_reader)
    assert llm.model_id == "olmocr" and llm.model_loading_config.model_source == "/models/olmocr"
    kw = llm.engine_kwargs
    assert kw["quantization"] == "fp8" and kw["max_model_len"] == 16384 and kw["gpu_memory_utilization"] == 0.6
    assert kw["max_num_batched_tokens"] == 8192 and kw["limit_mm_per_prompt"] == {"image": 1, "video": 0}
    assert llm.deployment_config["autoscaling_config"]["min_replicas"] == 0
    assert llm.accelerator_config is None or llm.accelerator_config.kind != "cpu"

    cpu = cfg()
    llm = llm_config_for(cpu.ocr.escalation.vlm, cpu.serve.large_reader)
    assert llm.accelerator_config.kind == "cpu" and "gpu_memory_utilization" not in llm.engine_kwargs
    assert llm.runtime_env["env_vars"]["VLLM_CPU_KVCACHE_SPACE"] == "2"
