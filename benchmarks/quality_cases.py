"""Generated born-digital pages with known truth for `bench_quality.py` (olmOCR-bench style).

One family per failure kind, each seeded and varied (fonts helv/tiro/cour and an embedded
DejaVu TTF, sizes, margins, page sizes, column counts and widths, positions):

- `order`: two/three columns with aligned baselines, a full-width stamp line crossing the
  gutter, full-width title and abstract, a figure spanning the columns mid-page, unequal
  columns, a column that ends early, a sidebar, a references block;
- `furniture`: one-page documents and documents whose header changes on every page;
- `rotated`, `table`, `spacing`, `marks`: in `quality_cases_more.py`.

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
