"""The `forms` family of `quality_cases.py` (same conventions): filled forms, interactive and flat.

Interactive (AcroForm) pages: printed labels with PyMuPDF widgets filled in (text fields,
multi-line text, combo boxes, checkboxes), the label to the left of its field or on the line
above it, in one or two columns. How the value reaches the file varies, because that decides
whether the page's text layer holds it at all:

- `ap`: the widget has its appearance stream (the value drawn as text: MuPDF's `get_text()`
  shows it, as a separate line far from its label);
- `noap`: no appearance stream (MuPDF draws one when it loads the page, other readers may not);
- `stale`: the value is only the field's /V; the appearance stream is the blank form's, as a
  tool that fills /V and leaves the drawing to the viewer writes it. The text layer has no
  value at all: only reading the widgets finds it.

Flat pages (`flat`): printed "Label:  value" pairs with a wide gap between label and value,
two columns of pairs on the same rows.

Checkbox convention (the truth the checks hold): a checkbox is written `[x]` when ticked,
`[ ]` when not, on the side of its label where it is drawn ("[x] Send me the newsletter").

Checks per field: the label and the value are present; the value follows its label (`near`,
at most a separator between them) in one paragraph (`together`); fields in one column are read
top to bottom and the left field of a row before the right one (`order`, true whether a reader
reads a two-column form row by row or column by column).
"""

from __future__ import annotations

import random

import pymupdf

from quality_cases import _ADJ, _NOUN, PAGE_SIZES, Case, Words, _pdf, bold, flow, new_doc_page
from quality_checks import Check

_FIRST = ("Marta Ivo Lena Tomas Ada Bruno Clara Dmitri Elif Farah Goran Hana Ines Jonas Kaito Leila "
          "Mateo Nadia Oskar Priya Quentin Rosa Soren Tala Uma Viktor Wanda Yusuf Zora").split()
_LAST = ("Quinlan Novak Berg Okafor Lindqvist Moreau Haddad Petrov Castillo Nakamura Adeyemi Horvat "
         "Fischer Kowalski Silva Brennan Duarte Eriksen Galli Ibsen Jovanovic Keller").split()
_STREETS = ("Mill Lane", "Harbour Road", "Quarry Street", "Orchard Way", "Canal Walk", "Ridge Avenue", "Kiln Row")
_CITIES = ("Ostrava", "Tromso", "Valparaiso", "Arequipa", "Dundee", "Gdansk", "Bergamo", "Leuven", "Nakuru", "Sapporo")
_COUNTRIES = ("Norway", "Chile", "Peru", "Scotland", "Poland", "Italy", "Belgium", "Kenya", "Japan", "Czechia")
_MON = "January February March April May June July August September October November December".split()

# (label, value kind): one field of each label at most per page
_TEXT_LABELS = [
    ("Full name", "name"), ("Surname", "last"), ("Given names", "first"), ("Date of birth", "date"),
    ("Street address", "street"), ("City", "city"), ("Postal code", "postcode"), ("Telephone", "phone"),
    ("Email", "email"), ("Employer", "employer"), ("Job title", "job"), ("Account number", "account"),
    ("Policy number", "policy"), ("Emergency contact", "name"), ("Passport number", "passport"),
    ("Department", "employer"), ("Member ID", "member"), ("Vehicle registration", "plate"), ("Start date", "date"),
]
_CHOICE_LABELS = [("Country", _COUNTRIES), ("Preferred contact", ("Email", "Telephone", "Letter")),
                  ("Payment method", ("Card", "Transfer", "Cheque", "Cash")), ("Shirt size", ("Small", "Medium", "Large"))]
_CHECK_LABELS = ["Send me the newsletter", "I agree to the terms", "Returning customer", "Needs wheelchair access",
                 "Vegetarian meal", "Keep my data on file", "Request a paper copy", "Travel insurance"]
_MULTI_LABELS = ["Comments", "Describe the incident", "Special requirements", "Previous experience"]

LAYOUTS = ("ap_left", "ap_above", "stale_left", "noap_two", "flat", "ap_mixed_two", "stale_above", "flat_bold")


def _value(rng: random.Random, kind: str, used: set[str]) -> str:
    for _ in range(100):
        v = {
            "name": lambda: f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
            "first": lambda: f"{rng.choice(_FIRST)} {rng.choice(_FIRST)}",
            "last": lambda: rng.choice(_LAST),
            "date": lambda: f"{rng.randint(1, 28)} {rng.choice(_MON)} {rng.randint(1950, 2024)}",
            "street": lambda: f"{rng.randint(2, 240)} {rng.choice(_STREETS)}",
            "city": lambda: rng.choice(_CITIES),
            "postcode": lambda: f"{rng.randint(10, 99)}{rng.randint(100, 999)}",
            "phone": lambda: f"+{rng.randint(30, 49)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
            "email": lambda: f"{rng.choice(_FIRST).lower()}.{rng.choice(_LAST).lower()}@{rng.choice(_NOUN)}.example",
            "employer": lambda: f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN).capitalize()} Ltd",
            "job": lambda: f"{rng.choice(_ADJ).capitalize()} {rng.choice(['surveyor', 'engineer', 'clerk', 'analyst'])}",
            "account": lambda: f"{rng.randint(10, 99)}-{rng.randint(1000, 9999)}-{rng.randint(100, 999)}",
            "policy": lambda: f"PL{rng.randint(100000, 999999)}",
            "passport": lambda: f"{rng.choice('CKMPX')}{rng.randint(1000000, 9999999)}",
            "member": lambda: f"M-{rng.randint(1000, 9999)}",
            "plate": lambda: f"{rng.choice('ABKST')}{rng.choice('EFLRW')} {rng.randint(10, 99)} {rng.choice('GHJNZ')}{rng.choice('CDPUY')}",
        }[kind]()
        if v not in used:
            used.add(v)
            return v
    raise RuntimeError("value bank exhausted")


class _Field:
    def __init__(self, label: str, kind: str, value, choices=(), multiline: bool = False):
        self.label, self.kind, self.value, self.choices, self.multiline = label, kind, value, choices, multiline
        self.col = 0
        self.row = 0
        self.printed = label  # the label as drawn (with or without a colon)
        self.in_value_column = False  # a box drawn where the values go, its label in the label column

    def shown(self) -> str:
        """The value as the truth writes it (a checkbox as [x] / [ ])."""
        if self.kind == "check":
            return "[x]" if self.value else "[ ]"
        return " ".join(str(self.value).split())


def _fields(rng: random.Random, W: Words, n_text: int, n_choice: int, n_check: int, n_multi: int) -> list[_Field]:
    used: set[str] = set()
    out = []
    for label, kind in rng.sample(_TEXT_LABELS, n_text):
        out.append(_Field(label, "text", _value(rng, kind, used)))
    for label, opts in rng.sample(_CHOICE_LABELS, n_choice):
        out.append(_Field(label, "combo", rng.choice(opts), choices=list(opts)))
    for label in rng.sample(_CHECK_LABELS, n_check):
        out.append(_Field(label, "check", rng.random() < 0.6))
    for label in rng.sample(_MULTI_LABELS, n_multi):
        out.append(_Field(label, "text", "\n".join(W.paragraph(2)), multiline=True))
    return out


def _widget(page: pymupdf.Page, f: _Field, rect: pymupdf.Rect, name: str, size: float, font: str,
            empty: bool = False) -> None:
    """One widget for `f`; `empty`: drawn as the blank form (its value goes in later, /V only)."""
    w = pymupdf.Widget()
    w.field_name = name
    w.rect = rect
    w.text_fontsize = size
    w.text_font = font
    w.border_color = (0.4, 0.4, 0.5)
    w.border_width = 0.8
    w.fill_color = (0.93, 0.95, 1.0)
    if f.kind == "check":
        w.field_type = pymupdf.PDF_WIDGET_TYPE_CHECKBOX
        w.field_value = bool(f.value) and not empty
    elif f.kind == "combo":
        w.field_type = pymupdf.PDF_WIDGET_TYPE_COMBOBOX
        w.choice_values = f.choices
        w.field_value = "" if empty else f.value
    else:
        w.field_type = pymupdf.PDF_WIDGET_TYPE_TEXT
        if f.multiline:
            w.field_flags |= pymupdf.PDF_TX_FIELD_IS_MULTILINE
        w.field_value = "" if empty else f.value
    page.add_widget(w)


def _strip_values(pdf: bytes, fields: dict[str, _Field], mode: str) -> bytes:
    """`noap`: remove every widget's appearance stream; `stale`: put the values back into /V
    only (the widgets were drawn empty)."""
    doc = pymupdf.open(stream=pdf)
    for page in doc:
        for w in page.widgets():
            f = fields[w.field_name]
            if mode == "noap":
                doc.xref_set_key(w.xref, "AP", "null")
            elif f.kind == "check":
                if f.value:  # a ticked box shows its on-state: /AS names it
                    doc.xref_set_key(w.xref, "V", "/Yes")
                    doc.xref_set_key(w.xref, "AS", "/Yes")
            else:
                doc.xref_set_key(w.xref, "V", pymupdf.get_pdf_str(str(f.value)))
    data = doc.tobytes(garbage=3, deflate=True)
    doc.close()
    return data


def _field_checks(f: _Field) -> list[Check]:
    if f.kind == "check":
        # the box is written on the side of its label where it is drawn
        pair = (f.printed, f.shown()) if f.in_value_column else (f.shown(), f.printed)
        return [Check("present", text=" ".join(pair), note="checkbox state beside its label"),
                Check("together", before=pair[0], after=pair[1], note="checkbox and label in one paragraph")]
    first = f.value.split("\n")[0] if f.multiline else f.shown()
    out = [Check("present", text=f.printed, note="label"), Check("present", text=first, note=f"{f.kind} value")]
    if f.multiline:
        out.append(Check("present", text=f.value.split("\n")[1], max_diffs=1, note="multi-line value, 2nd line"))
    out.append(Check("near", before=f.printed, after=first, max_gap=3, note=f"{f.kind} value right after its label"))
    out.append(Check("together", before=f.printed, after=first, note=f"{f.kind} label and value in one paragraph"))
    return out


def _order_checks(fields: list[_Field]) -> list[Check]:
    out = []
    for a, b in zip(fields, fields[1:]):
        if a.col == b.col:
            out.append(Check("order", before=a.printed, after=b.printed, note="fields down a column"))
    for a in fields:
        for b in fields:
            if a.col == 0 and b.col == 1 and a.row == b.row:
                out.append(Check("order", before=a.printed, after=b.printed, note="left field of a row first"))
    return out


_WFONT = {"Helv": "helv", "TiRo": "tiro", "Cour": "cour"}


def _header_fields(page, pen, rng: random.Random, mode: str, font: str, size: float, wfont: str,
                   by_name: dict[str, _Field]) -> list[Check]:
    """Office-use fields at the top right, in the header band ("Reference:", "Date received:")."""
    used: set[str] = set()
    out = []
    y = rng.uniform(28, 40)
    x = pen.w - rng.uniform(210, 240)
    for label, kind in (("Reference", "policy"), ("Date received", "date")):
        f = _Field(label, "text", _value(rng, kind, used))
        f.printed = label + ":"
        pen.text(x, y, f.printed, font, size * 0.9)
        lw = pen.width("Date received:", font, size * 0.9) + 8
        rect = pymupdf.Rect(x + lw, y - size * 1.1, pen.w - 30, y + size * 0.4)
        name = f"office_{label.lower().replace(' ', '_')}"
        by_name[name] = f
        _widget(page, f, rect, name, round(size * 0.85, 1), wfont, mode == "stale")
        out += _field_checks(f)
        y += size * 1.9
    return out


def forms_case(rng: random.Random, v: int) -> Case:
    layout = LAYOUTS[v % len(LAYOUTS)]
    mode = layout.split("_")[0]
    W = Words(rng)
    font = rng.choice(["helv", "tiro", "dvsans", "dvserif"])
    size = rng.uniform(9, 11)
    wfont = rng.choice(list(_WFONT))
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice(PAGE_SIZES))
    mx = rng.uniform(45, 70)
    y = rng.uniform(55, 80)
    checks: list[Check] = []
    by_name: dict[str, _Field] = {}
    if mode != "flat" and rng.random() < 0.4:
        checks += _header_fields(page, pen, rng, mode, font, size, wfont, by_name)
        y += 40
    title = rng.choice(["Application form", "Registration form", "Claim form", "Membership request", "Change of details"])
    title = f"{title} {rng.randint(10, 99)}-{rng.choice('ABCDE')}"
    pen.text(mx, y, title, bold(font), size * 1.6)
    y += size * 2.4
    intro = W.paragraph(2)
    _, _, low = flow(pen, [intro], [(mx, pen.w - 2 * mx)], y, pen.h, font, size, 1.25, 0)
    y = low + size * 2.4
    checks.append(Check("order", before=title, after=intro[0], max_diffs=1))
    lab_font = bold(font) if layout == "flat_bold" or rng.random() < 0.3 else font
    above = layout in ("ap_above", "stale_above")
    two = layout in ("noap_two", "ap_mixed_two", "flat_bold") or ((above or mode == "flat") and rng.random() < 0.5)
    gutter = rng.uniform(24, 40)
    colw = (pen.w - 2 * mx - (gutter if two else 0)) / (2 if two else 1)
    x_cols = [mx, mx + colw + gutter] if two else [mx]
    if mode == "flat":
        fields = _fields(rng, W, rng.randint(8, 12), 0, 0, 0)
    elif layout in ("ap_mixed_two", "ap_left"):
        fields = _fields(rng, W, rng.randint(4, 6), rng.randint(1, 2), rng.randint(2, 3), 0)
    else:
        fields = _fields(rng, W, rng.randint(4, 7), rng.randint(0, 1), rng.randint(1, 2), 0 if two else 1)
    # printed forms write "Label:"; a widget's label may go without the colon (the box says it)
    colon = ":" if mode == "flat" or rng.random() < 0.7 else ""
    for f in fields:
        f.printed = f.label + colon if f.kind != "check" else f.label
        # left-labelled forms set some boxes in the value column, their label in the label column
        if f.kind == "check" and not above and rng.random() < 0.4:
            f.in_value_column = True
            f.printed = f.label + colon
    vfont, vsize = (font, size) if mode == "flat" else (_WFONT[wfont], size * 0.95)

    def vwidth(f: _Field) -> float:
        return 0.0 if f.kind == "check" or f.multiline else pen.width(f.shown(), vfont, vsize)

    def labw(f: _Field) -> float:
        return 0.0 if (f.kind == "check" and not f.in_value_column) or f.multiline else pen.width(f.printed, lab_font, size)

    # label column, then the value (or field) column: drop the widest values until both fit
    while True:
        lab_w = max(labw(f) for f in fields) + rng.uniform(1.5, 4) * size
        need = max(vwidth(f) for f in fields) + 12
        if above or lab_w + need <= colw or len(fields) <= 4:
            break
        fields.remove(max(fields, key=vwidth))
    rng.shuffle(fields)
    pitch = size * (3.8 if above else rng.uniform(2.0, 2.8))
    rows = (len(fields) + len(x_cols) - 1) // len(x_cols)
    for i, f in enumerate(fields):
        # widget forms fill a column, then the next; flat forms fill rows of pairs
        f.col, f.row = (i % len(x_cols), i // len(x_cols)) if mode == "flat" else (i // rows, i % rows)
    fields.sort(key=lambda f: (f.col, f.row))
    row_y = [y + r * pitch for r in range(rows)]
    for f in sorted(fields, key=lambda f: (f.row, f.col)):
        x, yy = x_cols[f.col], row_y[f.row]
        name = f"{f.label.lower().replace(' ', '_')}_{rng.randint(1, 99)}"
        by_name[name] = f
        if mode == "flat":
            pen.text(x, yy, f.printed, lab_font, size)
            pen.text(x + lab_w, yy, f.shown(), font, size)
            continue
        if f.kind == "check":
            if f.in_value_column:
                pen.text(x, yy, f.printed, lab_font, size)
                bx = x + lab_w
            else:
                pen.text(x + size + 8, yy, f.printed, font, size)
                bx = x
            _widget(page, f, pymupdf.Rect(bx, yy - size, bx + size + 2, yy + 2), name, 0, wfont, mode == "stale")
            continue
        if above or f.multiline:
            h = size * (3.4 if f.multiline else 1.6)
            pen.text(x, yy, f.printed, lab_font, size * (0.9 if above else 1))
            fw = colw - 4 if f.multiline else min(colw - 4, max(vwidth(f) + 12, rng.uniform(140, 220)))
            rect = pymupdf.Rect(x, yy + size * 0.5, x + fw, yy + size * 0.5 + h)
            if f.multiline:  # the rows below move down by the box's height
                for r in range(f.row + 1, rows):
                    row_y[r] += h
        else:
            pen.text(x, yy, f.printed, lab_font, size)
            fw = min(colw - lab_w, max(vwidth(f) + 12, rng.uniform(120, 220)))
            rect = pymupdf.Rect(x + lab_w, yy - size * 1.15, x + lab_w + fw, yy + size * 0.45)
        _widget(page, f, rect, name, round(vsize, 1), wfont, mode == "stale")
    pdf = _pdf(doc)
    if mode in ("noap", "stale"):
        pdf = _strip_values(pdf, by_name, mode)
    for f in fields:
        checks += _field_checks(f)
    checks += _order_checks(fields)
    return Case(f"forms-{v:02d}-{layout}", "forms", pdf, checks, note=f"{font} {size:.1f}pt {mode} {wfont}")
