"""Generated born-digital pages with known truth for `bench_quality.py` (olmOCR-bench style).

One family per failure kind, each seeded and varied (fonts helv/tiro/cour and an embedded
DejaVu TTF, sizes, margins, page sizes, column counts and widths, positions):

- `order`: two/three columns with aligned baselines, a full-width stamp line crossing the
  gutter, full-width title and abstract, a figure spanning the columns mid-page, unequal
  columns, a column that ends early, a sidebar, a references block;
- `furniture`: one-page documents and documents whose header changes on every page;
- `rotated`: /Rotate 90/180/270 with upright-looking content, sideways content, text drawn
  rotated on an unrotated page;
- `spacing`: words separated only by glyph geometry or MuPDF's own spaces;
- `marks`: superscripts/subscripts, footnotes, captions, RTL paragraphs, Arabic forms;
- `table` (borderless financial statements and simple borderless tables) and `tablestruct`:
  in `quality_cases_tables.py`.

Every builder returns a `Case`: the PDF bytes and the `Check`s (see `quality_checks.py`) that
a perfect reader's Markdown passes. Texts come from a private word bank (never the tests'
fixtures), so every sentence is unique on its page and fuzzy matching cannot confuse two.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

import pymupdf

from quality_checks import Check

DEJAVU_DIR = "/usr/share/fonts/truetype/dejavu"
TTF = {"dvserif": os.path.join(DEJAVU_DIR, "DejaVuSerif.ttf"), "dvsans": os.path.join(DEJAVU_DIR, "DejaVuSans.ttf")}
TTF_BOLD = {"dvserif": os.path.join(DEJAVU_DIR, "DejaVuSerif-Bold.ttf"), "dvsans": os.path.join(DEJAVU_DIR, "DejaVuSans-Bold.ttf")}
BASE14_BOLD = {"helv": "hebo", "tiro": "tibo", "cour": "cobo"}
PAGE_SIZES = [(595.0, 842.0), (612.0, 792.0), (540.0, 720.0)]


@dataclass
class Case:
    name: str
    kind: str
    pdf: bytes
    checks: list[Check] = field(default_factory=list)
    note: str = ""


# ---------------------------------------------------------------------- words
_ADJ = ("amber coastal dormant eastern fragile granite hollow inland jagged kinetic lunar marshy "
        "northern oblique pale quiet rugged saline tidal upland vivid western yellow zonal brittle "
        "copper dense early frozen gentle humid icy lean mossy narrow older porous rapid sandy").split()
_NOUN = ("aquifer basin cliff delta estuary fjord glacier harbour island lagoon meadow orchard "
         "plateau quarry ravine saltmarsh terrace valley wetland ridge canyon dune moraine "
         "reef spring tundra steppe canal ferry lighthouse mill granary kiln viaduct weir").split()
_VERB = ("absorbed bordered carried diverted eroded fed flooded guarded hid joined kept lined "
         "marked narrowed opened protected reshaped sheltered traced undercut widened").split()
_PREP = "beside beyond below above across along behind near under within".split()
_AGENT = ("surveyors farmers pilots geologists herders masons fishermen archivists botanists "
          "cartographers engineers shepherds sailors monks traders weavers").split()
_TIME = ("after the thaw", "before the harvest", "during the long drought", "in early spring",
         "each autumn", "for three winters", "until the flood", "throughout the survey season")


class Words:
    """Unique sentences, seeded: no sentence (nor its first five words) repeats in a run."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.seen: set[str] = set()

    def sentence(self) -> str:
        r = self.rng
        for _ in range(200):
            forms = [
                f"The {r.choice(_ADJ)} {r.choice(_NOUN)} {r.choice(_VERB)} the {r.choice(_ADJ)} {r.choice(_NOUN)} {r.choice(_PREP)} the {r.choice(_NOUN)}.",
                f"{r.choice(_AGENT).capitalize()} {r.choice(_VERB)} a {r.choice(_ADJ)} {r.choice(_NOUN)} {r.choice(_TIME)}.",
                f"{r.choice(_TIME).capitalize()}, the {r.choice(_AGENT)} {r.choice(_VERB)} every {r.choice(_ADJ)} {r.choice(_NOUN)} {r.choice(_PREP)} the {r.choice(_NOUN)}.",
                f"A {r.choice(_ADJ)} {r.choice(_NOUN)} once {r.choice(_VERB)} the {r.choice(_NOUN)} where {r.choice(_AGENT)} {r.choice(_VERB)} {r.choice(_ADJ)} stone.",
            ]
            s = r.choice(forms)
            key = " ".join(s.split()[:5])
            if s not in self.seen and key not in self.seen:
                self.seen.update((s, key))
                return s
        raise RuntimeError("word bank exhausted")

    def paragraph(self, n: int) -> list[str]:
        return [self.sentence() for _ in range(n)]

    def title(self) -> str:
        r = self.rng
        return f"{r.choice(_ADJ).capitalize()} {r.choice(_NOUN)}s and the {r.choice(_ADJ)} {r.choice(_NOUN)}"


# ---------------------------------------------------------------------- drawing
_FONTS: dict[str, pymupdf.Font] = {}


def font_obj(name: str) -> pymupdf.Font:
    if name not in _FONTS:
        path = TTF.get(name) or {f"{k}-b": v for k, v in TTF_BOLD.items()}.get(name)
        _FONTS[name] = pymupdf.Font(fontfile=path) if path else pymupdf.Font(name)
    return _FONTS[name]


_ADV: dict[tuple[str, str], float] = {}


def text_width(text: str, font: str, size: float) -> float:
    """Advance width, cached per glyph: MuPDF's text_length per call dominated generation time."""
    f = None
    total = 0.0
    for ch in text:
        a = _ADV.get((font, ch))
        if a is None:
            f = f or font_obj(font)
            a = _ADV[(font, ch)] = f.text_length(ch, fontsize=1)
        total += a
    return total * size


def bold(name: str) -> str:
    return BASE14_BOLD.get(name, f"{name}-b" if name in TTF else name)


class Pen:
    """Draws in the page's visible (rotated) coordinates: a page with /Rotate R whose content
    looks upright, as PDF producers write landscape pages."""

    def __init__(self, page: pymupdf.Page):
        self.page = page
        self.rot = page.rotation
        self.m = page.derotation_matrix
        r = page.rect  # visible size
        self.w, self.h = r.width, r.height

    def width(self, text: str, font: str, size: float) -> float:
        return text_width(text, font, size)

    def text(self, x: float, y: float, text: str, font: str = "helv", size: float = 10, color=(0, 0, 0)) -> None:
        path = TTF.get(font) or {f"{k}-b": v for k, v in TTF_BOLD.items()}.get(font)
        self.page.insert_text(pymupdf.Point(x, y) * self.m, text, fontname=font, fontfile=path,
                              fontsize=size, rotate=self.rot, color=color)

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill=(0.85, 0.88, 0.92), stroke=None) -> None:
        r = pymupdf.Rect(x0, y0, x1, y1) * self.m
        self.page.draw_rect(r, color=stroke, fill=fill, width=0.6)

    def hline(self, x0: float, x1: float, y: float, width: float = 0.5) -> None:
        self.page.draw_line(pymupdf.Point(x0, y) * self.m, pymupdf.Point(x1, y) * self.m, width=width)

    def wrap(self, words: list[str], width: float, font: str, size: float, first_only: bool = False) -> list[str]:
        lines, cur, cur_w = [], "", 0.0
        sp = self.width(" ", font, size)
        for w in words:
            ww = self.width(w, font, size)
            if cur and cur_w + sp + ww > width:
                lines.append(cur)
                if first_only:
                    return lines
                cur, cur_w = w, ww
            else:
                cur, cur_w = (f"{cur} {w}", cur_w + sp + ww) if cur else (w, ww)
        return lines + ([cur] if cur else [])


@dataclass
class Line:
    x: float
    y: float
    text: str
    col: int


def flow(pen: Pen, paras: list[list[str]], cols: list[tuple[float, float]], top: float, bottom: float,
         font: str, size: float, lead: float, gap: float, draw: bool = True
         ) -> tuple[list[Line], list[tuple[int, int, int]], float]:
    """Flow paragraphs (lists of sentences) down the columns in turn.

    Returns the lines drawn, (paragraph, sentence, column it starts in) for each sentence in the
    order drawn, and the lowest baseline used. A paragraph that does not fit whole is not drawn
    (nor any after it): every sentence a check names is on the page in full."""
    lines: list[Line] = []
    starts: list[tuple[int, int, int]] = []
    c, y = 0, top
    low = top
    for pi, sents in enumerate(paras):
        words: list[str] = []
        marks: list[int] = []  # word index where each sentence starts
        for s in sents:
            marks.append(len(words))
            words += s.split()
        placed: list[Line] = []
        pc, py = c, y
        rest = words
        while rest:
            if py > bottom:
                pc, py = pc + 1, top
                if pc >= len(cols):
                    return lines, starts, low
            # Wrap line by line at the width of the column the line lands in (unequal columns).
            ln = pen.wrap(rest, cols[pc][1], font, size, first_only=True)[0]
            rest = rest[len(ln.split()):]
            placed.append(Line(cols[pc][0], py, ln, pc))
            py += size * lead
        k = 0
        for ln in placed:
            n = len(ln.text.split())
            starts += [(pi, si, ln.col) for si, m in enumerate(marks) if k <= m < k + n]
            if draw:
                pen.text(ln.x, ln.y, ln.text, font, size)
            lines.append(ln)
            low = max(low, ln.y)
            k += n
        c, y = pc, py + gap
    return lines, starts, low


def mixing_checks(lines: list[Line], rng: random.Random, n: int = 3) -> list[Check]:
    """Absent: the tail of one column's line joined to the head of the line beside it on the same
    baseline (only a reader that merges the two columns' lines writes that)."""
    out = []
    by_y: dict[float, list[Line]] = {}
    for ln in lines:
        by_y.setdefault(round(ln.y, 1), []).append(ln)
    pairs = [(a, b) for row in by_y.values() for a, b in zip(sorted(row, key=lambda l: l.x), sorted(row, key=lambda l: l.x)[1:])
             if len(a.text.split()) >= 3 and len(b.text.split()) >= 3]
    for a, b in rng.sample(pairs, min(n, len(pairs))):
        out.append(Check("absent", text=" ".join(a.text.split()[-2:] + b.text.split()[:2]), note="columns mixed on a baseline"))
    return out


def order_checks(paras: list[list[str]], starts: list[tuple[int, int, int]], rng: random.Random) -> list[Check]:
    """Order across every column change, plus a few within columns; sentences that straddle a
    column break must still be present whole."""
    out = []
    seq = [(paras[p][s], c) for p, s, c in starts]
    for (a, ca), (b, cb) in zip(seq, seq[1:]):
        if ca != cb:
            out.append(Check("order", before=a, after=b, max_diffs=1, note="column change"))
    for _ in range(3):
        if len(seq) > 2:
            i, j = sorted(rng.sample(range(len(seq)), 2))
            out.append(Check("order", before=seq[i][0], after=seq[j][0], max_diffs=1))
    return out


def new_doc_page(doc: pymupdf.Document, size: tuple[float, float], rotation: int = 0) -> tuple[pymupdf.Page, Pen]:
    w, h = size
    page = doc.new_page(width=w, height=h) if rotation in (0, 180) else doc.new_page(width=h, height=w)
    page.set_rotation(rotation)
    return page, Pen(page)


def _pdf(doc: pymupdf.Document) -> bytes:
    # Subset embedded TTFs: a whole DejaVu per page would make every reader slow on parsing alone.
    doc.subset_fonts()
    data = doc.tobytes(garbage=3, deflate=True)
    doc.close()
    return data


# ---------------------------------------------------------------------- order
ORDER_LAYOUTS = ("two_aligned", "stamp_two", "three", "span_figure", "unequal", "ends_early", "sidebar", "references")


def order_case(rng: random.Random, v: int) -> Case:
    layout = ORDER_LAYOUTS[v % len(ORDER_LAYOUTS)]
    W = Words(rng)
    font = rng.choice(["helv", "tiro", "cour", "dvserif"])
    size = rng.uniform(8.5, 10.5) if font != "cour" else rng.uniform(7.5, 8.5)
    lead = rng.uniform(1.15, 1.35)
    doc = pymupdf.open()
    page, pen = new_doc_page(doc, rng.choice(PAGE_SIZES))
    mx = rng.uniform(40, 70)
    gutter = rng.choice([rng.uniform(7, 11), rng.uniform(12, 28)])  # tight gutters too: lines nearly touch
    y = rng.uniform(45, 70)
    checks: list[Check] = []
    if layout in ("stamp_two", "references", "span_figure") or rng.random() < 0.3:
        stamp = (f"Accepted manuscript {rng.randint(1000, 9999)} posted {rng.randint(1, 28)} May {rng.randint(2015, 2025)}"
                 f" - not the version of record - licence CC BY {rng.choice(['4.0', '3.0'])}")
        pen.text(mx + rng.uniform(0, 30), y, stamp, font, size * 0.8)
        y += size * 2.2
    title = W.title()
    pen.text(mx, y + 8, title, bold(font), size * 1.8)
    y += size * 1.8 + 16
    abstract = W.paragraph(rng.randint(2, 3))
    body_w = pen.w - 2 * mx
    ab_lines, _, low = flow(pen, [abstract], [(mx + 10, body_w - 20)], y, pen.h, font, size * 0.95, lead, 0)
    y = low + size * 2.5
    checks.append(Check("order", before=title, after=abstract[0], max_diffs=1))
    n_cols = 3 if layout == "three" else 2
    if layout == "unequal":
        f = rng.choice([0.38, 0.42, 0.58, 0.62])
        wa = (body_w - gutter) * f
        cols = [(mx, wa), (mx + wa + gutter, body_w - gutter - wa)]
    elif layout == "sidebar":
        wa = (body_w - gutter) * rng.uniform(0.62, 0.7)
        cols = [(mx, wa)]
        side = (mx + wa + gutter, body_w - gutter - wa)
    else:
        cw = (body_w - gutter * (n_cols - 1)) / n_cols
        cols = [(mx + i * (cw + gutter), cw) for i in range(n_cols)]
    bottom = pen.h - rng.uniform(50, 80)
    if layout == "references":
        bottom -= 150
    paras = [W.paragraph(rng.randint(2, 4)) for _ in range(40)]
    first_body = paras[0][0]
    checks.append(Check("order", before=abstract[-1], after=first_body, max_diffs=1))
    if layout == "span_figure":
        mid = y + (bottom - y) * rng.uniform(0.35, 0.5)
        n_top = 2 * len(cols)
        lines1, st1, _ = flow(pen, paras[:n_top], cols, y, mid - 10, font, size, lead, size * 0.6)
        used1 = sorted({p for p, _, _ in st1})
        fig_top = max(l.y for l in lines1) + size * 2
        pen.rect(mx, fig_top, pen.w - mx, fig_top + 90)
        cap = f"Figure {rng.randint(1, 6)}. " + W.sentence()
        pen.text(mx, fig_top + 90 + size * 1.6, cap, font, size * 0.9)
        rest = paras[len(used1):]
        lines2, st2, _ = flow(pen, rest, cols, fig_top + 90 + size * 4, bottom, font, size, lead, size * 0.6)
        # Sentences straddling the region break were drawn twice in no layout: renumber.
        seq = [(paras[p][s], c) for p, s, c in st1] + [(rest[p][s], c) for p, s, c in st2]
        lines = lines1 + lines2
        last_top = next(s for s, _ in reversed(seq[: len(st1)]))
        checks.append(Check("order", before=last_top, after=cap, max_diffs=1, note="figure after the top columns"))
        checks.append(Check("order", before=cap, after=rest[0][0] if st2 else cap, max_diffs=1))
        for (a, ca), (b, cb) in zip(seq, seq[1:]):
            if ca != cb:
                checks.append(Check("order", before=a, after=b, max_diffs=1, note="column change"))
    else:
        if layout == "ends_early":
            # The last column holds only a few lines: count what fills the others first.
            _, st, _ = flow(pen, paras, cols, y, bottom, font, size, lead, size * 0.6, draw=False)
            full = sorted({p for p, _, c in st if c < len(cols) - 1})
            paras = paras[: len(full) + 1]
        lines, st, _ = flow(pen, paras, cols, y, bottom, font, size, lead, size * 0.6)
        checks += order_checks(paras, st, rng)
        if layout == "sidebar":
            sp = [W.paragraph(2) for _ in range(3)]
            sy = y + rng.uniform(0, 120)
            pen.rect(side[0] - 6, sy - size * 2.5, side[0] + side[1] + 6, bottom, fill=(0.92, 0.92, 0.86))
            shead = f"Box {rng.randint(1, 4)}: {W.title()}"
            s_lines = pen.wrap(shead.split(), side[1], bold(font), size * 0.95)
            for i, t in enumerate(s_lines):
                pen.text(side[0], sy + i * size * 1.2, t, bold(font), size * 0.95)
            sl, sst, _ = flow(pen, sp, [side], sy + len(s_lines) * size * 1.2 + 4, bottom - 10, font, size * 0.82, 1.2, 3)
            lines += sl
            checks.append(Check("order", before=sp[0][0], after=sp[-1][-1], max_diffs=1, note="sidebar in order"))
            checks.append(Check("present", text=sp[1][0], max_diffs=1))
        if layout == "references":
            ry = bottom + size * 3
            pen.text(mx, ry, "References", bold(font), size * 1.2)
            refs = [f"[{i + 1}] {rng.choice(_AGENT).capitalize()} {chr(65 + i)}. {W.title()}. J. {rng.choice(_NOUN).capitalize()} Stud. "
                    f"{rng.randint(3, 60)}, {rng.randint(1, 300)}-{rng.randint(301, 600)} ({rng.randint(1970, 2024)})." for i in range(6)]
            rcols = [(mx, (body_w - gutter) / 2), (mx + (body_w + gutter) / 2, (body_w - gutter) / 2)]
            rl, rst, _ = flow(pen, [[r] for r in refs], rcols, ry + size * 2, pen.h - 40, font, size * 0.8, 1.2, 2)
            lines += rl
            body_last = paras[st[-1][0]][st[-1][1]]
            checks.append(Check("order", before=body_last, after="References", note="references after the body"))
            for a, b in zip(refs, refs[1:]):
                checks.append(Check("order", before=a[:45], after=b[:45], max_diffs=1))
    checks += mixing_checks(lines, rng)
    return Case(f"order-{v:02d}-{layout}", "order", _pdf(doc), checks, note=f"{layout} {font} {size:.1f}pt")


# ---------------------------------------------------------------------- furniture
_MONTHS = "January February March April May June July August September October November December".split()
_PUBLISHER = ("Halden Academic Press", "Norrvik Scientific", "Corvel & Sons Publishing", "Ashgrove University Press",
              "Brightwater Open Science", "Kestrel Learned Society")


def _furniture(rng: random.Random, W: Words, page_no: int, n_pages: int) -> tuple[list[str], list[str], list[str]]:
    """(top band texts, bottom band texts, the texts that must be absent: distinctive ones)."""
    j = f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN).capitalize()} Journal"
    slug = j.split()[1].lower()
    host = f"www.{slug}{rng.randint(1, 99)}.org"
    doi = f"10.{rng.randint(1000, 9999)}/{slug[:3]}.{rng.randint(2000, 2025)}.{rng.randint(100, 9999)}"
    date = f"{rng.choice(_MONTHS)} {rng.randint(1, 28)}, {rng.randint(2005, 2025)}"
    pub = rng.choice(_PUBLISHER)
    pn_forms = [f"Page {page_no} of {n_pages + rng.randint(0, 9)}", f"- {page_no + rng.randint(0, 40)} -",
                f"p. {page_no + rng.randint(3, 300)}", f"S{page_no + rng.randint(1, 40)}", str(page_no + rng.randint(0, 500)),
                ["i", "ii", "iii", "iv", "v", "vi", "vii"][page_no % 7]]
    pn = rng.choice(pn_forms)
    cands = [
        f"{j} | {host} | Volume {rng.randint(1, 60)} | Issue {rng.randint(1, 12)} | e{rng.randint(1000, 9999)}",
        f"{j}, Vol. {rng.randint(1, 60)}, No. {rng.randint(1, 12)} ({rng.randint(2000, 2025)}), pp. {rng.randint(1, 300)}-{rng.randint(301, 600)}",
        f"Downloaded from https://{host}/doi/{doi} on {date}",
        f"Downloaded from {host} by guest on {rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2010, 2025)}",
        f"Published by {pub} on behalf of the {rng.choice(_ADJ).capitalize()} Society",
        f"© {rng.randint(1995, 2025)} {pub}. All rights reserved.",
        f"Copyright © {rng.randint(1995, 2025)} by the authors. Licensee {pub}.",
        f"https://doi.org/{doi}",
        f"DOI: {doi}",
        f"Doc. No. {rng.choice('ABCDEFTR')}{rng.choice('PRSQ')}-{rng.randint(1000, 9999)}-{rng.randint(1, 99):02d} Rev. {rng.choice('ABCDEFG')}",
        f"Part No. {rng.randint(1000, 9999)}-{rng.randint(1, 999):03d} Rev {rng.choice('ABCDE')}",
        f"{W.title()} - Draft {rng.randint(1, 9)}.{rng.randint(0, 9)} - {date}",
    ]
    rng.shuffle(cands)
    top = cands[: rng.randint(1, 2)]
    bottom = cands[2: 2 + rng.randint(1, 2)]
    if rng.random() < 0.5:
        top.append(pn)
    else:
        bottom.append(pn)
    distinctive = [t for t in top + bottom if len(t) >= 6 and not t.isdigit()]
    return top, bottom, distinctive


def _letterhead(pen: Pen, rng: random.Random, mx: float, font: str) -> tuple[float, list[str]]:
    name = f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN).capitalize()} {rng.choice(['Ltd', 'GmbH', 'Partners LLP', 'Consulting'])}"
    addr = (f"{rng.randint(1, 200)} {rng.choice(_NOUN).capitalize()} Road, {rng.choice(_ADJ).capitalize()}ton "
            f"{rng.choice('ABCDEFGHKLM')}{rng.randint(1, 20)} {rng.randint(1, 9)}{rng.choice('ABDEFG')}{rng.choice('HJLNPQ')}")
    tel = f"Tel +{rng.randint(1, 49)} {rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(1000, 9999)} | info@{name.split()[1].lower()}.example"
    pen.text(mx, 48, name, bold(font), 15)
    pen.text(mx, 62, addr, font, 7.5)
    pen.text(mx, 72, tel, font, 7.5)
    pen.hline(mx, pen.w - mx, 78)
    return 110, [name, addr, tel]


def furniture_case(rng: random.Random, v: int) -> Case:
    W = Words(rng)
    font = rng.choice(["helv", "tiro", "dvsans", "dvserif"])
    n_pages = 1 if v % 3 != 2 else rng.randint(2, 3)
    letter = v % 4 == 1
    size_wh = rng.choice(PAGE_SIZES)
    doc = pymupdf.open()
    checks: list[Check] = []
    for pno in range(1, n_pages + 1):
        page, pen = new_doc_page(doc, size_wh)
        mx = rng.uniform(45, 75)
        size = rng.uniform(9, 11)
        top, bottom, distinctive = _furniture(rng, W, pno, n_pages)
        fsize = rng.uniform(6.5, 8.5)
        y0 = rng.uniform(26, 40)
        if letter and pno == 1:
            body_top, head = _letterhead(pen, rng, mx, font)
            distinctive += head[1:]  # the address and phone lines; the name may repeat in the body
        else:
            # One band line, or two parts on one baseline (left and right aligned).
            if len(top) >= 2 and rng.random() < 0.5:
                pen.text(mx, y0, top[0], font, fsize)
                pen.text(pen.w - mx - pen.width(top[1], font, fsize), y0, top[1], font, fsize)
            else:
                for i, t in enumerate(top):
                    pen.text(mx if i % 2 == 0 else pen.w - mx - pen.width(t, font, fsize), y0 + i * fsize * 1.4, t, font, fsize)
            if rng.random() < 0.4:
                pen.hline(mx, pen.w - mx, y0 + len(top) * fsize * 1.4)
            body_top = y0 + len(top) * fsize * 1.4 + rng.uniform(18, 40)
        yb = pen.h - rng.uniform(24, 40)
        for i, t in enumerate(reversed(bottom)):
            x = rng.choice([mx, (pen.w - pen.width(t, font, fsize)) / 2, pen.w - mx - pen.width(t, font, fsize)])
            pen.text(x, yb - i * fsize * 1.5, t, font, fsize)
        body_bottom = yb - len(bottom) * fsize * 1.5 - rng.uniform(20, 40)
        title = W.title()
        pen.text(mx, body_top + size, title, bold(font), size * 1.5)
        cols = [(mx, pen.w - 2 * mx)]
        if rng.random() < 0.4 and not letter:
            g = 18
            cw = (pen.w - 2 * mx - g) / 2
            cols = [(mx, cw), (mx + cw + g, cw)]
        paras = [W.paragraph(rng.randint(2, 4)) for _ in range(30)]
        lines, st, _ = flow(pen, paras, cols, body_top + size * 3.5, body_bottom, font, size, 1.25, size * 0.7)
        sents = [paras[p][s] for p, s, _ in st]
        checks.append(Check("present", text=title, note="title kept"))
        checks += [Check("present", text=sents[0], max_diffs=1, note="first body sentence kept"),
                   Check("present", text=sents[-1], max_diffs=1, note="last body sentence kept")]
        checks += [Check("absent", text=t, note=f"furniture p{pno}") for t in distinctive]
    kind = "letter" if letter else ("multi" if n_pages > 1 else "single")
    return Case(f"furniture-{v:02d}-{kind}", "furniture", _pdf(doc), checks, note=f"{n_pages}p {font}")


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
        from quality_cases_tables import simple_table  # that module builds on this one: import when drawn

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
