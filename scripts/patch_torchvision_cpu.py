"""Make a CUDA build of torchvision importable next to a CPU-only torch.

Why: the torchvision wheel on PyPI is built against CUDA torch. Next to torch 2.13.0+cpu its
compiled ops library (torchvision/_C) does not load, so the ``torchvision::nms`` / ``qnms`` operators
are never defined. torchvision/_meta_registrations.py still registers fake (meta) kernels for those
two with bare ``@torch.library.register_fake("torchvision::...")`` decorators, and those raise
``RuntimeError: operator torchvision::nms does not exist`` at ``import torchvision``. transformers
imports torchvision when it is installed (its Qwen2-VL image processor needs it), so vLLM's model
loading and plain transformers ``generate()`` with a VLM both fail.

The other registrations in that file are already behind ``torchvision.extension._has_ops()``; this
script puts the same guard on the two that are not. Where the ops do load, the guard is true and
nothing changes. A CPU torchvision wheel (PyTorch's CPU index) would be cleaner, but that index is
not reachable from our machines.

Idempotent: the patched lines carry a marker comment and a second run does nothing. Exits 2 with a
message if the file does not look as expected (a torchvision release that changed the layout).

Usage: python scripts/patch_torchvision_cpu.py [--check]
  --check  only report: exit 0 if patched (or nothing to patch), 1 if the patch is still needed.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

MARKER = "# pagerouter: guarded (CPU torch, no torchvision ops)"
EXPECTED_OPS = ("nms", "qnms")
UNGUARDED = re.compile(r'^@torch\.library\.register_fake\("torchvision::(\w+)"\)[ \t]*$', re.M)


def meta_registrations_path() -> Path:
    # find_spec does not import the package (importing it is what fails).
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("patch_torchvision_cpu: torchvision is not installed in this python")
    return Path(list(spec.submodule_search_locations)[0]) / "_meta_registrations.py"


def patch(text: str) -> tuple[str, list[str]]:
    found = UNGUARDED.findall(text)
    if sorted(found) != sorted(EXPECTED_OPS):
        raise ValueError(
            f"expected unguarded register_fake for {list(EXPECTED_OPS)}, found {found}"
        )
    if "import torchvision.extension" not in text:
        raise ValueError("the file no longer imports torchvision.extension (needed by the guard)")

    def guard(m: re.Match) -> str:
        op = m.group(1)
        return (
            f'@(torch.library.register_fake("torchvision::{op}")'
            f" if torchvision.extension._has_ops() else (lambda f: f))  {MARKER}"
        )

    return UNGUARDED.sub(guard, text), found


def main(argv: list[str]) -> int:
    check_only = "--check" in argv
    path = meta_registrations_path()
    if not path.is_file():
        print(f"patch_torchvision_cpu: {path} not found; torchvision layout changed", file=sys.stderr)
        return 2
    text = path.read_text()
    if MARKER in text:
        if UNGUARDED.search(text):
            print(f"patch_torchvision_cpu: {path} is half patched; reinstall torchvision", file=sys.stderr)
            return 2
        print(f"patch_torchvision_cpu: already patched: {path}")
        return 0
    try:
        new, ops = patch(text)
    except ValueError as exc:
        print(
            f"patch_torchvision_cpu: {path} is not laid out as expected ({exc}); "
            "check whether this torchvision still needs the fix",
            file=sys.stderr,
        )
        return 2
    if check_only:
        print(f"patch_torchvision_cpu: needs patching: {path}")
        return 1
    path.write_text(new)
    print(f"patch_torchvision_cpu: guarded register_fake for {', '.join(ops)} in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
