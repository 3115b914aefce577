"""Generated pages for the `furniture1` kind of `bench_quality.py`: running heads, folios and
stamps on SINGLE pages and on the FIRST pages of short documents, where no repetition across
pages tells them apart (issue 22: only 54% of olmOCR-bench's header/footer checks passed there).

Each case is one of eight layouts (journal article first page, an inner page read alone with an
author or short-title running head, a memo/report, a letter, a preprint first page, a book page,
a short multi-page article), with seeded fonts, sizes, margins and page sizes. The furniture is
what real documents carry in their margin bands: journal lines ("Journal of X, Vol. 12, No. 3"),
author heads ("Okafor et al."), short-title heads, page numbers in many forms ("47", "xiv",
"Page 3 of 9", "- 3 -", "3 | Short Title"), confidentiality lines, "Downloaded from" stamps, DOIs,
copyright lines, preprint stamps, small type in the band.

Checks: `absent` for every furniture line, and `present` for EVERY body line, including the
controls a furniture rule must never take: a title at the top, a letter's greeting and signature
block, a dated last line, a short last paragraph line near the bottom, and footnotes (some with a
URL or an email, which look like stamps).
"""

from __future__ import annotations

import random

import pymupdf

from quality_cases import _ADJ, _MONTHS, _NOUN, _PUBLISHER, PAGE_SIZES, Case, Words, _pdf, bold, flow, new_doc_page
from quality_checks import Check

_SURNAMES = ("Okafor Mendes Lindqvist Haddad Brandt Rao Voss Ingram Castellanos Nakamura Petrov Adeyemi "
             "Moreau Kowalski Fischer Tanaka Olsen Bianchi").split()
_ITALIC = {"helv": "heit", "tiro": "tiit", "cour": "coit"}
_CITIES = "Bergen Leeds Lyon Porto Ghent Turin Graz Aarhus Cork Tartu".split()
LAYOUTS = ("article_first", "inner_author", "inner_title", "report", "letter", "preprint", "book", "short_doc")


def _italic(font: str) -> str:
    return _ITALIC.get(font, font)


def _roman(n: int) -> str:
    out = ""
    for v, s in ((10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= v:
            out, n = out + s, n - v
    return out


def _journal(rng: random.Random) -> str:
    return f"{rng.choice(['Journal of', 'Annals of', 'Bulletin of'])} {rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN).capitalize()} Studies"


def journal_line(rng: random.Random) -> str:
    j, v, n, y = _journal(rng), rng.randint(2, 60), rng.randint(1, 12), rng.randint(1998, 2025)
    a = rng.randint(1, 400)
    return rng.choice([
        f"{j}, Vol. {v}, No. {n} ({y}), pp. {a}-{a + rng.randint(8, 30)}",
        f"{j} {y}; {v}({n}): {a}-{a + rng.randint(8, 30)}",
        f"{j} · Volume {v} · Issue {n} · {rng.choice(_MONTHS)} {y}",
        f"{j} ({y}) {v}:{a}-{a + rng.randint(8, 30)}",
        f"{j}, {y}, {v}, {a}-{a + rng.randint(8, 30)}",
    ])


def author_head(rng: random.Random) -> str:
    a, b, c = rng.sample(_SURNAMES, 3)
    return rng.choice([f"{a} et al.", f"{a[0]}. {a} and {b[0]}. {b}", f"{a.upper()} AND {b.upper()}",
                       f"{a}, {b} and {c}", f"{a} & {b}"])


def short_title(rng: random.Random, W: Words) -> str:
    t = W.title()
    return t.upper() if rng.random() < 0.4 else t


def folio(rng: random.Random, n: int, total: int, title: str, left: bool) -> str:
    """A page number in one of the forms books, journals and reports print."""
    form = rng.choice(["arabic", "roman", "page_of", "dashes", "bar", "bar", "p"])
    if form == "roman":
        return _roman(rng.randint(3, 28))
    if form == "page_of":
        return f"Page {n} of {total}"
    if form == "dashes":
        return f"- {n} -"
    if form == "bar":
        return f"{n} | {title}" if left else f"{title} | {n}"
    if form == "p":
        return f"p. {n}"
    return str(n)


def stamp(rng: random.Random, which: str) -> str:
    host = f"www.{rng.choice(_NOUN)}{rng.randint(2, 99)}.org"
    doi = f"10.{rng.randint(1000, 9999)}/{rng.choice(_NOUN)[:4]}.{rng.randint(2000, 2025)}.{rng.randint(100, 99999)}"
    date = f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2012, 2025)}"
    pub = rng.choice(_PUBLISHER)
    return {
        "downloaded": rng.choice([f"Downloaded from https://{host}/ by guest on {date}",
                                  f"Downloaded from {host} on {date}"]),
        "doi": rng.choice([f"https://doi.org/{doi}", f"DOI: {doi}", f"doi:{doi}"]),
        "copyright": rng.choice([f"© {rng.randint(1995, 2025)} The Authors. Published by {pub}.",
                                 f"Copyright © {rng.randint(1995, 2025)} {pub}. All rights reserved.",
                                 f"© {rng.randint(1995, 2025)} {pub}"]),
        "confidential": rng.choice(["CONFIDENTIAL - Internal use only", "Proprietary and confidential. Do not distribute.",
                                    "For internal use only", "Confidential"]),
        "preprint": rng.choice(["Preprint. Under review.", "This is a preprint; it has not been peer reviewed.",
                                f"Preprint submitted to {_journal(rng)}", "Author's accepted manuscript",
                                f"Accepted manuscript, {date}"]),
        "printed": f"Printed {rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(2015, 2025)} "
                   f"{rng.randint(8, 18)}:{rng.randint(0, 59):02d}",
        "registered": f"Registered in {rng.choice(['England and Wales', 'Scotland', 'Ireland'])} No. "
                      f"{rng.randint(1000000, 9999999)} · VAT {rng.randint(100, 999)} {rng.randint(1000, 9999)} {rng.randint(10, 99)}",
    }[which]


class Page:
    """One generated page: draws furniture and body, collects the checks."""

    def __init__(self, doc: pymupdf.Document, rng: random.Random, W: Words, size_wh, font: str):
        self.rng, self.W, self.font = rng, W, font
        self.page, self.pen = new_doc_page(doc, size_wh)
        self.size = rng.uniform(9, 11.5) if font != "cour" else rng.uniform(8, 9.5)
        self.mx = rng.uniform(50, 78)
        self.fsize = self.size * rng.uniform(0.7, 0.9)
        self.absent: list[str] = []
        self.present: list[str] = []
        self.marks: list[str] = []  # footnote marks: in the body's text, not checked

    # -- furniture
    def band_row(self, y: float, left: str | None, right: str | None, center: str | None = None,
                 italic: bool = False, size: float | None = None) -> None:
        """A header/footer row: parts set flush left, flush right or centred on one baseline."""
        pen, f = self.pen, _italic(self.font) if italic else self.font
        s = size or self.fsize
        for text, x in ((left, self.mx), (right, None), (center, "c")):
            if not text:
                continue
            w = pen.width(text, f, s)
            xx = pen.w - self.mx - w if x is None else (pen.w - w) / 2 if x == "c" else x
            pen.text(xx, y, text, f, s)
            self.absent.append(text)

    def side_stamp(self, text: str) -> None:
        """A vertical stamp up the left margin (arXiv, download lines)."""
        self.page.insert_text((self.mx * 0.45, self.pen.h * 0.72), text, fontsize=self.fsize * 1.2, rotate=90,
                              fontname="helv", color=(0.45, 0.45, 0.45))
        self.absent.append(text)

    # -- body
    def line(self, x: float, y: float, text: str, font: str | None = None, size: float | None = None) -> float:
        """Draw a body line (wrapped at the right margin); returns the baseline after it."""
        f, s = font or self.font, size or self.size
        for part in self.pen.wrap(text.split(), self.pen.w - self.mx - x, f, s):
            self.pen.text(x, y, part, f, s)
            self.present.append(part)
            y += s * 1.25
        return y

    def body(self, top: float, bottom: float, n_cols: int = 1, paras: int = 30, short_last: bool = False) -> float:
        """Flow paragraphs down the columns; every drawn line must be present. Returns the last baseline."""
        pen, rng = self.pen, self.rng
        width = pen.w - 2 * self.mx
        if n_cols == 2:
            g = rng.uniform(14, 24)
            cw = (width - g) / 2
            cols = [(self.mx, cw), (self.mx + cw + g, cw)]
        else:
            cols = [(self.mx, width)]
        ps = [self.W.paragraph(rng.randint(2, 4)) for _ in range(paras)]
        if short_last:
            ps[-1] = [self.W.sentence()]
        lines, _, low = flow(pen, ps, cols, top, bottom, self.font, self.size, 1.25, self.size * 0.6)
        self.present += [ln.text for ln in lines]
        return low

    def footnote(self, y: float, with_link: bool) -> None:
        """A footnote in small type at the foot of the text: a mark, then its text."""
        rng, pen = self.rng, self.pen
        s = self.size * rng.uniform(0.75, 0.85)
        mark = rng.choice(["*", "1", "2"])
        name = rng.choice(_SURNAMES)
        if with_link:
            text = rng.choice([f"Corresponding author: {name.lower()}@{rng.choice(_NOUN)}.example.edu",
                               f"Data and code are available at https://{rng.choice(_NOUN)}-{rng.randint(1, 99)}.example.org/archive",
                               f"See also the survey of the {rng.choice(_NOUN)} by {name} (doi:10.{rng.randint(1000, 9999)}/{rng.randint(100, 999)})"])
        else:
            text = self.W.sentence()
        pen.hline(self.mx, self.mx + 100, y - s * 1.6, 0.4)
        pen.text(self.mx, y - s * 0.35, mark, self.font, s * 0.7)
        self.marks.append(mark)
        self.line(self.mx + s * 0.7, y, text, size=s)

    def check(self) -> list[Check]:
        others = " ".join(self.present + self.marks).lower()
        out = [Check("present", text=t, max_diffs=1 if len(t) > 20 else 0, note="body line kept") for t in self.present]
        for t in self.absent:
            if t.lower() in others:
                continue  # (a folio that also occurs in the body cannot be checked as absent)
            out.append(Check("absent", text=t, note="furniture"))
        return out


def _folio_text(p: Page, n: int, total: int, left: bool, title: str) -> str:
    """A folio whose digits occur nowhere in the page's body (so `absent` can test it)."""
    for _ in range(20):
        f = folio(p.rng, n, total, title, left)
        if f.lower() not in " ".join(p.present).lower():
            return f
        n += p.rng.randint(1, 30)
    return f


def furniture1_case(rng: random.Random, v: int) -> Case:
    layout = LAYOUTS[v % len(LAYOUTS)]
    W = Words(rng)
    font = rng.choice(["helv", "tiro", "dvserif", "dvsans", "cour"] if layout != "letter" else ["helv", "tiro", "dvsans"])
    size_wh = rng.choice(PAGE_SIZES)
    doc = pymupdf.open()
    n_pages = rng.randint(2, 3) if layout == "short_doc" else 1
    checks: list[Check] = []
    first_no = rng.randint(1, 400) if layout in ("article_first", "short_doc", "inner_author", "inner_title") else 1
    for i in range(n_pages):
        p = Page(doc, rng, W, size_wh, font)
        pen = p.pen
        y_top = rng.uniform(24, 46)
        y_bot = pen.h - rng.uniform(22, 42)
        total = n_pages + rng.randint(0, 12)
        kind = layout if layout != "short_doc" else ("article_first" if i == 0 else rng.choice(["inner_author", "inner_title"]))
        if kind in ("article_first", "preprint"):
            _first_page(p, kind, y_top, y_bot, first_no + i, total)
        elif kind in ("inner_author", "inner_title", "book"):
            _inner_page(p, kind, y_top, y_bot, first_no + i, total)
        elif kind == "report":
            _report(p, y_top, y_bot, total)
        else:
            _letter(p, y_top, y_bot)
        checks += p.check()
    return Case(f"furniture1-{v:02d}-{layout}", "furniture1", _pdf(doc), checks, note=f"{layout} {n_pages}p {font}")


def _first_page(p: Page, kind: str, y_top: float, y_bot: float, no: int, total: int) -> None:
    rng, pen, W = p.rng, p.pen, p.W
    y = y_top
    if kind == "preprint":
        p.band_row(y, stamp(rng, "preprint"), None)
        if rng.random() < 0.6:
            p.side_stamp(f"arXiv:{rng.randint(1500, 2412)}.{rng.randint(10000, 99999)}v{rng.randint(1, 4)} "
                         f"[{rng.choice(['physics.geo-ph', 'q-bio.PE', 'stat.AP'])}] {rng.randint(1, 28)} {rng.choice(_MONTHS)[:3]} {rng.randint(2015, 2025)}")
    else:
        head = journal_line(rng)
        if rng.random() < 0.5:
            p.band_row(y, head, None, italic=rng.random() < 0.5)
        else:
            p.band_row(y, head, stamp(rng, "doi") if rng.random() < 0.5 else None)
        if rng.random() < 0.4:
            y += p.fsize * 1.4
            p.band_row(y, stamp(rng, "downloaded"), None)
        if rng.random() < 0.4:
            pen.hline(p.mx, pen.w - p.mx, y + p.fsize * 0.6)
    y += rng.uniform(26, 46)
    title = W.title()
    tsize = p.size * rng.uniform(1.4, 1.9)
    y = p.line(p.mx, y + tsize * 0.8, title, bold(p.font), tsize) + tsize * 0.6
    names = rng.sample(_SURNAMES, rng.randint(1, 3))
    authors = ", ".join(f"{rng.choice('ABCDEFGHKLMNPRST')}. {n}" for n in names)
    y = p.line(p.mx, y, authors)
    # control: the affiliation in small type under the names, a short line with no digits
    aff = f"Department of {rng.choice(_NOUN).capitalize()} Studies, University of {rng.choice(_CITIES)}"
    y = p.line(p.mx, y, aff, size=p.fsize) + p.size
    bottom_items = []
    if rng.random() < 0.7:
        bottom_items.append(stamp(rng, rng.choice(["copyright", "doi", "copyright"])))
    pn = _folio_text(p, no, total, False, _journal(rng).split(" of ")[-1])
    pn_where = rng.choice(["bottom", "bottom", "top_right"])
    fy = y_bot
    if pn_where == "bottom":
        p.band_row(fy, None, None, center=pn, size=p.size if rng.random() < 0.3 else None)
        fy -= p.fsize * 1.6
    else:
        p.band_row(y_top, None, pn)
    for t in bottom_items:
        p.band_row(fy, t, None)
        fy -= p.fsize * 1.6
    foot_y = fy - rng.uniform(10, 20)
    has_note = rng.random() < 0.7
    p.body(y, foot_y - (p.size * 3.2 if has_note else p.size * 1.5), n_cols=rng.choice([1, 2]))
    if has_note:
        p.footnote(foot_y, with_link=rng.random() < 0.6)


def _inner_page(p: Page, kind: str, y_top: float, y_bot: float, no: int, total: int) -> None:
    """A page from inside an article or book, read alone: running head (author or short title)
    with or without the folio on its row, folio at the foot otherwise."""
    rng, pen, W = p.rng, p.pen, p.W
    left = rng.random() < 0.5  # verso: folio left
    if kind == "inner_author":
        head = author_head(rng)
    elif kind == "inner_title":
        head = short_title(rng, W)
    else:  # book: chapter title or "PREFACE"-like section head
        head = rng.choice([short_title(rng, W), rng.choice(["PREFACE", "Introduction", "Contents", "Notes"]),
                           f"Chapter {rng.randint(1, 14)}. {W.title()}"])
    italic = rng.random() < 0.5
    pn_row = rng.random() < 0.6
    if pn_row:
        pn = _folio_text(p, no, total, left, "")
        if not pn.isdigit() and not pn.isalpha():  # (on a running head's row: "47" or "xiv")
            pn = str(no) if not rng.random() < 0.3 else _roman(rng.randint(3, 28))
        if rng.random() < 0.5:
            p.band_row(y_top, pn if left else head, head if left else pn, italic=italic)
        else:  # folio and head as one run: "12 | Short Title" / "Short Title   12"
            run = f"{pn} | {head}" if left else f"{head} | {pn}"
            p.band_row(y_top, run if left else None, None if left else run, italic=italic)
    else:
        p.band_row(y_top, None, None, center=head, italic=italic)
        pn = _folio_text(p, no, total, rng.random() < 0.5, _journal(rng).split(" of ")[-1])
        p.band_row(y_bot, None, None, center=pn, size=p.size if rng.random() < 0.3 else None)
    if rng.random() < 0.3:
        pen.hline(p.mx, pen.w - p.mx, y_top + p.fsize * 0.5)
    extra = None
    if kind != "book" and rng.random() < 0.5:
        extra = stamp(rng, rng.choice(["downloaded", "doi", "copyright"]))
        yb = y_bot - (0 if pn_row else p.fsize * 1.6)
        p.band_row(yb, extra, None)
    # (the text starts a line or more below the head: LaTeX's headsep, Word's header margin)
    top = y_top + p.size + rng.uniform(14, 30)
    if rng.random() < 0.4:  # control: the page opens on a section heading (body size, bold), close to the head
        top = p.line(p.mx, top, f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN)}s", bold(p.font)) + p.size * 0.4
    has_note = rng.random() < 0.4
    # the body runs deep into the bottom band on some pages: its last line must stay
    bottom = pen.h - rng.uniform(52, 80) - (p.size * 3 if has_note else 0) - (p.fsize * 1.6 if extra else 0)
    low = p.body(top, bottom, n_cols=rng.choice([1, 1, 2]), short_last=True)
    if has_note:
        p.footnote(low + p.size * 3.2, with_link=rng.random() < 0.5)


def _report(p: Page, y_top: float, y_bot: float, total: int) -> None:
    rng, W = p.rng, p.W
    ref = f"Ref. {rng.choice('ABCDRT')}{rng.randint(100, 999)}/{rng.randint(10, 99)}"
    p.band_row(y_top, stamp(rng, "confidential") if rng.random() < 0.7 else ref,
               f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUN).capitalize()} Board" if rng.random() < 0.5 else None)
    y = y_top + rng.uniform(28, 44)
    title = rng.choice(["Memorandum", "Progress Report", "Minutes of the Meeting", "Site Visit Summary"]) + f": {W.title()}"
    tsize = p.size * rng.uniform(1.3, 1.7)
    y = p.line(p.mx, y + tsize * 0.8, title, bold(p.font), tsize) + tsize
    footer = rng.choice([f"Page 1 of {total}", stamp(rng, "printed"), stamp(rng, "confidential")])
    p.band_row(y_bot, footer, "Page 1 of 1" if "Page" not in footer and rng.random() < 0.5 else None)
    dated = f"{rng.choice(['Approved at', 'Signed at', 'Issued in'])} {rng.choice(_CITIES)} on {rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2019, 2026)}."
    dy = y_bot - p.size * rng.uniform(2.5, 4.5)  # the dated last line, a clear line or two above the footer
    p.body(y, dy - p.size * 3.5, paras=rng.randint(3, 30))
    p.line(p.mx, dy, dated)


def _letter(p: Page, y_top: float, y_bot: float) -> None:
    rng, pen = p.rng, p.pen
    org = f"{rng.choice(_CITIES)} {rng.choice(['Survey Ltd', 'Holdings', 'Trust', 'Supply Co.'])}"
    p.line(p.mx, y_top + 10, org, bold(p.font), p.size * rng.uniform(1.4, 1.8))
    if rng.random() < 0.6:  # the sender's block, top right in small type: the letter's own text, no letterhead
        sender = [f"{rng.choice('ABCDEFGH')}. {rng.choice(_SURNAMES)}", f"{rng.choice(_NOUN).capitalize()} House",
                  f"{rng.randint(2, 120)} {rng.choice(_ADJ).capitalize()} Road, {rng.choice(_CITIES)}"]
        ss = p.size * rng.uniform(0.75, 0.88)
        x = pen.w - p.mx - max(pen.width(t, p.font, ss) for t in sender)
        for k, t in enumerate(sender):
            p.line(x, y_top + k * ss * 1.25, t, size=ss)
    date = f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2019, 2026)}"
    y = y_top + rng.uniform(50, 70)
    p.line(pen.w - p.mx - pen.width(date, p.font, p.size), y, date)
    y += p.size * 2.5
    greet = f"Dear {rng.choice(['Ms', 'Mr', 'Dr'])} {rng.choice(_SURNAMES)},"
    p.line(p.mx, y, greet)
    y += p.size * 2
    footer = stamp(rng, "registered")
    p.band_row(y_bot, footer, None, center=None)
    sign_y = pen.h - rng.uniform(64, 82)
    p.body(y, sign_y - p.size * 6, paras=rng.randint(2, 5))
    closing = [rng.choice(["Yours sincerely,", "Kind regards,", "With best wishes,"]),
               f"{rng.choice('ABCDEFGH')}. {rng.choice(_SURNAMES)}", rng.choice(["Managing Director", "Chief Surveyor", "Archivist"])]
    for k, t in enumerate(closing):
        p.line(p.mx, sign_y - p.size * 2.6 + k * p.size * 1.3, t)
