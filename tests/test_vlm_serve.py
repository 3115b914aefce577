"""The VLM tiers inside Ray Serve replicas: a real vLLM engine (CPU build, tiny random-weight
Qwen2-VL) starts in the SmallReader replica and batches concurrent region requests. Deployed
as a second application next to the main test app (one Ray for the whole session).

The LargeReader (page VLM) waking from zero for a flagged page and going back to zero is
tested once, through the README's own config and command: tests/test_vlm_readme.py."""

from __future__ import annotations

import asyncio
import time

import pymupdf
import pytest

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.model import TriageDecision
from pagerouter.ocr.task import make_ocr_task
from pagerouter.common.stages import LayoutResult, Region
from tests.test_vlm_engine import tiny_engine_config

pytestmark = [pytest.mark.vlm, pytest.mark.serve, pytest.mark.slow]
pytest_plugins = ["tests.serve_fixtures"]

APP = "vlm"


def _zero_to_one(**kw) -> dict:
    return {"num_cpus": 0.5, "min_replicas": 0, "initial_replicas": 0, "max_replicas": 1, "upscale_delay_s": 0,
            "downscale_delay_s": 2, "downscale_to_zero_delay_s": 2, "look_back_period_s": 2,
            "metrics_interval_s": 0.5, "target_ongoing_requests": 2, **kw}


@pytest.fixture(scope="module")
def vlm_app(serve_session, tiny_vlm_dir):
    from ray import serve

    from pagerouter.graph.builder import build_app

    eng = tiny_engine_config(tiny_vlm_dir)
    cfg = PagerouterConfig.model_validate({
        "serve": {
            "app_name": APP, "escalation_timeout_s": 400,
            "ingress": {"num_cpus": 0.1}, "triage": {"num_cpus": 0.1}, "layout": {"num_cpus": 0.25},
            # the engine batches itself: many requests in flight, no Serve batch queue in front
            "small_reader": {"num_cpus": 1, "max_ongoing_requests": 64, "max_batch_size": 1},
            "large_reader": _zero_to_one(num_cpus=1),
        },
        "ocr": {
            "small_reader": {"kind": "vlm", "render_engine": "paddleocr_vl",
                             "vlm": {"engine": eng, "max_new_tokens": 16, "ladder": {"max_attempts": 1}}},
            "escalation": {"kind": "vlm", "vlm": {"engine": eng, "max_new_tokens": 16, "ladder": {"max_attempts": 2}}},
        },
    })
    t0 = time.perf_counter()
    serve.run(build_app(cfg), name=APP, route_prefix=f"/{APP}")
    print(f"\nvlm app up in {time.perf_counter() - t0:.1f} s (SmallReader engine start included)")
    yield cfg
    serve.delete(APP)


@pytest.fixture(scope="module")
def scan_pdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("vlm-serve") / "scan.pdf"
    doc = pymupdf.open()
    synth.add_scanned_page(doc, ["Invoice number 4711", "Total due 99 EUR"], size=(320, 220), fontsize=14)
    doc.save(path)
    doc.close()
    return path


def test_engine_in_the_replica_batches_concurrent_region_requests(serve_session, vlm_app, scan_pdf):
    reader = serve_session.handle("SmallReader", APP)
    doc = pymupdf.open(scan_pdf)
    task = make_ocr_task(doc[0], 1, "scan.pdf", TriageDecision(route="ocr"), [], vlm_app.ocr)
    doc.close()
    h, w = task.image.shape[:2]
    layout = LayoutResult(rotation=0, regions=[Region("text", (0, 0, w, h), 1.0)])

    async def sixteen():
        return await asyncio.gather(*(reader.run.remote(task, layout) for _ in range(16)))

    readings = asyncio.run(sixteen())
    assert len(readings) == 16 and all(r.attempts and r.attempts[0].tier == "small_reader" for r in readings)
    stats = reader.stats.remote().result(timeout_s=60)
    engine_steps = stats["engine"]["batch_sizes"]
    assert max(int(k) for k in engine_steps) > 1, engine_steps
    assert set(stats["batch_sizes"]) == {1}  # no Serve batch queue: the engine did the batching

