"""Forms on the text-layer route (issue 22): each filled value on its label's line, once.

Pages are built here with PyMuPDF widgets (text, combo, checkbox, multi-line) whose values
reach the file three ways: with their appearance stream (MuPDF's text shows the value as a
line of its own), without one (MuPDF draws one on load), or only in the field's /V (the text
layer has no value at all). Seeded and varied: fonts, sizes, positions, labels, values.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pymupdf
import pytest

from pagerouter.config import PagerouterConfig
from pagerouter.config.textlayer import TextLayerConfig
from pagerouter.convert.converter import Converter
from pagerouter.model import Document, Page
from pagerouter.render.output import to_markdown
from pagerouter.common.pagetext import extract_textdict
from pagerouter.textlayer import read_text_layer
from pagerouter.textlayer.frame import reading_frame

CFG = TextLayerConfig()

_PEOPLE = ["Ilse Varga", "Tomasz Orwell", "Nadia Brook", "Kenji Aalto", "Rosa Quill", "Omar Lindgren"]
_TOWNS = ["Kaunas", "Girona", "Tartu", "Ghent", "Braga", "Lublin"]
_PROSE = ("The survey crews mapped the eastern basin before the rains arrived and logged every spring "
          "they crossed on the way back to the harbour station.")


def read(page: pymupdf.Page, cfg: TextLayerConfig = CFG):
    return read_text_layer(page, extract_textdict(page), page.number + 1, cfg)


def markdown(blocks) -> str:
    page = Page(number=1, width=612, height=792, status="ok", route="text_layer", blocks=blocks)
    return to_markdown(Document(source="t.pdf", page_count=1, pages=[page]))


def paragraphs(md: str) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", md) if p.strip()]


def _widget(page, kind, name, rect, value, size, font, empty):
    w = pymupdf.Widget()
    w.field_name, w.rect, w.text_fontsize, w.text_font = name, rect, size, font
    w.border_color, w.fill_color = (0.3, 0.3, 0.4), (0.94, 0.95, 1.0)
    if kind == "check":
        w.field_type, w.field_value = pymupdf.PDF_WIDGET_TYPE_CHECKBOX, bool(value) and not empty
    elif kind == "combo":
        w.field_type = pymupdf.PDF_WIDGET_TYPE_COMBOBOX
        w.choice_values = sorted({value, "Other", "None of these"})
        w.field_value = "" if empty else value
    else:
        w.field_type = pymupdf.PDF_WIDGET_TYPE_TEXT
        if kind == "multi":
            w.field_flags |= pymupdf.PDF_TX_FIELD_IS_MULTILINE
        w.field_value = "" if empty else value
    page.add_widget(w)


def form_pdf(seed: int, mode: str) -> tuple[bytes, list[dict]]:
    """A filled form: a title and a paragraph, then labelled fields (left labels, a label set
    above its field, a box before its label, a multi-line box). Returns the PDF and the truth:
    each field's label, value as written (`[x]` / `[ ]` for a box), name and whether the label
    comes first."""
    rng = random.Random(seed)
    font = rng.choice(["helv", "tiro", "cour"])
    wfont = rng.choice(["Helv", "TiRo", "Cour"])
    size = rng.uniform(9, 11.5)
    doc = pymupdf.open()
    page = doc.new_page(width=rng.choice([595, 612]), height=rng.choice([792, 842]))
    x, y = rng.uniform(45, 70), rng.uniform(60, 90)
    page.insert_text((x, y), f"Permit request {rng.randint(100, 999)}", fontname="hebo", fontsize=size * 1.6)
    y += size * 2.6
    page.insert_textbox(pymupdf.Rect(x, y - size, page.rect.width - x, y + 3 * size), _PROSE, fontname=font, fontsize=size)
    y += size * 4.5
    sep = ":" if rng.random() < 0.7 else ""
    fields = [
        ("Applicant" + sep, "text", rng.choice(_PEOPLE)),
        ("Home town" + sep, "combo", rng.choice(_TOWNS)),
        ("Licence no" + sep, "text", f"LN-{rng.randint(10000, 99999)}"),
        ("Needs a parking permit", "check", rng.random() < 0.5),
        ("Reason for the request" + sep, "multi", f"Moving the {rng.choice(['kiln', 'mill', 'ferry'])} crew. "
                                                  f"Site {rng.randint(2, 90)} reopens in spring."),
        ("Inspector" + sep, "above", rng.choice([p for p in _PEOPLE])),
    ]
    lab_w = max(pymupdf.get_text_length(f[0], fontname=font, fontsize=size) for f in fields[:3]) + rng.uniform(12, 40)
    truth = []
    for i, (label, kind, value) in enumerate(fields):
        name = f"f{i}_{label.split()[0].lower()}"
        first = True
        if kind == "check":
            page.insert_text((x + size + 8, y), label, fontname=font, fontsize=size)
            rect = pymupdf.Rect(x, y - size, x + size + 2, y + 2)
            shown, first = ("[x]" if value else "[ ]"), False
        elif kind in ("multi", "above"):
            page.insert_text((x, y), label, fontname=font, fontsize=size)
            h = size * (3.4 if kind == "multi" else 1.6)
            rect = pymupdf.Rect(x, y + size * 0.5, x + rng.uniform(300, 380), y + size * 0.5 + h)
            shown = " ".join(value.split())
            y += h
        else:
            page.insert_text((x, y), label, fontname=font, fontsize=size)
            rect = pymupdf.Rect(x + lab_w, y - size * 1.15, x + lab_w + rng.uniform(150, 220), y + size * 0.45)
            shown = value
        _widget(page, kind if kind != "above" else "text", name, rect, value, 0 if kind == "check" else round(size * 0.95, 1),
                wfont, mode == "stale")
        truth.append({"label": label, "shown": shown, "name": name, "first": first, "value": value})
        y += size * rng.uniform(2.2, 2.8)
    data = doc.tobytes()
    doc.close()
    if mode in ("noap", "stale"):
        doc = pymupdf.open(stream=data)
        by_name = {t["name"]: t for t in truth}
        for w in doc[0].widgets():
            t = by_name[w.field_name]
            if mode == "noap":
                doc.xref_set_key(w.xref, "AP", "null")
            elif t["shown"] in ("[x]", "[ ]"):
                if t["value"]:
                    doc.xref_set_key(w.xref, "V", "/Yes")
                    doc.xref_set_key(w.xref, "AS", "/Yes")
            else:
                doc.xref_set_key(w.xref, "V", pymupdf.get_pdf_str(t["value"]))
        data = doc.tobytes()
        doc.close()
    return data, truth


@pytest.mark.parametrize("mode", ["ap", "noap", "stale"])
@pytest.mark.parametrize("seed", [3, 8])
def test_each_value_on_its_labels_line_once(mode, seed):
    data, truth = form_pdf(seed, mode)
    with pymupdf.open(stream=data) as doc:
        blocks = read(doc[0])
    paras = paragraphs(markdown(blocks))
    for t in truth:
        want = f"{t['label']} {t['shown']}" if t["first"] else f"{t['shown']} {t['label']}"
        # the label's paragraph is exactly the label and its value: nothing between, nothing lost
        holding = [p for p in paras if t["label"] in p]
        assert holding == [want], (t, paras)
        if t["shown"] not in ("[x]", "[ ]"):
            # written once: the appearance text the layer already has is not repeated
            assert sum(p.count(t["shown"]) for p in paras) == 1, (t["shown"], paras)
    assert not any(re.fullmatch(r"[34lnu8]", p) for p in paras), "a checkbox glyph was written as text"
    # the fields are read in the order they are laid out, after the page's prose
    md = " ".join(paras)
    at = [md.index(t["label"]) for t in truth]
    assert md.index("survey crews") < at[0] and at == sorted(at)


@pytest.mark.parametrize("mode", ["ap", "stale"])
def test_json_names_the_fields_behind_each_value(mode):
    data, truth = form_pdf(5, mode)
    with pymupdf.open(stream=data) as doc:
        blocks = read(doc[0])
        page_rect = doc[0].rect
    form = [b for b in blocks if b.role == "form_field"]
    named = {f.name: (b, f) for b in form for f in (b.fields or [])}
    assert set(named) == {t["name"] for t in truth}
    for t in truth:
        b, f = named[t["name"]]
        assert t["label"] in b.text and t["shown"] in b.text
        if t["shown"] in ("[x]", "[ ]"):
            assert f.type == "CheckBox" and (f.value != "Off") == (t["shown"] == "[x]")
        else:
            assert f.value == t["value"]
        x0, y0, x1, y1 = f.bbox
        assert 0 <= x0 < x1 <= page_rect.width and 0 <= y0 < y1 <= page_rect.height
        assert b.engine == "pymupdf" and b.route == "text_layer"


def _printed_pairs(seed: int) -> tuple[pymupdf.Document, list[tuple[str, str]]]:
    """A flat (printed) form: "Label:" and its value with a wide gap, two columns of pairs."""
    rng = random.Random(seed)
    font, size = rng.choice(["helv", "tiro"]), rng.uniform(9, 11)
    doc = pymupdf.open()
    page = doc.new_page()
    labels = rng.sample(["Invoice no:", "Date:", "Customer:", "Due date:", "Order ref:", "Terms:", "Currency:",
                         "Account:"], 6)
    values = [f"{rng.choice(['A', 'K', 'R'])}{rng.randint(1000, 9999)}" for _ in labels]
    pairs = list(zip(labels, values))
    y = 100
    for r in range(3):
        for c in range(2):
            lab, val = pairs[2 * r + c]
            x = 60 + c * 270
            page.insert_text((x, y), lab, fontname=font, fontsize=size)
            page.insert_text((x + rng.uniform(100, 130), y), val, fontname=font, fontsize=size)
        y += size * rng.uniform(1.8, 2.6)
    return doc, pairs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_printed_label_value_pairs_stay_together(seed):
    doc, pairs = _printed_pairs(seed)
    paras = paragraphs(markdown(read(doc[0])))
    for lab, val in pairs:
        assert f"{lab} {val}" in paras, (lab, val, paras)


def test_prose_columns_are_not_taken_for_label_value_pairs():
    """A left column whose line ends in a colon beside a right column's line: a gutter, not a pair."""
    doc = pymupdf.open()
    page = doc.new_page()
    left = ["Crews reported", "these findings:", "the basin held", "more water than", "the survey showed."]
    right = ["Harbour pilots", "kept the channel", "open all winter", "despite the ice", "on the outer reef."]
    for i, (a, b) in enumerate(zip(left, right)):
        page.insert_text((60, 100 + 13 * i), a, fontsize=10)
        page.insert_text((320, 100 + 13 * i), b, fontsize=10)
    blocks = read(page)
    assert not any(b.role == "form_field" for b in blocks)
    assert not any("findings: kept" in b.text for b in blocks)


def test_pages_without_widgets_skip_the_widget_pass():
    from pagerouter.textlayer.forms import FormReader

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Plain page without a form.", fontsize=11)
    lines = [object()]
    frame = reading_frame(page, extract_textdict(page))
    assert FormReader().place(page, lines, frame, CFG) is lines  # the same list: nothing looked at


def test_filled_field_in_the_header_band_is_content():
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((380, 36), "Date received:", fontsize=9)
    _widget(page, "text", "office_date", pymupdf.Rect(450, 26, 560, 40), "14 May 2024", 9, "Helv", False)
    page.insert_text((60, 120), "Transfer of title", fontname="hebo", fontsize=16)
    page.insert_textbox(pymupdf.Rect(60, 140, 540, 200), _PROSE, fontsize=10)
    data = doc.tobytes()
    with pymupdf.open(stream=data) as d:
        blocks = read(d[0])
    md = markdown(blocks)
    assert "Date received: 14 May 2024" in paragraphs(md)
    assert [b.role for b in blocks if "14 May" in b.text] == ["form_field"]


def test_page_whose_values_live_only_in_its_fields_is_read_from_the_layer(tmp_path):
    """No text drawn at all (values only in /V): triage alone calls the page blank."""
    doc = pymupdf.open()
    page = doc.new_page()
    for i, name in enumerate(["given", "family", "postcode"]):
        _widget(page, "text", name, pymupdf.Rect(100, 80 + 30 * i, 300, 96 + 30 * i), "", 10, "Helv", True)
    data = doc.tobytes()
    doc.close()
    doc = pymupdf.open(stream=data)
    values = {"given": "Agnes", "family": "Holloway", "postcode": "40211"}
    for w in doc[0].widgets():
        doc.xref_set_key(w.xref, "V", pymupdf.get_pdf_str(values[w.field_name]))
    path = tmp_path / "fields_only.pdf"
    doc.save(path)
    doc.close()
    out = Converter(PagerouterConfig()).convert(path)
    page = out.pages[0]
    assert page.route == "text_layer" and page.status == "ok"
    assert "filled form field" in page.triage.reasons[-1]
    md = to_markdown(out)
    assert all(v in md for v in values.values())
    assert {f.name for b in page.blocks for f in (b.fields or [])} == set(values)


@pytest.mark.parametrize("mode", ["ap", "stale"])
def test_value_filled_into_running_text_stays_in_its_paragraph(mode):
    """ "I, ____ , declare ..." across two lines: the value goes into the sentence, the paragraph
    stays one, and its JSON block still names the field."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "By signing this request I, the undersigned", fontsize=10)
    page.insert_text((72, 113), "declare that every detail above is true and", fontsize=10)
    page.insert_text((72, 126), "complete to the best of my knowledge.", fontsize=10)
    x1 = 72 + pymupdf.get_text_length("By signing this request I, the undersigned", fontsize=10)
    _widget(page, "text", "signatory", pymupdf.Rect(x1 + 6, 90, x1 + 126, 103), "Hedda Lunde", 10, "Helv", mode == "stale")
    data = doc.tobytes()
    doc.close()
    doc = pymupdf.open(stream=data)
    if mode == "stale":
        doc.xref_set_key(doc[0].first_widget.xref, "V", pymupdf.get_pdf_str("Hedda Lunde"))
        data = doc.tobytes()
    with pymupdf.open(stream=data) as d:
        blocks = read(d[0])
    paras = paragraphs(markdown(blocks))
    assert paras == ["By signing this request I, the undersigned Hedda Lunde declare that every detail above is true and "
                     "complete to the best of my knowledge."]
    assert [f.name for b in blocks for f in (b.fields or [])] == ["signatory"]


def test_generated_forms_kind_carries_its_truth():
    """The bench's `forms` pages (benchmarks/quality_cases_forms.py) hold what their checks name:
    every label in MuPDF's text, every value in its widget (in the text too unless only in /V),
    and generation is seeded."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_quality import generate
    from quality_checks import normalize

    cases = generate(["forms"], 8, seed=11)
    assert len({c.name.split("-", 2)[2] for c in cases}) == 8, "every layout once"
    for case in cases:
        with pymupdf.open(stream=case.pdf) as doc:
            page = doc[0]
            text = normalize(page.get_text())
            values = [normalize(str(w.field_value)) for w in page.widgets() if w.field_type_string != "CheckBox"]
            boxes = [w.field_value not in ("Off", "", None) for w in page.widgets() if w.field_type_string == "CheckBox"]
        assert bool(values or boxes) == ("flat" not in case.name), case.name  # flat forms are printed only
        for chk in case.checks:
            if chk.type == "present" and chk.note in ("label", "text value", "combo value"):
                want = normalize(chk.text)
                assert want in text or any(want in v for v in values), (case.name, chk.text)
        ticked = sum(1 for c in case.checks if c.type == "present" and (c.text.startswith("[x] ") or c.text.endswith(" [x]")))
        assert ticked == sum(boxes), case.name
    assert [c.checks for c in generate(["forms"], 8, seed=11)] == [c.checks for c in cases]
