"""Scoring a system's reading of one real page against its hand-written truth (truth/*.json).

Truth file (one page):
    file      "corpus:<name>.pdf" (the shared real corpus, `$PAGEROUTER_REAL_CORPUS` or
              ../shared/corpus/real), or "pdfplumber:<name>.pdf" / "docling:<name>.pdf" / "camelot:<name>.pdf" (copied
              into pdfs/ from those projects' test documents)
    page      1-based page number
    cls       document class: financial, scientific, government, report, paper, letter
    held      true on the held-out part (fixed rule: crc32("<stem>:p<page>") % 3 == 0)
    tables    list of {"rows": [[cell, ...], ...]} read off the render; "<" marks a position
              covered by the cell to its left, "^" by the cell above; "" an empty cell.
              null when the page's tables were not written down (the page is then left out of
              the table score, never scored as table-free)
    furniture lines a careful reader leaves out (running heads and feet, page numbers, stamps)
    keep      lines near the bands or easily taken for furniture that must stay (titles,
              headings, greetings, signatures, dates of a letter)
    order     blocks in reading order, each a list of anchors (the first anchor found places it)
    text      strings that must appear as a reader would copy them (quotes, markers)

Measures:
- tables: cell adjacency F1 (ICDAR 2013 table competition): each non-empty cell with its
  nearest non-empty neighbour to the right and below, compared as (text, text, direction)
  multisets after normalising case and whitespace; pooled over pages (TP/FP/FN summed), so a
  table read where the truth has none costs its pairs as false positives.
- furniture: a line is "out" when the system's body text does not hold it. Recall = furniture
  out / furniture; precision = furniture out / (furniture out + keep lines out).
- order: among blocks whose anchors are found, the share of block pairs in the right order.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRUTH = HERE / "truth"
PDFS = HERE / "pdfs"


def corpus_dir() -> Path:
    import os

    env = os.environ.get("PAGEROUTER_REAL_CORPUS")
    return Path(env) if env else HERE.parents[2] / "shared" / "corpus" / "real"


def load_truth() -> list[dict]:
    out = []
    for p in sorted(TRUTH.glob("*.json")):
        d = json.loads(p.read_text())
        d["name"] = p.stem
        d.setdefault("held", False)
        out.append(d)
    return out


def pdf_path(truth: dict) -> Path:
    origin, name = truth["file"].split(":", 1)
    return corpus_dir() / name if origin == "corpus" else PDFS / name


# ------------------------------------------------------------------ normalising
_MD = re.compile(r"[*_#>|`\\]")


# typographic quotes and dashes against their keyboard forms: "What’s New" typeset and "What's
# New" recognised from its scan are the same words (`text` checks, which test how a quote is
# copied, compare exactly and are not folded)
_TYPO = str.maketrans({"‘": "'", "’": "'", "‚": "'", "′": "'", "“": '"', "”": '"', "„": '"', "″": '"',
                       "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "−": "-"})


def norm(s: str) -> str:
    """Case, width, spacing, typographic quotes and dashes folded; Markdown emphasis marks dropped."""
    s = unicodedata.normalize("NFKC", s or "").translate(_TYPO)
    s = _MD.sub(" ", s)
    return re.sub(r"\s+", " ", s).strip().lower()


def tight(s: str) -> str:
    return re.sub(r"\s+", "", norm(s))


# ------------------------------------------------------------------ tables
Cell = tuple[int, int, int, int, str]  # r0, c0, r1, c1 (inclusive), text


def cells_from_truth(rows: Sequence[Sequence[str]]) -> list[Cell]:
    owner: dict[tuple[int, int], int] = {}
    cells: list[list] = []
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            if v == "<" and (r, c - 1) in owner:
                i = owner[(r, c - 1)]
            elif v == "^" and (r - 1, c) in owner:
                i = owner[(r - 1, c)]
            else:
                cells.append([r, c, r, c, v])
                i = len(cells) - 1
            owner[(r, c)] = i
            cells[i][2] = max(cells[i][2], r)
            cells[i][3] = max(cells[i][3], c)
    return [tuple(x) for x in cells]  # type: ignore[misc]


def cells_from_grid(grid: Sequence[Sequence[str | None]], spans: Iterable[tuple[int, int, int, int]] = ()) -> list[Cell]:
    """A row-major grid; `spans` (row, col, rowspan, colspan) merge positions (pagerouter's
    blocks repeat a spanning cell's text in each position); None continues the cell to the left
    (or above) as PyMuPDF and pdfplumber write merged cells."""
    covered: dict[tuple[int, int], tuple[int, int]] = {}
    for r, c, rs, cs in spans or ():
        for i in range(r, r + rs):
            for j in range(c, c + cs):
                covered[(i, j)] = (r, c)
    rows = []
    for r, row in enumerate(grid):
        out = []
        for c, v in enumerate(row):
            if (r, c) in covered and covered[(r, c)] != (r, c):
                out.append("<" if covered[(r, c)][0] == r else "^")
            elif v is None:
                out.append("<" if c > 0 else ("^" if r > 0 else ""))
            else:
                out.append(str(v).replace("<", "‹").replace("^", "ˆ") if v in ("<", "^") else str(v))
        rows.append(out)
    return cells_from_truth(rows)


def adjacency(cells: list[Cell]) -> Counter:
    owner: dict[tuple[int, int], int] = {}
    for i, (r0, c0, r1, c1, _t) in enumerate(cells):
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                owner[(r, c)] = i
    nrows = max((c[2] for c in cells), default=-1) + 1
    ncols = max((c[3] for c in cells), default=-1) + 1
    pairs: set[tuple[int, int, str]] = set()
    for i, (r0, c0, r1, c1, t) in enumerate(cells):
        if not tight(t):
            continue
        for r in range(r0, r1 + 1):
            for c in range(c1 + 1, ncols):
                j = owner.get((r, c))
                if j is not None and j != i and tight(cells[j][4]):
                    pairs.add((i, j, "h"))
                    break
        for c in range(c0, c1 + 1):
            for r in range(r1 + 1, nrows):
                j = owner.get((r, c))
                if j is not None and j != i and tight(cells[j][4]):
                    pairs.add((i, j, "v"))
                    break
    return Counter((tight(cells[i][4]), tight(cells[j][4]), d) for i, j, d in pairs)


def table_counts(truth_tables: list[list[Cell]], found_tables: list[list[Cell]]) -> tuple[int, int, int]:
    """TP, FP, FN of adjacency pairs, pooled over the page's tables."""
    want: Counter = Counter()
    got: Counter = Counter()
    for t in truth_tables:
        want += adjacency(t)
    for t in found_tables:
        got += adjacency(t)
    tp = sum((want & got).values())
    return tp, sum(got.values()) - tp, sum(want.values()) - tp


# ------------------------------------------------------------------ text checks
def _present(line: str, body: str, body_lines: set[str], cells: set[str]) -> bool:
    n = norm(line)
    if len(n) <= 4:  # a page number or "xi": only as a line or a cell of its own
        return n in body_lines or n in cells
    return tight(line) in tight(body)


_MD_MARKS = "#->* "


def body_index(md: str, tables: list[list[Cell]]) -> tuple[str, set[str], set[str]]:
    lines = {norm(x) for x in md.splitlines()}
    lines |= {norm(x.strip().strip("-").strip()) for x in md.splitlines()}
    cells = {norm(c[4]) for t in tables for c in t}
    return md, lines, cells


def _leads_a_kept_line(short: str, md: str, keep: list[str]) -> bool:
    """A short keep line (a section number) set at the start of a line whose rest is another keep
    line of the page ("## 1.4. Educational attainment" holds "1.4." and "Educational
    attainment"): kept, as the truth's two lines in one."""
    n = norm(short)
    others = [tight(k) for k in keep if k != short and tight(k)]
    for x in md.splitlines():
        words = x.lstrip(_MD_MARKS).split(maxsplit=1)
        if len(words) == 2 and norm(words[0]) == n and any(o in tight(words[1]) for o in others):
            return True
    return False


def furniture_counts(truth: dict, md: str, tables: list[list[Cell]]) -> dict:
    body, lines, cells = body_index(md, tables)
    f_out = sum(1 for x in truth.get("furniture", []) if not _present(x, body, lines, cells))
    keep = truth.get("keep", [])
    k_out = [x for x in keep if not _present(x, body, lines, cells) and not _leads_a_kept_line(x, md, keep)]
    return {"f_total": len(truth.get("furniture", [])), "f_out": f_out, "k_out": len(k_out), "k_lost": k_out}


def order_counts(truth: dict, md: str) -> tuple[int, int, int]:
    """Right pairs, pairs, blocks not found."""
    t = tight(md)
    pos = []
    missing = 0
    for anchors in truth.get("order", []):
        p = next((t.find(tight(a)) for a in anchors if t.find(tight(a)) >= 0), -1)
        if p < 0:
            missing += 1
        else:
            pos.append(p)
    right = sum(1 for i in range(len(pos)) for j in range(i + 1, len(pos)) if pos[i] < pos[j])
    return right, len(pos) * (len(pos) - 1) // 2, missing


def text_counts(truth: dict, md: str) -> tuple[int, int]:
    flat = re.sub(r"\s+", " ", unicodedata.normalize("NFC", md))
    want = truth.get("text", [])
    return sum(1 for s in want if re.sub(r"\s+", " ", s) in flat), len(want)


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    f_total: int = 0
    f_out: int = 0
    k_out: int = 0
    right: int = 0
    pairs: int = 0
    missing: int = 0
    text_ok: int = 0
    text_n: int = 0
    lost: list = field(default_factory=list)

    def add(self, o: Tally) -> None:
        for k in ("tp", "fp", "fn", "f_total", "f_out", "k_out", "right", "pairs", "missing", "text_ok", "text_n"):
            setattr(self, k, getattr(self, k) + getattr(o, k))
        self.lost += o.lost

    @property
    def table_f1(self) -> float | None:
        if self.tp + self.fp + self.fn == 0:
            return None
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn)

    @property
    def furn_p(self) -> float | None:
        return self.f_out / (self.f_out + self.k_out) if self.f_out + self.k_out else None

    @property
    def furn_r(self) -> float | None:
        return self.f_out / self.f_total if self.f_total else None

    @property
    def furn_f1(self) -> float | None:
        p, r = self.furn_p, self.furn_r
        if r is None:
            return None
        p = 1.0 if p is None else p
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def order(self) -> float | None:
        return self.right / self.pairs if self.pairs else None


def score_page(truth: dict, md: str | None, tables: list[list[Cell]] | None) -> Tally:
    """`md` None: the system gives no text (tables only); `tables` None: it gives no tables."""
    out = Tally()
    if tables is not None and truth.get("tables") is not None:
        want = [cells_from_truth(t["rows"]) for t in truth["tables"]]
        out.tp, out.fp, out.fn = table_counts(want, tables)
    if md is not None:
        fc = furniture_counts(truth, md, tables or [])
        out.f_total, out.f_out, out.k_out = fc["f_total"], fc["f_out"], fc["k_out"]
        out.lost = [f"{truth['name']}: {x}" for x in fc["k_lost"]]
        out.right, out.pairs, out.missing = order_counts(truth, md)
        out.text_ok, out.text_n = text_counts(truth, md)
    return out
