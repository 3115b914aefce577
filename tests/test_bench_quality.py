"""The quality benchmark's generator and checkers: each checker passes on the truth and fails
on a wrong answer, and every generated family yields a PDF whose own text holds its truth."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pymupdf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from quality_checks import Check, find_near, normalize, parse_html_tables, parse_markdown_tables, run_check  # noqa: E402

TRUTH_TABLE = """Intro text.

| Item | $ | Mar 3, 2024 | Mar 5, 2023 |
| --- | --- | --- | --- |
| Net sales | $ | 1,204 | 998 |
| Cost of sales |  | (410) | (377) |

After."""

SPLIT_TABLE = """Year Ended Mar 3, 2024

| Net sales | $ | 1,204 | 998 |
| --- | --- | --- | --- |
| Cost of sales |  | (410) | (377) |"""


def ok(chk: Check, md: str) -> bool:
    return run_check(chk, md)[0]


def test_normalize_and_fuzzy_find():
    assert normalize("**Fine**  “quoted” — ﬁle\n\nnext") == 'Fine "quoted" - file next'
    assert find_near("was King of the English", "he was King of the English then", 0) == [3]
    assert find_near("was King of the English", "he was Kinq of the English then", 1)
    assert not find_near("was King of the English", "he wasKing ofthe Engl1sh then", 1)


def test_present_absent_order():
    md = "# Title\n\nAlpha sentence comes first.\n\nBeta sentence comes second."
    assert ok(Check("present", text="Alpha sentence comes first."), md)
    assert not ok(Check("present", text="Gamma sentence never."), md)
    assert ok(Check("absent", text="Downloaded from x.org on May 1"), md)
    assert not ok(Check("absent", text="Beta sentence"), md)
    order = Check("order", before="Alpha sentence comes first.", after="Beta sentence comes second.")
    assert ok(order, md)
    assert not ok(order, "Beta sentence comes second.\n\nAlpha sentence comes first.")
    # Prose a reader fenced as code is still found: fences are syntax, like emphasis.
    assert ok(Check("present", text="one two three four"), "one two\n```\n\n```\nthree four")


def test_paragraph_checks():
    md = "First note text here.\n\nSecond note text here."
    sep = Check("separate", before="First note text", after="Second note text")
    assert ok(sep, md)
    assert not ok(sep, "First note text here. Second note text here.")
    tog = Check("together", before="First note", after="Second note")
    assert ok(tog, "First note text here.\nSecond note text here.")
    assert not ok(tog, md)
    near = Check("near", before="caption ends here.", after="Item", max_gap=20)
    assert ok(near, "Table 1. The caption ends here.\n\n| Item | Value |")
    assert not ok(near, "Table 1. The caption ends here.\n\n" + "Other column text. " * 5 + "\n\n| Item | Value |")


def test_marks_and_headings():
    for md in ("E = mc<sup>2</sup> holds", "E = mc^2 holds", "E = mc^{2} holds", "E = mc² holds"):
        assert ok(Check("sup", base="mc", mark="2"), md), md
    assert not ok(Check("sup", base="mc", mark="2"), "E = mc2 holds")
    assert ok(Check("sub", base="CO", mark="2"), "CO<sub>2</sub> rose")
    assert not ok(Check("sub", base="CO", mark="2"), "CO2 rose")
    assert ok(Check("heading", text="Annual figures"), "## Annual figures\n\nBody")
    assert not ok(Check("heading", text="Annual figures"), "Annual figures\n\nBody")
    # Presentation forms pass only once normalised when a check asks for NFC.
    word = "\u0645\u062f\u064a\u0646\u0629"
    forms = "\ufee3\ufeaa\ufef3\ufee8\ufe94"
    assert ok(Check("present", text=word, nfc=True), word)
    assert not ok(Check("present", text=word, nfc=True), forms)


def test_heading_level_and_count():
    md = "# Annual report\n\nBody text.\n\n## Harbour works\n\n<h3>Dune ridges</h3>"
    assert ok(Check("heading", text="Annual report", level=1), md)
    assert ok(Check("heading", text="Harbour works", level=2), md)
    assert ok(Check("heading", text="Dune ridges", level=3), md)
    assert not ok(Check("heading", text="Harbour works", level=1), md)
    assert not ok(Check("heading", text="Body text", level=2), md)
    # fake bold read twice: present, but more often than drawn
    once = Check("present", text="Harbour works", max_count=1)
    assert ok(once, md)
    assert not ok(once, md + "\n\n## Harbour works")


def test_table_relations():
    assert len(parse_markdown_tables(TRUTH_TABLE)) == 1
    truth = [Check("table", cell="1,204", left_heading="Net sales", top_heading="Mar 3, 2024"),
             Check("table", cell="998", left="1,204"), Check("table", cell="1,204", left="Net sales"),
             Check("table", cell="(410)", up="1,204"), Check("table", cell="1,204", down="(410)")]
    for chk in truth:
        assert ok(chk, TRUTH_TABLE), chk
    # A header split off the body (issue 3): the column has no date above its values.
    assert not ok(truth[0], SPLIT_TABLE)
    assert not ok(Check("table", cell="998", left="Net sales"), TRUTH_TABLE)
    assert not ok(Check("table", cell="1,204", top_heading="Mar 5, 2023"), TRUTH_TABLE)
    html = ("<table><tr><th></th><th colspan='2'>Year Ended</th></tr><tr><th>Item</th><th>Mar 3, 2024</th><th>Mar 5, 2023</th></tr>"
            "<tr><td>Net sales</td><td>$1,204</td><td>998</td></tr></table>")
    assert parse_html_tables(html)[0].header_rows == 2
    assert ok(Check("table", cell="1,204", left_heading="Net sales", top_heading="Year Ended"), html)
    assert ok(Check("table", cell="998", left="1,204", top_heading="Mar 5, 2023"), html)


@pytest.mark.parametrize("kind", ["order", "furniture", "table", "rotated", "spacing", "marks"])
def test_generated_pages_carry_their_truth(kind):
    """MuPDF's own text of a generated page holds every sentence a present/order check names:
    the generator draws what its checks ask for (no sentence cut off the page)."""
    from bench_quality import generate

    cases = generate([kind], 2, seed=11)
    assert len(cases) == 2 and len({c.name for c in cases}) == 2
    for case in cases:
        assert case.checks, case.name
        doc = pymupdf.open(stream=case.pdf)
        text = "\n\n".join(p.get_text() for p in doc)
        # Rotated and sideways pages: MuPDF's order may differ, so only presence is asserted.
        for chk in case.checks:
            for t in (chk.text, chk.before, chk.after) if chk.type in ("present", "order", "near") else ():
                if t and not chk.nfc:
                    assert find_near(normalize(t), normalize(text), max(chk.max_diffs, 1)), (case.name, t)
    again = generate([kind], 2, seed=11)
    assert [c.checks for c in again] == [c.checks for c in cases], "seeded generation is repeatable"
