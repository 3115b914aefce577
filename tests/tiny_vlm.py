"""The tiny random-weight Qwen2-VL of scripts/build_tiny_vlm.py (the script the README's CPU VLM
steps run), loaded from there so the tests build exactly what a new user builds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "build_tiny_vlm.py"
_spec = importlib.util.spec_from_file_location("build_tiny_vlm", _SCRIPT)
_mod = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(_mod)  # type: ignore[union-attr]

build_tiny_qwen2vl = _mod.build_tiny_qwen2vl
