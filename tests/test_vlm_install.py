"""The vlm-cpu extra is installed and usable (scripts/install_vlm_cpu.sh), and the tiny Qwen2-VL
of tests/tiny_vlm.py builds and loads. Quick: no engine is started here."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import require_vlm_cpu

pytestmark = pytest.mark.vlm


def test_torch_is_the_cpu_build_and_cuda_audio_is_gone():
    require_vlm_cpu()
    from importlib.metadata import PackageNotFoundError, version

    import torch

    assert torch.__version__.startswith("2.13.0"), torch.__version__
    assert torch.__version__.endswith("+cpu"), torch.__version__
    for name in ("torchaudio", "torchcodec"):
        with pytest.raises(PackageNotFoundError):
            version(name)  # CUDA builds whose .so breaks transformers' imports


def test_torchvision_imports_without_the_nms_error():
    require_vlm_cpu()
    # A fresh interpreter: the failure is at first import and this one may have imported it.
    r = subprocess.run(
        [sys.executable, "-c", "import torchvision, torchvision.transforms.v2; print(torchvision.__version__)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "torchvision::nms" not in r.stderr


def test_vllm_imports_and_is_0_32():
    require_vlm_cpu()
    r = subprocess.run(
        [sys.executable, "-c", "import vllm; print(vllm.__version__)"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1].startswith("0.32"), r.stdout


def test_tiny_model_builds(tiny_vlm_dir):
    names = {p.name for p in tiny_vlm_dir.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "processor_config.json"} <= names
    cfg = json.loads((tiny_vlm_dir / "config.json").read_text())
    assert cfg["model_type"] == "qwen2_vl"
    assert (tiny_vlm_dir / "model.safetensors").stat().st_size < 5_000_000


def test_tiny_model_is_deterministic(tiny_vlm_dir, tmp_path):
    from safetensors.numpy import load_file

    from .tiny_vlm import build_tiny_qwen2vl

    again = build_tiny_qwen2vl(tmp_path / "again", seed=0)
    a = load_file(tiny_vlm_dir / "model.safetensors")
    b = load_file(again / "model.safetensors")
    assert a.keys() == b.keys()
    assert all((a[k] == b[k]).all() for k in a)
    assert (tiny_vlm_dir / "tokenizer.json").read_text() == (again / "tokenizer.json").read_text()


def test_transformers_loads_the_tiny_processor(tiny_vlm_dir):
    from PIL import Image
    from transformers import AutoConfig, AutoProcessor

    proc = AutoProcessor.from_pretrained(tiny_vlm_dir)
    cfg = AutoConfig.from_pretrained(tiny_vlm_dir)
    tok = proc.tokenizer
    assert tok.eos_token == "<|im_end|>"
    assert cfg.text_config.vocab_size == len(tok)

    messages = [
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Read the text."}]}
    ]
    prompt = proc.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.endswith("<|im_start|>assistant\n")
    assert "<|vision_start|><|image_pad|><|vision_end|>Read the text." in prompt

    inputs = proc(text=[prompt], images=[Image.new("RGB", (200, 100), "white")], return_tensors="pt")
    n_image_tokens = int((inputs["input_ids"] == cfg.image_token_id).sum())
    # 224*224 max pixels, 14 px patches merged 2x2: at most 64 image tokens.
    assert 0 < n_image_tokens <= 64
