"""Checkers for `bench_quality.py`: olmOCR-bench style facts tested on a system's Markdown.

A check is a small, machine-checkable fact about one generated page (see `quality_cases.py`):

- `present` / `absent`: a piece of text occurs / does not occur (fuzzy, `max_diffs` edits);
- `order`: `before` occurs somewhere before `after`;
- `table`: a cell exists in a Markdown pipe table or HTML table with the given neighbours
  (`left`/`right`/`up`/`down`) and headings (`left_heading`, `top_heading`);
- `separate`: two texts are found but not in one Markdown paragraph (footnotes, RTL paragraphs);
- `together`: two texts are found in one Markdown paragraph (a paragraph not split per line);
- `near`: `after` starts at most `max_gap` characters after `before` ends (caption by its table);
- `sup` / `sub`: `base` followed by a raised/lowered `mark` written as `<sup>m</sup>`, `^m`, `^{m}`
  (or `<sub>m</sub>`, `_m`, `_{m}`), never flattened into `basem`;
- `heading`: the text is on a Markdown heading line (`# ...`) or in an `<hN>` element; with
  `level` set, on one of exactly that level (`##` or `<h2>` for 2);
- `present` with `max_count`: found, and at most that many times (text drawn twice to fake bold
  must come out once).

Normalisation follows olmOCR-bench (whitespace collapsed, Markdown emphasis dropped, fancy
quotes and dashes to ASCII) but with NFKC, so ligatures and full-width forms compare equal;
a check with `nfc=True` keeps compatibility characters (a test that Arabic presentation forms
were normalised must see them). Fuzzy matching is an edit distance (Levenshtein) of the query
against any substring, like olmOCR-bench's `find_near_matches`, with an exact fast path and a
pigeonhole pre-filter so a run over hundreds of checks stays fast in pure Python.
Pure stdlib: the benchmark must run where `rapidfuzz`/`fuzzysearch` are not installed.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser

_REPLACE = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "–": "-", "—": "-",
                          "‑": "-", "‒": "-", "−": "-", "\u00b5": "\u03bc", "\u00a0": " "})


def normalize(text: str, nfc: bool = False) -> str:
    # Code fences are Markdown syntax like emphasis: prose a reader fenced must still be found.
    text = re.sub(r"(?m)^\s*```\w*\s*$", " ", text)
    text = re.sub(r"<br\s*/?>", " ", text)
    text = re.sub(r"</?(b|i|strong|em)>", "", text)
    text = re.sub(r"(\*\*|__)(.*?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*\\])\*(?!\s)(.*?)(?<![\s\\])\*(?![\w*])", r"\1", text)
    # backslash escapes are Markdown syntax too: `\#`, `\*`, `1\.` read as `#`, `*`, `1.`
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)
    text = unicodedata.normalize("NFC" if nfc else "NFKC", text)
    return re.sub(r"\s+", " ", text.translate(_REPLACE)).strip()


def _edit_end_positions(q: str, t: str, k: int) -> list[tuple[int, int]]:
    """(end, distance) of substrings of t within k edits of q (Sellers' algorithm)."""
    prev = list(range(len(q) + 1))
    out = []
    for j, ch in enumerate(t, 1):
        cur = [0]
        for i, qc in enumerate(q, 1):
            cur.append(min(prev[i] + 1, cur[i - 1] + 1, prev[i - 1] + (qc != ch)))
        if cur[-1] <= k:
            out.append((j, cur[-1]))
        prev = cur
    return out


def find_near(q: str, t: str, k: int) -> list[int]:
    """Start offsets in t where q occurs with at most k edits (approximate starts when k > 0)."""
    if not q:
        return []
    exact = [m.start() for m in re.finditer(re.escape(q), t)]
    if exact or k == 0:
        return exact
    # Pigeonhole: k edits leave at least one of k+1 pieces of q intact; only windows around an
    # exact hit of a piece can hold a match, so the quadratic DP runs on a few short windows.
    n = k + 1
    size = max(1, len(q) // n)
    if size < 3:  # pieces too short to filter on: scan the whole text
        hits = _edit_end_positions(q, t, k)
        return sorted({max(0, e - len(q)) for e, _ in hits})
    starts: set[int] = set()
    for p in range(n):
        piece = q[p * size:(p + 1) * size] if p < n - 1 else q[p * size:]
        for m in re.finditer(re.escape(piece), t):
            starts.add(max(0, m.start() - p * size - k))
    found: list[int] = []
    for s in sorted(starts):
        if found and s <= found[-1] + len(q):
            continue
        window = t[s:s + len(q) + 2 * k]
        hits = _edit_end_positions(q, window, k)
        if hits:
            end = min(hits, key=lambda h: (h[1], -h[0]))[0]
            found.append(s + max(0, end - len(q)))
    return found


# ---------------------------------------------------------------------- tables
@dataclass
class Table:
    rows: list[list[str]]
    header_rows: int = 1  # rows written as header (`<th>` or the GFM header row)


def parse_markdown_tables(md: str) -> list[Table]:
    tables: list[Table] = []
    cur: list[list[str]] = []
    for line in md.splitlines() + [""]:
        s = line.strip()
        if s.startswith("|") and s.count("|") >= 2:
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s.strip("|"))]
            if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c) or not any(cells):
                cur.append(cells)
            continue
        if cur:
            tables.append(Table(cur, 1))
            cur = []
    return tables


class _HTMLTables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[Table] = []
        self._stack: list[tuple[list[list[str]], list[bool]]] = []
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._stack.append(([], []))
        elif tag == "tr" and self._stack:
            self._stack[-1][0].append([])
            self._stack[-1][1].append(True)
        elif tag in ("td", "th") and self._stack:
            self._cell = []
            self._span = int(dict(attrs).get("colspan") or 1)
            if tag == "td" and self._stack[-1][1]:
                self._stack[-1][1][-1] = False

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._stack and self._stack[-1][0]:
            text = " ".join("".join(self._cell).split())
            # A colspan header heads every column under it: repeat it, as olmOCR-bench does.
            self._stack[-1][0][-1].extend([text] * max(1, self._span))
            self._cell = None
        elif tag == "table" and self._stack:
            rows, is_head = self._stack.pop()
            heads = next((i for i, h in enumerate(is_head) if not h), len(rows))
            self.tables.append(Table([r for r in rows], max(1, heads)))

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse_html_tables(md: str) -> list[Table]:
    if "<table" not in md.lower():
        return []
    p = _HTMLTables()
    p.feed(md)
    return p.tables


_CURRENCY = re.compile(r"^[$€£¥]?$")


def _cell_norm(c: str) -> str:
    # "$ 1,234" and "$1,234" name the same value as "1,234" beside a "$" cell.
    c = normalize(html.unescape(c))
    return re.sub(r"^[$€£¥]\s*(?=[\d(])", "", c)


def _same(a: str, b: str, k: int) -> bool:
    a, b = _cell_norm(a), _cell_norm(b)
    return a == b or (k > 0 and abs(len(a) - len(b)) <= k and bool(find_near(a, b, k)))


def _heads(a: str, cell: str, k: int) -> bool:
    """A heading matches a cell equal to it, or a merged multi-line header cell holding it."""
    c = _cell_norm(cell)
    return _same(a, cell, k) or bool(re.search(r"(^|\s)" + re.escape(_cell_norm(a)) + r"(\s|$)", c))


def _neighbour(rows: list[list[str]], r: int, c: int, dr: int, dc: int) -> str | None:
    """The nearest cell in a direction that holds more than a currency sign or nothing."""
    r, c = r + dr, c + dc
    while 0 <= r < len(rows) and 0 <= c < len(rows[r]):
        if not _CURRENCY.match(_cell_norm(rows[r][c])):
            return rows[r][c]
        r, c = r + dr, c + dc
    return None


def _table_ok(chk: Check, t: Table) -> bool:
    k = chk.max_diffs
    for r, row in enumerate(t.rows):
        for c, cell in enumerate(row):
            if not _same(chk.cell, cell, k):
                continue
            ok = True
            for rel, (dr, dc) in (("left", (0, -1)), ("right", (0, 1)), ("up", (-1, 0)), ("down", (1, 0))):
                want = getattr(chk, rel)
                if want:
                    got = _neighbour(t.rows, r, c, dr, dc)
                    ok &= got is not None and _same(want, got, k)
            if chk.left_heading:
                first = next((x for x in row if not _CURRENCY.match(_cell_norm(x))), "")
                ok &= _heads(chk.left_heading, first, k)
            if chk.top_heading:
                # Headings are the cells above in the column that are not data: header rows,
                # or any text cell above (a unit line or a group row written as a body row).
                above = [t.rows[i][c] for i in range(r) if c < len(t.rows[i])]
                ok &= any(_heads(chk.top_heading, a, k) for a in above)
            if ok:
                return True
    return False


# ---------------------------------------------------------------------- checks
@dataclass
class Check:
    type: str
    text: str = ""
    before: str = ""
    after: str = ""
    cell: str = ""
    left: str = ""
    right: str = ""
    up: str = ""
    down: str = ""
    top_heading: str = ""
    left_heading: str = ""
    base: str = ""
    mark: str = ""
    max_diffs: int = 0
    max_gap: int = 80
    level: int = 0  # heading: the level it must have (0: any)
    max_count: int = 0  # present: found at most this many times (0: any number)
    nfc: bool = False
    note: str = ""
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if v not in ("", 0, False, {}, None) or k == "type"}
        if self.type != "near":
            d.pop("max_gap", None)
        return d


def _paragraphs(md: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", md) if p.strip()]


def _in(q: str, text: str, k: int, nfc: bool) -> list[int]:
    return find_near(normalize(q, nfc), normalize(text, nfc), k)


def run_check(chk: Check, md: str) -> tuple[bool, str]:
    """(passed, why not) for one check on one page's Markdown."""
    t = chk.type
    if t in ("present", "absent"):
        hits = _in(chk.text, md, chk.max_diffs, chk.nfc)
        if t == "present" and chk.max_count and len(hits) > chk.max_count:
            return False, f"present: {chk.text[:50]!r} found {len(hits)} times, at most {chk.max_count} wanted"
        ok = bool(hits) if t == "present" else not hits
        return ok, "" if ok else f"{t}: {chk.text[:50]!r} {'not found' if t == 'present' else 'found'}"
    if t in ("order", "near"):
        norm = normalize(md, chk.nfc)
        b = find_near(normalize(chk.before, chk.nfc), norm, chk.max_diffs)
        a = find_near(normalize(chk.after, chk.nfc), norm, chk.max_diffs)
        if not b or not a:
            return False, f"{t}: {'before' if not b else 'after'} text not found"
        if t == "order":
            ok = any(x < y for x in b for y in a)
            return ok, "" if ok else f"order: {chk.after[:30]!r} not after {chk.before[:30]!r}"
        blen = len(normalize(chk.before, chk.nfc))
        ok = any(0 <= y - (x + blen) <= chk.max_gap for x in b for y in a)
        return ok, "" if ok else f"near: {chk.after[:30]!r} not within {chk.max_gap} chars after {chk.before[:30]!r}"
    if t in ("separate", "together"):
        paras = _paragraphs(md)
        ia = [i for i, p in enumerate(paras) if _in(chk.before, p, chk.max_diffs, chk.nfc)]
        ib = [i for i, p in enumerate(paras) if _in(chk.after, p, chk.max_diffs, chk.nfc)]
        if not ia or not ib:
            return False, f"{t}: a text not found within one paragraph"
        same = bool(set(ia) & set(ib))
        ok = same if t == "together" else not same
        return ok, "" if ok else f"{t}: paragraphs {ia} / {ib}"
    if t in ("sup", "sub"):
        tag, op = ("sup", r"\^") if t == "sup" else ("sub", "_")
        base, mark = re.escape(normalize(chk.base, True)), re.escape(chk.mark)
        pat = rf"{base}\s?(<{tag}>\s*{mark}\s*</{tag}>|{op}\{{{mark}\}}|{op}{mark}(?!\w)|\$\s*{op}\{{?{mark}\}}?\s*\$)"
        if t == "sup" and chk.mark.isdigit():
            pat += "|" + base + "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(d)] for d in chk.mark) + r"|" + rf"{base}\[\^{mark}\]"
        ok = bool(re.search(pat, normalize(md, True)))
        return ok, "" if ok else f"{t}: {chk.base}+{chk.mark} not marked"
    if t == "heading":
        want = normalize(chk.text)
        heads = [(len(m[0]), m[1]) for m in re.findall(r"^\s*(#{1,6})\s+(.+?)\s*#*\s*$", md, re.M)]
        heads += [(int(m[0]), m[1]) for m in re.findall(r"<h([1-6])[^>]*>(.*?)</h\1>", md, re.I | re.S)]
        found = [lv for lv, h in heads if find_near(want, normalize(h), chk.max_diffs)]
        if not found:
            return False, f"heading: {chk.text[:40]!r} not a heading"
        ok = not chk.level or chk.level in found
        return ok, "" if ok else f"heading: {chk.text[:40]!r} at level {found}, not {chk.level}"
    if t == "table":
        tables = parse_markdown_tables(md) + parse_html_tables(md)
        if not tables:
            return False, "table: no table found"
        ok = any(_table_ok(chk, tb) for tb in tables)
        return ok, "" if ok else f"table: {chk.cell!r} relations not satisfied"
    raise ValueError(f"unknown check type {t}")
