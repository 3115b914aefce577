"""Failure handling found in review: no lost text, no cross-talk between documents, no
corrupted stdout, one-line errors for output problems."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import threading

import pymupdf
import pytest
from PIL import Image, ImageDraw

from pagerouter.cli.main import main
from pagerouter.config import PagerouterConfig
from pagerouter.intake.inputs import open_source
from pagerouter.model import Block, Page, TriageDecision
from pagerouter.flow.pipeline import DocumentTriage, TriageOutcome, convert_pages
from pagerouter.common.stages import OcrCalls, OcrTask
from pagerouter.bench.synth import add_text_page


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from pagerouter.cli.main import main; raise SystemExit(main())", *args],
                          capture_output=True, text=True, timeout=300)


def test_truncated_image_error_is_one_line_and_stdout_stays_clean(tmp_path):
    img = Image.new("RGB", (400, 300), "white")
    ImageDraw.Draw(img).text((20, 20), "Hello truncated world", fill="black")
    buf = io.BytesIO()
    img.save(buf, "PNG")
    p = tmp_path / "trunc.png"
    p.write_bytes(buf.getvalue()[: len(buf.getvalue()) * 2 // 3])
    r = _cli("convert", str(p), "--format", "json", "-q")
    assert r.stdout == "", "MuPDF's decoder messages must never reach stdout"
    assert r.returncode == 1 and "trunc.png" in r.stderr and "Traceback" not in r.stderr  # an input error


def test_two_inputs_with_one_stem_are_a_usage_error(tmp_path):
    doc = pymupdf.open()
    add_text_page(doc, ["Some born-digital text that reads perfectly well as it is."])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    doc.save(tmp_path / "a" / "x.pdf")
    doc.save(tmp_path / "b" / "x.pdf")
    code = main(["convert", "-o", str(tmp_path / "out"), str(tmp_path / "a" / "x.pdf"), str(tmp_path / "b" / "x.pdf")])
    assert code == 2 and not (tmp_path / "out" / "x.md").exists()


def test_unwritable_output_is_one_line_exit_2(tmp_path):  # cannot create the -o folder: a usage error
    doc = pymupdf.open()
    add_text_page(doc, ["Some born-digital text that reads perfectly well as it is."])
    doc.save(tmp_path / "x.pdf")
    (tmp_path / "afile").write_text("I am a file, not a directory")
    r = _cli("convert", "-o", str(tmp_path / "afile"), str(tmp_path / "x.pdf"))
    assert r.returncode == 2 and "afile" in r.stderr and "Traceback" not in r.stderr


def test_ocr_failure_on_a_mixed_page_keeps_its_text_layer():
    """The page fails, but the text-layer blocks it already had are not thrown away."""

    class FakeBrokenLayout(Exception):
        pass

    async def layout(task):
        raise FakeBrokenLayout("layout engine crashed")

    async def read(task, lay):  # never reached
        raise AssertionError

    text = Block(text="Exact text from the layer", role="paragraph", bbox=(10, 10, 200, 30), page=1,
                 engine="pymupdf", route="text_layer", confidence=1.0)
    page = Page(number=1, status="ok", route="mixed", blocks=[text], flags=["damaged_page"],
                triage=TriageDecision(route="mixed"))
    task = OcrTask(source="m.pdf", number=1, width=100, height=100, decision=page.triage,
                   image=__import__("numpy").zeros((10, 10, 3), "uint8"), scale=1.0, page_bytes=b"")

    async def outcomes():
        yield TriageOutcome(page, task)

    async def run():
        return [p async for p in convert_pages(outcomes(), "m.pdf", PagerouterConfig(), OcrCalls(layout, read))]

    (out,) = asyncio.run(run())
    assert out.status == "failed" and "m.pdf: page 1" in out.error and "layout engine crashed" in out.error
    assert [b.text for b in out.blocks] == ["Exact text from the layer"] and "damaged_page" in out.flags


def test_concurrent_documents_do_not_share_damage_flags(tmp_path):
    """MuPDF's warning store is process-global: a damaged document triaged in one thread must
    not flag the pages of a clean document triaged at the same time in another."""
    clean, damaged = pymupdf.open(), pymupdf.open()
    for i in range(25):
        add_text_page(clean, [f"Clean page {i}: the quick brown fox jumps over the lazy dog."])
        add_text_page(damaged, [f"Damaged page {i}: the quick brown fox jumps over the lazy dog."])
        xref = damaged[i].get_contents()[0]
        damaged.update_stream(xref, b"BT /F1 12 Tf 72 72 Td (unterminated Tj ET q q q /Im1 Do")
    clean.save(tmp_path / "clean.pdf")
    damaged.save(tmp_path / "damaged.pdf")
    cfg = PagerouterConfig.model_validate({"ocr": {"enabled": False}})
    results: dict[str, list] = {}

    def run(name):
        src = open_source(tmp_path / f"{name}.pdf")
        results[name] = list(DocumentTriage(cfg).iter_pages(src, list(range(1, 26))))

    threads = [threading.Thread(target=run, args=(n,)) for n in ("clean", "damaged")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sum("damaged_page" in o.page.flags for o in results["clean"]) == 0
    assert sum("damaged_page" in o.page.flags for o in results["damaged"]) == 25


def test_one_page_of_numbered_lines_is_body_text_not_running_heads(tmp_path, capsys):
    doc = pymupdf.open()
    page = doc.new_page()
    for i in range(12):
        page.insert_text((72, 72 + i * 14), f"Line {i} of the body text that goes on.", fontsize=11)
    doc.save(tmp_path / "lines.pdf")
    assert main(["convert", str(tmp_path / "lines.pdf"), "-q"]) == 0
    out = capsys.readouterr().out
    assert "Line 0 of the body" in out and "Line 1 of the body" in out


@pytest.mark.parametrize("page", ["0", "0-2", "2-1"])
def test_bad_page_numbers_are_usage_errors(tmp_path, page):
    doc = pymupdf.open()
    add_text_page(doc, ["text"])
    doc.save(tmp_path / "x.pdf")
    assert main(["convert", str(tmp_path / "x.pdf"), "--pages", page]) == 2
