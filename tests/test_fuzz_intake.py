"""Fuzzing intake and triage with mutated generated PDFs (Hypothesis).

Each example takes a generated PDF (text with running heads, a table, a picture; plain or with
compressed object streams) and applies 1-3 mutations: bit flips, truncation, a duplicated xref
section, a random object stream, random bytes in place of a content stream, a spliced chunk.
Every outcome must be a clean `InputError` or a `Document` with every page accounted for (pages
1..N, each ok / flagged / failed with its reason); never an unhandled exception, a hang or a
lost page. The conversion runs as a user's would: MuPDF's work in isolation workers, so a crash
in MuPDF is a failed page (counted, printed at the end with -s), and an exception that escaped
the per-page handlers in a worker fails the test.

CI runs a bounded, derandomized sample (a few seconds). A longer run:

    PAGEROUTER_FUZZ_EXAMPLES=2000 PAGEROUTER_FUZZ_SEED=1 python -m pytest -s tests/test_fuzz_intake.py

(`PAGEROUTER_FUZZ_SEED` switches to random exploration from that seed; without it the examples
are the same every run.)
"""

from __future__ import annotations

import collections
import os

import pymupdf
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from pagerouter.bench import synth
from pagerouter.config import PagerouterConfig
from pagerouter.convert.converter import Converter
from pagerouter.intake.inputs import InputError

from . import textlayer_fixtures as F
from .pdf_mutations import OPS, HypothesisPick, mutate

EXAMPLES = int(os.environ.get("PAGEROUTER_FUZZ_EXAMPLES", "30"))
SEED = os.environ.get("PAGEROUTER_FUZZ_SEED")
FINDINGS: collections.Counter[str] = collections.Counter()


def _base_pdfs() -> list[bytes]:
    d = pymupdf.open()
    for i in range(2):
        synth.add_text_page(d, [f"Page {i + 1}: the quick brown fox jumps over the lazy dog. " * 3],
                            title=f"Section {i + 1}", header="Annual report", footer=str(i + 1))
    synth.add_table_page(d, [["Name", "Qty"], ["apple", "3"], ["pear", "5"]])
    page = d.new_page()
    F.put(page, 56, 80, "Text above the picture.", 10)
    page.insert_image(pymupdf.Rect(100, 120, 400, 320), stream=F.png_bytes())
    plain = d.tobytes()  # uncompressed: flips land in content streams and dictionaries
    packed = d.tobytes(garbage=3, deflate=True, use_objstms=1)  # object streams, compressed xref
    d.close()
    return [plain, packed]


BASES = _base_pdfs()


@st.composite
def mutated_pdfs(draw) -> bytes:
    base = draw(st.sampled_from(BASES))
    ops = draw(st.lists(st.sampled_from(OPS), min_size=1, max_size=3))
    return mutate(base, ops, HypothesisPick(draw))


@pytest.fixture(scope="module")
def fuzz_converter():
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"page_timeout_s": 20, "open_timeout_s": 30}})
    with Converter(cfg) as conv:
        yield conv
    if FINDINGS:
        print("\nfuzz findings:", dict(FINDINGS))


def _check(conv: Converter, data: bytes) -> None:
    try:
        doc = conv.convert(data, name="fuzz.pdf")
    except InputError as exc:
        assert str(exc).startswith("fuzz.pdf") and "\n" not in str(exc)
        FINDINGS["input error"] += 1
        return
    assert [p.number for p in doc.pages] == list(range(1, doc.page_count + 1)), "a page was lost"
    for p in doc.pages:
        assert p.status in ("ok", "flagged", "failed")
        if p.status == "failed":
            assert p.error and p.error.startswith(f"fuzz.pdf: page {p.number}: ")
            # an exception that escaped the per-page handlers is a bug, not a damaged file
            assert "reading failed in the worker" not in p.error, p.error
            FINDINGS["worker crash" if "worker crashed" in p.error else
                     "page timeout" if "took longer" in p.error else "failed page"] += 1
        elif p.status == "flagged":
            assert p.flags
    FINDINGS["document"] += 1


_settings = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=SEED is None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)


@_settings
@given(data=mutated_pdfs())
def _fuzz(conv: Converter, data: bytes) -> None:
    _check(conv, data)


if SEED is not None:
    _fuzz = seed(int(SEED))(_fuzz)


def test_mutated_pdfs_are_clean_errors_or_whole_documents(fuzz_converter):
    _fuzz(fuzz_converter)
    # the next good request is whole
    doc = fuzz_converter.convert(BASES[0], name="good.pdf")
    assert [p.status for p in doc.pages][:2] == ["ok", "ok"]


@pytest.mark.parametrize("isolated", [True, False], ids=["isolated", "in-process"])
def test_found_by_fuzzing_a_page_tree_cut_after_its_kids_is_a_clean_error(isolated):
    """A file cut right after the page tree's /Kids made `doc.page_count` raise RuntimeError
    ("Invalid number of pages") out of `open_source`: a traceback in-process."""
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}, "isolation": {"enabled": isolated}})
    with Converter(cfg) as conv, pytest.raises(InputError, match=r"^cut\.pdf: corrupt PDF \(PyMuPDF: .*Invalid number of pages\)$"):
        conv.convert(BASES[0][:184], name="cut.pdf")
