"""The `pagerouter` CLI end to end on generated PDFs: outputs, summary, errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pymupdf
import pytest

from pagerouter.cli.main import main
from pagerouter.model import Document
from pagerouter.bench.synth import LOREM, add_blank_page, add_text_page


@pytest.fixture(scope="module")
def born_digital(tmp_path_factory):
    p = tmp_path_factory.mktemp("cli") / "report.pdf"
    doc = pymupdf.open()
    add_text_page(doc, [LOREM, "Second paragraph about routing pages."], title="Routing report")
    add_text_page(doc, ["Another page of born-digital text with several ordinary words in it."])
    add_blank_page(doc)
    doc.save(p)
    return p


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from pagerouter.cli.main import main; raise SystemExit(main())", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def _no_ocr_config(tmp_path):
    cfg = tmp_path / "no-ocr.yaml"
    cfg.write_text("ocr:\n  enabled: false\n")
    return cfg


def test_convert_markdown_to_stdout(born_digital, capsys, tmp_path):
    code = main(["convert", str(born_digital), "--config", str(_no_ocr_config(tmp_path))])
    out, err = capsys.readouterr()
    assert code == 0
    assert "# Routing report" in out
    assert "The committee reviewed the quarterly figures" in out
    assert "Another page of born-digital text" in out
    # route summary goes to stderr so stdout stays clean Markdown
    assert "text_layer" in err and "blank" in err and "total" in err


def test_convert_json_keeps_contract(born_digital, capsys, tmp_path):
    code = main(["convert", str(born_digital), "--format", "json", "-q", "--config", str(_no_ocr_config(tmp_path))])
    out, _ = capsys.readouterr()
    assert code == 0
    data = json.loads(out)
    Document.model_validate(data)
    assert [p["number"] for p in data["pages"]] == [1, 2, 3]
    assert [p["route"] for p in data["pages"]] == ["text_layer", "text_layer", "blank"]
    for p in data["pages"]:
        assert {"number", "status", "route", "triage", "rotation", "blocks"} <= p.keys()
        assert p["triage"]["reasons"], "every decision carries reasons"
        for b in p["blocks"]:
            assert {"text", "role", "bbox", "engine", "route", "confidence"} <= b.keys()
            assert b["engine"] == "pymupdf" and b["route"] == "text_layer"


def test_page_selection_and_outdir(born_digital, tmp_path):
    out = tmp_path / "out"
    code = main(["convert", str(born_digital), "--pages", "2", "-o", str(out), "--format", "both", "-q",
                 "--config", str(_no_ocr_config(tmp_path))])
    assert code == 0
    data = json.loads((out / "report.json").read_text())
    assert [p["number"] for p in data["pages"]] == [2]
    assert "Another page" in (out / "report.md").read_text()


def test_ocr_pages_are_needs_ocr_when_ocr_disabled(tmp_path, capsys):
    from pagerouter.bench.synth import add_scanned_page

    doc = pymupdf.open()
    add_scanned_page(doc, ["A scanned page with text only in the picture."], dpi=100)
    p = tmp_path / "scan.pdf"
    doc.save(p)
    code = main(["convert", str(p), "--format", "json", "-q", "--config", str(_no_ocr_config(tmp_path))])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    page = data["pages"][0]
    assert page["route"] == "ocr" and page["status"] == "flagged" and "needs_ocr" in page["flags"]


def test_bad_inputs_exit_1_with_one_line(tmp_path):
    bad = tmp_path / "bad.pdf"
    bad.write_text("not a pdf at all")
    r = run_cli("convert", str(bad), str(tmp_path / "missing.pdf"), "-o", str(tmp_path / "o"))
    assert r.returncode == 1  # input errors; 2 is for usage errors (pagerouter --help lists the codes)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("pagerouter: error")]
    assert any("bad.pdf" in ln and "not a PDF" in ln for ln in lines)
    assert any("missing.pdf" in ln and "no such file" in ln for ln in lines)
    assert "Traceback" not in r.stderr


def test_usage_errors(born_digital, tmp_path):
    assert main(["convert", str(born_digital), str(born_digital)]) == 2  # several inputs need -o
    assert main(["convert", str(born_digital), "--pages", "9"]) == 1  # an input error: the page is not in this file
    badcfg = tmp_path / "bad.yaml"
    badcfg.write_text("triage:\n  no_such_knob: 3\n")
    with pytest.raises(SystemExit) as ei:
        main(["convert", str(born_digital), "--config", str(badcfg)])
    assert ei.value.code == 2


def test_failed_page_exit_1_others_survive(born_digital, tmp_path, monkeypatch, capsys):
    import pagerouter.flow.pipeline as pipeline

    real = pipeline.extract_textdict

    def breaks_on_page_2(page):
        if page.number == 1:  # 0-based: the second page
            raise RuntimeError("simulated broken content stream")
        return real(page)

    monkeypatch.setattr(pipeline, "extract_textdict", breaks_on_page_2)
    cfg = tmp_path / "in-process.yaml"  # the patch lives in this process: read the pages here
    cfg.write_text("ocr:\n  enabled: false\nisolation:\n  enabled: false\n")
    code = main(["convert", str(born_digital), "--format", "json", "-q", "--config", str(cfg)])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 1
    assert [p["status"] for p in data["pages"]] == ["ok", "failed", "ok"]
    assert "page 2" in data["pages"][1]["error"] and "report.pdf" in data["pages"][1]["error"]
    assert "page 2" in captured.err


def test_triage_command(born_digital, capsys):
    assert main(["triage", str(born_digital)]) == 0
    out = capsys.readouterr().out
    assert "page 1: text_layer" in out and "page 3: blank" in out
    assert "scores:" in out


def test_damaged_page_is_flagged_not_silently_blank(tmp_path, capsys):
    """A page whose content stream is broken parses 'fine' in MuPDF but loses its text:
    it must come out flagged with the reason, and the other pages untouched."""
    doc = pymupdf.open()
    for i in range(3):
        add_text_page(doc, [f"Page {i + 1}: the quick brown fox jumps over the lazy dog again and again."])
    xref = doc[1].get_contents()[0]
    doc.update_stream(xref, b"BT /F1 12 Tf 72 72 Td (unterminated string Tj ET q q q /Im1 Do")
    p = tmp_path / "damaged.pdf"
    doc.save(p)
    code = main(["convert", str(p), "--format", "json", "-q", "--config", str(_no_ocr_config(tmp_path))])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    pages = data["pages"]
    assert [pg["status"] for pg in pages] == ["ok", "flagged", "ok"]
    assert "damaged_page" in pages[1]["flags"]
    assert any("damaged.pdf: page 2" in c["reason"] for c in pages[1]["checks"])


def _cut_before_last_page(tmp_path):
    """A 3-page born-digital PDF cut off just before page 3's own object: MuPDF repairs it and
    hands out page 3 as an empty page of default size (which triage alone sees as blank)."""
    doc = pymupdf.open()
    for i in range(3):
        add_text_page(doc, [f"Page {i + 1} says: the quick brown fox jumps over the lazy dog again."])
    data = doc.tobytes(garbage=0, deflate=False)
    xref, page2_contents = doc[2].xref, doc[1].get_contents()[-1]
    doc.close()
    cut = data.index(f"\n{xref} 0 obj".encode())
    assert cut > data.index(f"\n{page2_contents} 0 obj".encode())  # pages 1 and 2 survive the cut
    p = tmp_path / "cut.pdf"
    p.write_bytes(data[:cut])
    return p


def test_triage_agrees_with_convert_on_a_page_that_cannot_be_read(tmp_path, capsys):
    """Where `convert` says a page `failed` (its object lost from a truncated file), `triage`
    says `failed` with the same reason (exit 1), never `blank`; the readable pages keep their route."""
    p = _cut_before_last_page(tmp_path)
    code = main(["convert", str(p), "--format", "json", "-q", "--config", str(_no_ocr_config(tmp_path))])
    converted = json.loads(capsys.readouterr().out)["pages"]
    assert code == 1 and converted[2]["status"] == "failed", converted[2]

    assert main(["triage", str(p), "--config", str(_no_ocr_config(tmp_path))]) == 1
    out, err = capsys.readouterr()
    assert "page 3: failed" in out and "page 3: blank" not in out, out
    assert "object is missing" in out and "cut.pdf: page 3" in err
    assert "page 1: text_layer" in out

    assert main(["triage", str(p), "--json", "--config", str(_no_ocr_config(tmp_path))]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_page = {r["page"]: r for r in rows}
    assert sorted(by_page) == [1, 2, 3]
    for pg in converted:  # the same status on every page, and the same route where one was taken
        row = by_page[pg["number"]]
        assert row["status"] == pg["status"], (pg["number"], row, pg["status"])
        if pg["status"] != "failed":
            assert row["route"] == pg["route"]
    assert by_page[3]["route"] is None and "object is missing" in by_page[3]["error"]


def test_triage_flags_a_damaged_page_as_convert_does(tmp_path, capsys):
    doc = pymupdf.open()
    for i in range(3):
        add_text_page(doc, [f"Page {i + 1}: the quick brown fox jumps over the lazy dog again and again."])
    xref = doc[1].get_contents()[0]
    doc.update_stream(xref, b"BT /F1 12 Tf 72 72 Td (unterminated string Tj ET q q q /Im1 Do")
    p = tmp_path / "damaged.pdf"
    doc.save(p)
    assert main(["triage", str(p), "--json", "--config", str(_no_ocr_config(tmp_path))]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["status"] for r in rows] == ["ok", "flagged", "ok"]
    assert rows[1]["flags"] == ["damaged_page"] and "damaged.pdf: page 2" in rows[1]["damage"]
