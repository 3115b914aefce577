"""Shared fixtures: repository paths and small PDF builders."""

from __future__ import annotations

import os
from pathlib import Path

import pymupdf
import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("PAGEROUTER_CORPUS", REPO.parent / "shared" / "corpus" / "real"))

# Keep onnxruntime/BLAS from oversubscribing the 2 cores when several engines load.
os.environ.setdefault("OMP_NUM_THREADS", "2")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def corpus_pdfs() -> list[Path]:
    """The shared real-PDF corpus; tests that need it fail loudly if CI did not lay it out."""
    files = sorted(CORPUS.glob("*.pdf"))
    if not files:
        pytest.fail(f"real corpus not found at {CORPUS} (CI lays shared/ beside the checkout)")
    return files


def save_pdf(doc: pymupdf.Document, path: Path) -> Path:
    doc.save(path)
    doc.close()
    return path


@pytest.fixture(scope="session")
def mixed_pdf(tmp_path_factory) -> Path:
    """A small born-digital + scanned + blank PDF for the no-Ray graph and ingress tests."""
    from pagerouter.bench import synth

    path = tmp_path_factory.mktemp("local") / "mixed.pdf"
    doc = pymupdf.open()
    synth.add_text_page(doc, ["The quick brown fox jumps over the lazy dog. " * 3], title="In process")
    synth.add_scanned_page(doc, ["Invoice number 4711", "Total due 99 EUR"], size=(320, 220), fontsize=14)
    synth.add_blank_page(doc)
    doc.save(path)
    doc.close()
    return path


def require_vlm_cpu() -> None:
    """Skip when the vlm-cpu extra was deliberately left out (PAGEROUTER_VLM_CPU=0); otherwise a
    missing or broken install fails the test loudly, since CI installs it (scripts/test.sh)."""
    if os.environ.get("PAGEROUTER_VLM_CPU", "1") == "0":
        pytest.skip("PAGEROUTER_VLM_CPU=0: the vlm-cpu extra is not installed")


@pytest.fixture(scope="session")
def tiny_vlm_dir(tmp_path_factory) -> Path:
    """A tiny random-weight Qwen2-VL (tests/tiny_vlm.py), built once per session."""
    require_vlm_cpu()
    from .tiny_vlm import build_tiny_qwen2vl

    return build_tiny_qwen2vl(tmp_path_factory.mktemp("tiny_vlm") / "qwen2vl-tiny")
