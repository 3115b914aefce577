"""The `rotated`, `table`, `spacing` and `marks` families of `quality_cases.py` (same conventions).

- `rotated`: /Rotate 90/180/270 with upright-looking content, sideways content, text drawn
  rotated on an unrotated page;
- `table`: borderless financial statements and simple borderless tables;
- `spacing`: words separated only by glyph geometry or MuPDF's own spaces;
- `marks`: superscripts/subscripts, footnotes, captions, RTL paragraphs, Arabic forms.
"""

from __future__ import annotations

import random

import pymupdf

from quality_cases import _ADJ, _NOUN, PAGE_SIZES, Case, Words, _pdf, bold, flow, new_doc_page
from quality_checks import Check

# ---------------------------------------------------------------------- rotated
def rotated_case(rng: random.Random, v: int) -> Case:
    """The same content drawn three ways: /Rotate R looking upright (content drawn rotated),
    /Rotate R looking sideways (content drawn upright), and text drawn rotated on a page with
    no /Rotate. All must read like the upright page."""
    modes = [("upright", 90), ("upright", 180), ("upright", 270), ("sideways", 90), ("sideways", 270), ("drawn", 90), ("drawn", 270), ("sideways", 180)]
    mode, R = modes[v % len(modes)]
    W = Words(rng)
    font = rng.choice(["helv", "tiro", "cour", "dvserif"])
    size = rng.uniform(9, 11) if font != "cour" else 8.5
    doc = pymupdf.open()
    wh = rng.choice(PAGE_SIZES)
    landscape = rng.random() < 0.6 and mode != "sideways"
    page, pen = new_doc_page(doc, (wh[1], wh[0]) if landscape else wh, R if mode in ("upright", "drawn") else 0)
    mx = rng.uniform(40, 70)
    y = rng.uniform(50, 80)
    title = W.title()
    pen.text(mx, y, title, bold(font), size * 1.8)
    y += size * 3.2
    checks = [Check("heading", text=title, max_diffs=1, note="title a heading")]
    prev_last = title
    n_cols = 2 if rng.random() < 0.35 else 1
    for sec in range(rng.randint(2, 3)):
        head = f"{sec + 1}. {rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN)}s"
        if y > pen.h - 120:
            break
        pen.text(mx, y, head, bold(font), size * 1.25)
        y += size * 2
        paras = [W.paragraph(rng.randint(3, 4)) for _ in range(2)]
        gw = 16
        cw = (pen.w - 2 * mx - gw * (n_cols - 1)) / n_cols
        cols = [(mx + i * (cw + gw), cw) for i in range(n_cols)]
        bottom = min(pen.h - 50, y + (pen.h - y) / (2 if sec == 0 else 1) - 20)
        lines, st, low = flow(pen, paras, cols, y, bottom, font, size, 1.25, size * 0.8)
        if not st:
            break
        if n_cols > 1:
            low = max(l.y for l in lines)
        drawn = sorted({p for p, _, _ in st})
        checks.append(Check("order", before=prev_last if prev_last != title else title, after=head))
        checks.append(Check("order", before=head, after=paras[0][0], max_diffs=1))
        for p in drawn:
            if all((p, s) in {(a, b) for a, b, _ in st} for s in range(len(paras[p]))):
                checks.append(Check("together", before=paras[p][0], after=paras[p][-1], max_diffs=1, note="one paragraph"))
        if len(drawn) > 1:
            checks.append(Check("order", before=paras[0][-1], after=paras[1][0], max_diffs=1))
        prev_last = paras[drawn[-1]][-1]
        y = low + size * 2.5
    if mode == "sideways":
        page.set_rotation(R)  # drawn upright, shown turned: the viewer sees it sideways
    elif mode == "drawn":
        page.set_rotation(0)  # drawn for /Rotate R, shown without it: rotated text on the page
    return Case(f"rotated-{v:02d}-{mode}{R}", "rotated", _pdf(doc), checks, note=f"{mode} {R} {font}")


# ---------------------------------------------------------------------- table
_LABELS = ["Revenue", "Cost of revenue", "Gross profit", "Research and development", "Sales, general and administrative",
           "Acquisition termination cost", "Total operating expenses", "Operating income", "Interest income",
           "Interest expense", "Other income (expense), net", "Income before income tax", "Income tax expense (benefit)",
           "Net income", "Depreciation and amortization", "Restructuring charges", "Total current assets", "Goodwill"]
_MON = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def _money(rng: random.Random, used: set[str]) -> str:
    while True:
        v = rng.randint(12, 99999)
        s = f"{v:,}"
        if rng.random() < 0.2:
            s = f"({s})"
        if s not in used:
            used.add(s)
            return s


def financial_table(pen, rng: random.Random, x0: float, y: float, font: str, size: float) -> tuple[list[Check], float]:
    """A borderless income statement: label column, one or two column groups under a spanning
    header ("Year Ended" / dates), `$` in its own cell, a unit line between header and body,
    parenthesised negatives, subtotal rows. Returns the checks and the y below it."""
    groups = [("Year Ended", rng.randint(2, 3))] if rng.random() < 0.6 else [("Three Months Ended", 2), ("Nine Months Ended", 2)]
    ncol = sum(n for _, n in groups)
    right = pen.w - x0
    colw = rng.uniform(52, 66)
    dollar_w = 10
    pitch = colw + dollar_w + rng.uniform(10, 22)  # a visible gap between a value and the next `$`
    label_w = right - x0 - ncol * pitch
    col_right = [x0 + label_w + (i + 1) * pitch for i in range(ncol)]
    unit = rng.choice(["(In millions, except per share data)", "(In millions)", "(In thousands of dollars)"])
    unit_above = rng.random() < 0.3
    if unit_above:
        pen.text(x0, y, unit, font, size * 0.85)
        y += size * 1.8
    years = sorted(rng.sample(range(2015, 2026), ncol // len(groups)), reverse=True)
    dates, c = [], 0
    hsize = size * 0.92
    for g, n in groups:
        gx0, gx1 = col_right[c] - colw, col_right[c + n - 1]
        pen.text((gx0 + gx1) / 2 - pen.width(g, bold(font), hsize) / 2, y, g, bold(font), hsize)
        pen.hline(gx0, gx1, y + 3, 0.4)
        for k in range(n):
            d = f"{rng.choice(_MON)} {rng.randint(1, 28)}, {years[k]}"
            dates.append(d)
            pen.text(col_right[c] - pen.width(d, bold(font), hsize), y + size * 1.3, d, bold(font), hsize)
            c += 1
    y += size * 1.3
    if not unit_above:
        pen.text(x0, y + size * 1.4, unit, font, size * 0.85)
        y += size * 1.4
    y += size * 1.6
    labels = rng.sample(_LABELS, rng.randint(7, 11))
    used: set[str] = set()
    rows = []
    for i, lab in enumerate(labels):
        vals = [_money(rng, used) for _ in range(ncol)]
        total = lab.startswith(("Total", "Gross", "Net", "Operating income"))
        indent = 10 if (not total and rng.random() < 0.5) else 0
        pen.text(x0 + indent, y, lab, bold(font) if total and rng.random() < 0.5 else font, size)
        for k, val in enumerate(vals):
            if i == 0 or total:
                pen.text(col_right[k] - colw - dollar_w + 2, y, "$", font, size)
            pen.text(col_right[k] - pen.width(val, font, size), y, val, font, size)
            if total and rng.random() < 0.5:
                pen.hline(col_right[k] - colw, col_right[k], y - size - 1, 0.4)
        rows.append((lab, vals))
        y += size * 1.45
    checks = []
    for lab, vals in rng.sample(rows, min(5, len(rows))):
        k = rng.randrange(ncol)
        checks.append(Check("table", cell=vals[k], left_heading=lab, top_heading=dates[k], note="label x date -> value"))
    r = rng.randrange(len(rows))
    k = rng.randrange(1, ncol)
    checks.append(Check("table", cell=rows[r][1][k], left=rows[r][1][k - 1], note="left neighbour"))
    checks.append(Check("table", cell=rows[r][1][0], left=rows[r][0], note="label left of first value"))
    if r + 1 < len(rows):
        checks.append(Check("table", cell=rows[r][1][k], down=rows[r + 1][1][k], note="down neighbour"))
    checks.append(Check("table", cell=rows[-1][1][0], top_heading=groups[0][0], note="group header over the column"))
    return checks, y


def simple_table(pen, rng: random.Random, x0: float, y: float, width: float, font: str, size: float) -> tuple[list[Check], float]:
    """A borderless text table: left-aligned columns, bold header, no rules."""
    names = ["Station", "Site", "Elevation (m)", "Annual rain (mm)", "Opened", "Keeper", "Soil", "Depth (cm)", "Owner"]
    n = rng.randint(3, 5)
    while True:  # headers that fit their column (a header running into the next one is no table)
        cw = width / n
        fit = [h for h in names if pen.width(h, bold(font), size) < cw - 6]
        if len(fit) >= n or n == 2:
            break
        n -= 1
    heads = rng.sample(fit, min(n, len(fit)))
    n = len(heads)
    cw = width / n
    for k, h in enumerate(heads):
        pen.text(x0 + k * cw, y, h, bold(font), size)
    y += size * 1.6
    rows, used = [], set()
    for _ in range(rng.randint(4, 7)):
        row = []
        for k in range(n):
            while True:
                val = rng.choice([f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN)}", str(rng.randint(10, 4000)), f"{rng.randint(1, 99)}.{rng.randint(0, 9)}"])
                if val not in used and pen.width(val, font, size) < cw - 8:
                    used.add(val)
                    break
            row.append(val)
            pen.text(x0 + k * cw, y, val, font, size)
        rows.append(row)
        y += size * 1.4
    checks = []
    for row in rng.sample(rows, min(3, len(rows))):
        k = rng.randrange(1, n)
        checks.append(Check("table", cell=row[k], left_heading=row[0], top_heading=heads[k], note="row x header -> value"))
        checks.append(Check("table", cell=row[k], left=row[k - 1], note="left neighbour"))
    return checks, y


def table_case(rng: random.Random, v: int) -> Case:
    W = Words(rng)
    font = rng.choice(["helv", "tiro", "dvsans", "dvserif"])
    size = rng.uniform(8.5, 10)
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice(PAGE_SIZES))
    mx = rng.uniform(45, 70)
    y = rng.uniform(60, 90)
    checks: list[Check] = []
    financial = v % 3 != 2
    head = rng.choice(["Consolidated Statements of Income", "Condensed Consolidated Statements of Operations",
                       "Segment Results", "Selected Financial Data"]) if financial else f"Table {rng.randint(1, 9)}. {W.title()}"
    pen.text(mx, y, head, bold(font), size * 1.4)
    y += size * 2.2
    para = W.paragraph(2)
    _, _, low = flow(pen, [para], [(mx, pen.w - 2 * mx)], y, pen.h, font, size, 1.25, 0)
    y = low + size * 2.5
    if financial:
        fc, y = financial_table(pen, rng, mx, y, font, size)
        checks += fc
    else:
        sc, y = simple_table(pen, rng, mx, y, pen.w - 2 * mx, font, size)
        checks += sc
    after = W.paragraph(2)
    flow(pen, [after], [(mx, pen.w - 2 * mx)], y + size * 1.5, pen.h, font, size, 1.25, 0)
    checks.append(Check("order", before=para[-1], after=after[0], max_diffs=1, note="text around the table in order"))
    return Case(f"table-{v:02d}-{'financial' if financial else 'simple'}", "table", _pdf(doc), checks, note=f"{font} {size:.1f}pt")


# ---------------------------------------------------------------------- spacing
def _pdfstr(s: str) -> str:
    return "(" + s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


SPACING_MODES = ("tj_kern", "word_objects", "trailing_space", "word_spacing", "letter_spacing")


def spacing_case(rng: random.Random, v: int) -> Case:
    """Words placed so that only glyph geometry or MuPDF's own spaces separate them, written as a
    raw content stream: TJ kerning gaps (no space characters), one text object per word without
    spaces, words with a trailing space and a tight gap to the next, Tw word spacing, Tc letter
    spacing. Checks: exact phrases present, and a letter-spaced word not split."""
    mode = SPACING_MODES[v % len(SPACING_MODES)]
    W = Words(rng)
    font = rng.choice(["helv", "tiro", "cour"])
    f = pymupdf.Font(font)
    size = rng.uniform(9, 12)
    doc = pymupdf.open()
    page = doc.new_page(width=rng.choice(PAGE_SIZES)[0], height=792)
    page.insert_text((10, 10), ".", fontname=font, fontsize=1)  # registers the font resource
    fname = page.get_fonts()[0][4]
    mx = rng.uniform(50, 80)
    width = page.rect.width - 2 * mx
    sents = W.paragraph(rng.randint(5, 7))
    words = " ".join(sents).split()
    ops = [f"BT /{fname} {size * 1.5:.2f} Tf {mx:.2f} {792 - 70:.2f} Td {_pdfstr(W.title())} Tj ET"]
    y = 792 - 70 - size * 3
    sp = f.text_length(" ", fontsize=size)
    tc = rng.uniform(0.06, 0.12) * size if mode == "letter_spacing" else 0.0
    line: list[str] = []

    def wlen(w: str) -> float:
        return f.text_length(w, fontsize=size) + tc * len(w)

    def emit(ws: list[str], last: bool) -> None:
        nonlocal y
        natural = sum(wlen(w) for w in ws)
        gaps = len(ws) - 1
        gap = (width - natural) / gaps if gaps and not last else sp * rng.uniform(1.0, 1.3)
        gap = min(gap, sp * 3)
        if mode == "tj_kern":  # no space characters: the gap is a TJ adjustment only
            parts = []
            for i, w in enumerate(ws):
                parts.append(_pdfstr(w))
                if i < gaps:
                    parts.append(f"{-gap * 1000 / size:.0f}")
            ops.append(f"BT /{fname} {size:.2f} Tf {mx:.2f} {y:.2f} Td [{' '.join(parts)}] TJ ET")
        elif mode in ("word_objects", "trailing_space"):
            x = mx
            for i, w in enumerate(ws):
                # trailing_space: each word carries its space, the next starts just past the
                # word's ink (justified text squeezed): MuPDF keeps the space, geometry barely shows it.
                t = w + " " if mode == "trailing_space" and i < gaps else w
                ops.append(f"BT /{fname} {size:.2f} Tf {x:.2f} {y:.2f} Td {_pdfstr(t)} Tj ET")
                step = sp * rng.uniform(0.35, 0.6) if mode == "trailing_space" else max(gap, sp * 0.9)
                x += wlen(w) + step
        else:  # word_spacing / letter_spacing: one string with spaces, Tw/Tc stretch it
            tw = max(0.0, gap - sp) if mode == "word_spacing" else 0.0
            ops.append(f"BT /{fname} {size:.2f} Tf {tc:.3f} Tc {tw:.3f} Tw {mx:.2f} {y:.2f} Td {_pdfstr(' '.join(ws))} Tj ET")
        y -= size * 1.3

    for w in words:
        if line and sum(wlen(x) for x in line + [w]) + sp * len(line) > width:
            emit(line, False)
            line = []
        line.append(w)
    emit(line, True)
    doc.update_stream(page.get_contents()[0], "\n".join(ops).encode("latin-1"))
    checks = []
    for _ in range(5):
        i = rng.randrange(0, len(words) - 5)
        checks.append(Check("present", text=" ".join(words[i:i + rng.randint(4, 6)]).rstrip(".,"), note=mode))
    long = max(words, key=len).rstrip(".,")
    checks.append(Check("present", text=long, note="word not split"))
    return Case(f"spacing-{v:02d}-{mode}", "spacing", _pdf(doc), checks, note=f"{mode} {font} {size:.1f}pt")


# ---------------------------------------------------------------------- marks
_AR_N = "مدينة شركة تقارير نفقات ورق مكتب خطة سوق مياه شبكة بيت طريق جسر نهر مصنع قرية سفينة مزرعة حديقة مدرسة".split()
_AR_V = "تقوم ترسم تبني تدرس تراقب تحسب ترفع تنشر".split()
_AR_A = "كبير جديدة بعيدة قديمة صغيرة حديثة واسعة هادئة".split()
_AR_P = "في عن من بين تحت فوق".split()
_HE_N = "עיר נהר גשר בית ספר שדה כפר ים הר דרך מפעל חווה נמל מגדל".split()
_HE_V = "בנה ראה מדד צייר שמר חקר תיקן סגר".split()
_HE_A = "גדול חדש ישן קטן רחוק שקט רחב עמוק".split()


def _rtl_sentence(rng: random.Random, script: str) -> str:
    if script == "ar":  # no lam: the htmlbox shaper maps some lam ligatures to unmapped glyphs
        w = [rng.choice(_AR_V), rng.choice(_AR_N), rng.choice(_AR_A), rng.choice(_AR_P), rng.choice(_AR_N), rng.choice(_AR_A),
             "ثم", rng.choice(_AR_V), rng.choice(_AR_N), rng.choice(_AR_A), rng.choice(_AR_P), rng.choice(_AR_N)]
    else:
        w = [rng.choice(_HE_N), rng.choice(_HE_A), rng.choice(_HE_V), "את", rng.choice(_HE_N), "ליד", rng.choice(_HE_N),
             rng.choice(_HE_A), "וגם", rng.choice(_HE_V), "את", rng.choice(_HE_N), rng.choice(_HE_A)]
    return " ".join(w) + "."


def _rtl_page(pen, rng: random.Random, script: str, mx: float) -> list[Check]:
    paras = [" ".join(_rtl_sentence(rng, script) for _ in range(2)) for _ in range(3)]
    width = rng.uniform(220, 320)
    size = rng.uniform(11, 14)
    css = f"* {{font-family: sans-serif; font-size: {size:.1f}px;}} p {{margin-bottom: {size:.0f}px;}}"
    body = "".join(f'<p dir="rtl">{p}</p>' for p in paras)
    x1 = pen.w - mx
    pen.page.insert_htmlbox(pymupdf.Rect(x1 - width, 90, x1, pen.h - 60), body, css=css)
    checks = []
    for p in paras:
        w = p.split()
        checks.append(Check("together", before=" ".join(w[:3]), after=" ".join(w[-3:]), note="RTL paragraph whole"))
    for a, b in zip(paras, paras[1:]):
        checks.append(Check("separate", before=" ".join(a.split()[-3:]), after=" ".join(b.split()[:3]), note="RTL paragraphs apart"))
    w = paras[1].split()
    # Normalised letters, not presentation forms: compared without NFKC.
    checks.append(Check("present", text=" ".join(w[2:6]), nfc=True, note=f"{script} text normalised"))
    return checks


def _marked_paragraph(pen, rng, W: Words, x0: float, y: float, width: float, font: str, size: float,
                      marks: list[tuple[str, str, str, str]]) -> float:
    """Sentences with inline tokens (base, mark, sup|sub, tail) drawn with a raised/lowered
    smaller mark; returns the y below the paragraph."""
    toks: list[tuple[str, str, str, str]] = []
    for s in W.paragraph(4):
        toks += [(w, "", "", "") for w in s.split()]
    for m in marks:
        toks.insert(rng.randrange(1, len(toks)), m)
    x = x0
    sp = pen.width(" ", font, size)
    for base, mark, kind, tail in toks:
        msize = size * 0.62
        wd = pen.width(base, font, size) + (pen.width(mark, font, msize) + pen.width(tail, font, size) if mark else 0)
        if x + wd > x0 + width:
            x, y = x0, y + size * 1.35
        pen.text(x, y, base, font, size)
        x += pen.width(base, font, size)
        if mark:
            pen.text(x, y - size * 0.38 if kind == "sup" else y + size * 0.22, mark, font, msize)
            x += pen.width(mark, font, msize)
            if tail:
                pen.text(x, y, tail, font, size)
                x += pen.width(tail, font, size)
        x += sp
    return y + size * 1.35


def marks_case(rng: random.Random, v: int) -> Case:
    kind = ("sup_footnotes", "captions", "rtl_ar", "rtl_he")[v % 4]
    W = Words(rng)
    font = rng.choice(["helv", "tiro", "dvserif", "dvsans"])
    size = rng.uniform(9, 11)
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice(PAGE_SIZES))
    mx = rng.uniform(50, 75)
    checks: list[Check] = []
    if kind.startswith("rtl"):
        checks += _rtl_page(pen, rng, kind[-2:], mx)
    elif kind == "sup_footnotes":
        pen.text(mx, 70, W.title(), bold(font), size * 1.6)
        n1, n2 = rng.sample(range(1, 9), 2)
        marks = [(f"{rng.choice(_NOUN)}s", str(n1), "sup", ""), (f"{rng.choice(_NOUN)}", str(n2), "sup", ""),
                 (f"{rng.choice(['10', '2', 'e'])}", rng.choice(["-3", "5", "x"]), "sup", ""),
                 (rng.choice(["CO", "H", "N", "x"]), rng.choice(["2", "3", "i"]), "sub", rng.choice(["", "O"]))]
        y = _marked_paragraph(pen, rng, W, mx, 110, pen.w - 2 * mx, font, size, marks)
        y = _marked_paragraph(pen, rng, W, mx, y + size, pen.w - 2 * mx, font, size, [])
        for base, mark, k, _ in marks:
            checks.append(Check(k, base=base, mark=mark, note=f"{k}script kept"))
        fy = pen.h - rng.uniform(90, 120)
        pen.hline(mx, mx + 120, fy - 12)
        fs = size * 0.78
        fns = []
        for n in (n1, n2):
            txt = " ".join(W.paragraph(rng.randint(1, 2)))
            fns.append(txt)
            pen.text(mx, fy - fs * 0.3, str(n), font, fs * 0.7)
            _, _, low = flow(pen, [[txt]], [(mx + 8, pen.w - 2 * mx - 8)], fy, pen.h, font, fs, 1.2, 0)
            fy = low + fs * 1.2  # the next footnote on the very next line: only its number sets it apart
        checks.append(Check("separate", before=fns[0][:40], after=fns[1][:40], note="two footnotes, two blocks"))
        checks += [Check("present", text=t[:60], max_diffs=1) for t in fns]
    else:  # captions: a table with its caption in the left column, text in the right one
        g = 20
        cw = (pen.w - 2 * mx - g) / 2
        cols = [(mx, cw), (mx + cw + g, cw)]
        pen.text(mx, 70, W.title(), bold(font), size * 1.6)
        right = [W.paragraph(3) for _ in range(8)]
        flow(pen, right, [cols[1]], 110, pen.h - 70, font, size, 1.25, size * 0.6)
        left = [W.paragraph(2)]
        _, _, low = flow(pen, left, [cols[0]], 110, pen.h, font, size, 1.25, 0)
        cap = f"Table {rng.randint(1, 9)}. " + W.sentence()
        _, _, low = flow(pen, [[cap]], [cols[0]], low + size * 2, pen.h, font, size * 0.9, 1.2, 0)
        tc, y = simple_table(pen, rng, mx, low + size * 1.8, cw, font, size * 0.85)
        checks += tc[:2]
        after = [W.paragraph(2)]
        flow(pen, after, [cols[0]], y + size * 2, pen.h - 70, font, size, 1.25, 0)
        head_cell = tc[0].top_heading
        checks.append(Check("order", before=cap, after=after[0][0], max_diffs=1, note="caption in its column"))
        checks.append(Check("near", before=" ".join(cap.split()[-4:]), after=head_cell, max_gap=60, note="caption by its table"))
    return Case(f"marks-{v:02d}-{kind}", "marks", _pdf(doc), checks, note=f"{kind} {font}")
