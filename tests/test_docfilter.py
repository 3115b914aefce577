"""The document filter (pagerouter/intake/docfilter.py): decisions and reasons on synthetic PDFs with real
sentences, `pagerouter convert --filter`, and `pagerouter batch` with the filter on and off.
No Ray; OCR off via a config file so batch runs stay fast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pagerouter.batch.journal import read_records
from pagerouter.cli.main import main
from pagerouter.config import PagerouterConfig
from pagerouter.config.filter import FilterConfig
from pagerouter.intake.docfilter import Evidence, judge, judge_file
from tests.docfilter_fixtures import ENGLISH, FRENCH, GERMAN, RUSSIAN, SPAM, form_letter, pdf, scanned


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("filter")
    return {
        "en": pdf(d / "en.pdf", [[p] for p in ENGLISH], title="Annual report"),
        "de": pdf(d / "de.pdf", [GERMAN], title="Jahresbericht"),
        "fr": pdf(d / "fr.pdf", [FRENCH], title="Rapport annuel"),
        "ru": pdf(d / "ru.pdf", [RUSSIAN], title="Годовой отчёт"),
        "spam": pdf(d / "spam.pdf", [SPAM]),
        "letter": form_letter(d / "letter.pdf", 10),
        "scan": scanned(d / "scan.pdf"),
    }


def decide(path: Path, **kw):
    # isolate=False: the evidence read is the same in-process; one test below covers the child
    return judge_file(path.read_bytes(), FilterConfig(enabled=True, **kw), isolate=False)


def test_german_and_french_kept_when_configured_skipped_when_only_english(docs):
    for lang in ("de", "fr"):
        kept = decide(docs[lang], keep_languages=["en", "de", "fr"])
        assert kept.keep, kept.reasons
        assert kept.scores["language"] == lang
        assert f"language {lang}" in " ".join(kept.reasons)
        skipped = decide(docs[lang], keep_languages=["en"])
        assert not skipped.keep
        assert len(skipped.reasons) == 1
        assert skipped.reasons[0].startswith(f"language {lang} (stopword share 0.")
        assert "not in keep_languages ['en']" in skipped.reasons[0]
        assert skipped.scores[f"lang_{lang}"] > 0.1 > skipped.scores["lang_en"]


def test_english_report_kept_and_detected(docs):
    d = decide(docs["en"], keep_languages=["en"], keep_scripts=["Latin"])
    assert d.keep and d.reasons[0] == "passed every check"
    assert d.scores["language"] == "en" and d.scores["script"] == "Latin"
    assert d.scores["line_repeat_share"] < 0.3  # only the title repeats (1 line of ~5 per page)


def test_cyrillic_by_script(docs):
    skipped = decide(docs["ru"], keep_scripts=["Latin"])
    assert not skipped.keep
    assert skipped.reasons == [f"script Cyrillic ({skipped.scores['script_share']:.2f} of letters) not in keep_scripts ['Latin']"]
    assert decide(docs["ru"], keep_scripts=["Latin", "Cyrillic"]).keep
    # keep_languages of Latin-script languages only: Cyrillic text is none of them
    by_lang = decide(docs["ru"], keep_languages=["en", "de"])
    assert not by_lang.keep and "script Cyrillic: none of keep_languages" in by_lang.reasons[0]


def test_seo_spam_skipped(docs):
    d = decide(docs["spam"])
    assert not d.keep
    assert any(r.startswith("SEO/download spam:") for r in d.reasons)
    assert d.scores["spam_share"] > 0.5


def test_keyword_stuffing_skipped():
    stuffed = " ".join(f"Cheap flights to Lisbon are the flights you want, flights every day number {i}." for i in range(20))
    d = judge(Evidence(pages=[stuffed]), FilterConfig(enabled=True))
    assert not d.keep and any(r.startswith("keyword stuffing: 'flights'") for r in d.reasons)


def test_form_letter_over_ten_pages_skipped(docs):
    d = decide(docs["letter"])
    assert not d.keep
    assert d.reasons == [f"form letter/boilerplate: {d.scores['line_repeat_share']:.2f} of lines repeat across 10 pages >= 0.6"]
    assert d.scores["line_repeat_share"] > 0.8


def test_blank_template_skipped():
    page = "Name: ______  Date: ______\nAddress: __________\nSigned: ______\n" * 3 + "Dear [First Name], thank you.\n"
    d = judge(Evidence(pages=[page * 3]), FilterConfig(enabled=True, min_chars=50))
    assert not d.keep and any(r.startswith("blank form/template:") for r in d.reasons)


def test_scanned_page_kept_unjudged_even_when_only_other_languages_kept(docs):
    d = decide(docs["scan"], keep_languages=["de"], keep_scripts=["Cyrillic"])
    assert d.keep and d.reasons == ["no text layer to judge"]
    assert d.scores["chars"] == 0 and d.scores["images"] == 1


def test_too_little_text_skipped():
    d = judge(Evidence(pages=["Total: 42", ""]), FilterConfig(enabled=True, no_text_chars=5))
    assert not d.keep and d.reasons[0].startswith("too little text: 8 characters < min_chars 200")


def test_isolated_read_equals_in_process_and_bad_bytes_are_kept_unjudged(docs):
    cfg = FilterConfig(enabled=True, keep_languages=["en"])
    a = judge_file(docs["de"].read_bytes(), cfg, isolate=True)
    assert (a.keep, a.reasons, a.scores) == (lambda d: (d.keep, d.reasons, d.scores))(decide(docs["de"], keep_languages=["en"]))
    bad = judge_file(b"%PDF-1.7 this is not a pdf", cfg, isolate=True)
    assert bad.keep and bad.reasons[0].startswith("not judged: ")


def test_filter_is_off_by_default_and_its_config_is_checked():
    assert PagerouterConfig().filter.enabled is False
    for name, f in FilterConfig.model_fields.items():
        assert f.description, f"{name} has no description"
    with pytest.raises(ValueError, match="no stopword profile for \\['xx'\\]"):
        FilterConfig(keep_languages=["en", "xx"])
    with pytest.raises(ValueError, match="unknown scripts"):
        FilterConfig(keep_scripts=["latin"])
    assert FilterConfig(keep_scripts=["Japanese", "Cyrillic"]).keep_scripts == ["Japanese", "Cyrillic"]


def test_convert_filter_flag(docs, tmp_path, capsys):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("ocr:\n  enabled: false\nisolation:\n  enabled: false\nfilter:\n  keep_languages: [en]\n")
    out = tmp_path / "out"
    assert main(["convert", str(docs["de"]), "--filter", "--config", str(cfg), "-o", str(out), "-q"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(docs["de"]) in err[0] and "language de" in err[0]
    assert not list(out.iterdir())
    assert main(["convert", str(docs["en"]), "--filter", "--config", str(cfg), "-o", str(out), "-q"]) == 0
    assert (out / "en.md").exists()


def _batch_outputs(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.suffix in (".md", ".json")
            and not p.name.startswith("pagerouter-batch")}


def test_batch_filter_skips_with_reasons_and_does_not_rejudge(docs, tmp_path, capsys, monkeypatch):
    inputs = [str(docs[k]) for k in ("en", "de", "spam", "letter", "scan")]
    plain = tmp_path / "plain.yaml"
    plain.write_text("ocr:\n  enabled: false\nisolation:\n  enabled: false\n")
    on = tmp_path / "on.yaml"
    on.write_text("ocr:\n  enabled: false\nisolation:\n  enabled: false\nfilter:\n  enabled: true\n  keep_languages: [en]\n")

    off_out, on_out = tmp_path / "off", tmp_path / "on"
    assert main(["batch", *inputs, "-o", str(off_out), "--config", str(plain), "-q"]) == 0
    assert {r["status"] for r in read_records(off_out)} == {"done"}
    # filter off by default: the same run with an explicit `filter: {enabled: false}` writes the same outputs
    # and the same config hash (journals from before the filter existed stay valid)
    off2 = tmp_path / "off2"
    (tmp_path / "off2.yaml").write_text("ocr:\n  enabled: false\nisolation:\n  enabled: false\nfilter:\n  enabled: false\n  keep_languages: [en]\n")
    assert main(["batch", *inputs, "-o", str(off2), "--config", str(tmp_path / "off2.yaml"), "-q"]) == 0
    strip = lambda t: json.dumps({k: v for k, v in json.loads(t).items() if k != "timings"})  # noqa: E731
    a, b = _batch_outputs(off_out), _batch_outputs(off2)
    assert a.keys() == b.keys() and len(a) == 10
    assert all(a[k] == b[k] for k in a if k.endswith(".md"))
    assert {r["config_hash"] for r in read_records(off_out)} == {r["config_hash"] for r in read_records(off2)}

    assert main(["batch", *inputs, "-o", str(on_out), "--config", str(on), "-q"]) == 0
    recs = {Path(r["input"]).stem: r for r in read_records(on_out)}
    assert {k: r["status"] for k, r in recs.items()} == {
        "en": "done", "de": "skipped", "spam": "skipped", "letter": "skipped", "scan": "done"}
    assert "language de" in recs["de"]["reasons"][0] and recs["de"]["scores"]["language"] == "de"
    assert recs["letter"]["reasons"][0].startswith("form letter/boilerplate")
    assert sorted(p.name for p in on_out.glob("*.md")) == ["en.md", "scan.md"]
    summary = json.loads((on_out / "pagerouter-batch.summary.json").read_text())
    assert (summary["done"], summary["filtered"], summary["failed"]) == (2, 3, 0)
    assert {Path(f["input"]).stem for f in summary["filtered_files"]} == {"de", "spam", "letter"}

    # a re-run judges nothing again (same bytes, same config): no new journal lines, filter not called
    import pagerouter.intake.docfilter as docfilter

    monkeypatch.setattr(docfilter, "judge_file", lambda *a, **k: pytest.fail("re-judged"))
    n = len(read_records(on_out))
    assert main(["batch", *inputs, "-o", str(on_out), "--config", str(on), "-q"]) == 0
    assert len(read_records(on_out)) == n
    monkeypatch.undo()
    # a changed filter config judges again: German kept now
    on.write_text("ocr:\n  enabled: false\nisolation:\n  enabled: false\nfilter:\n  enabled: true\n  keep_languages: [en, de]\n")
    assert main(["batch", *inputs, "-o", str(on_out), "--config", str(on), "-q"]) == 0
    assert (on_out / "de.md").exists()


def test_reader_child_hang_is_killed_kept_unjudged_and_the_next_file_is_read(docs, monkeypatch):
    import subprocess
    import sys

    import pagerouter.intake.docfilter as docfilter

    docfilter._CHILD.stop()
    hung = lambda self: subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],  # noqa: E731
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    monkeypatch.setattr(docfilter._Child, "_start", hung)
    slow = judge_file(docs["de"].read_bytes(), FilterConfig(enabled=True, timeout_s=0.5), isolate=True)
    assert slow.keep and slow.reasons == ["not judged: reading the text layer took over 0.5 s"]
    assert docfilter._CHILD.proc is None  # the hung child was killed
    monkeypatch.undo()
    again = judge_file(docs["de"].read_bytes(), FilterConfig(enabled=True, keep_languages=["en"]), isolate=True)
    assert not again.keep and again.scores["language"] == "de"  # a fresh child replaced the killed one
