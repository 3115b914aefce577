"""Per-page furniture score: is a line in the top/bottom band a header or footer, judged
from this page alone?

Repetition across pages (furniture.py) is the strong signal, but a one-page input, a page
converted alone, or a journal whose running head changes every page ("Shen et al." /
"LS-RSMR", a different article title per page) has none. Then the line itself must tell:

* content: URLs, DOIs, emails, ISSNs, dates, "Downloaded from ... on DATE", "Published
  by/online", "© ... All rights reserved", "Vol. 8 | Issue 3 | e2748", banners with `|`
  separators, "Rev. C", "Doc No. 123-456", "Confidential", "Page 3 of 10" inside a line,
  a running head sharing its baseline with a page number;
* geometry: close to the page edge, a clear gap to the body (measured from the end of a
  stack of band lines, so a 2-3 line banner counts as one), smaller type than the body,
  short.

Cues are 0..1, weighted (config `furniture_w_*`) and summed; penalties guard the two
expensive mistakes: a heading-size line (the title at the top of page 1) and a line that
runs on at body leading past the band (a paragraph that starts near the page edge). A
bottom line starting with a footnote mark is a footnote, not a footer. A crowded band
(a map, an axis, a table) gets no per-page furniture at all.

Works on any item with x0/y0/x1/y1/text/size/chars (text-layer `Line`s and OCR blocks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, Sequence

from ..config.textlayer import TextLayerConfig
from ..model import Decision

_ROMAN = r"(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3})"  # small roman page numbers, as furniture.py
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = (r"\b" + _MONTH + r"\s+(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?\d{4}\b|\b\d{1,2}\.?\s+" + _MONTH
         + r"\s+\d{4}\b|\b\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})\b|\b\d{4}-\d{2}-\d{2}\b")
DATE = re.compile(_DATE, re.IGNORECASE)
"""A date in any of the forms the `date` cue knows ("June 2011", "4 May 2024", "04/05/2024", "2024-05-04")."""
# (name, strength, pattern): strength 1.0 = a cue body text almost never has in a page band
_CUES: list[tuple[str, float, re.Pattern[str]]] = [
    (name, strength, re.compile(pat, re.IGNORECASE))
    for name, strength, pat in [
        ("download_stamp", 1.0, r"\bdownloaded\b|\baccessed\s+(?:on|at)\b|\bretrieved\s+(?:from|on)\b|\bprinted\s+on\b"),
        ("published", 1.0, r"\bpublished\s+(?:by|online|in|on)\b|\bfirst\s+published\b|\bonline\s+first\b|"
         r"\badvance\s+access\b|\bahead\s+of\s+print\b|\bpreprint\b|\bunder\s+review\b|\baccepted\s+manuscript\b|"
         r"\bpublishing\b|\bpublishers?\b|\barxiv\s*:\s*\d{4}\.\d{4,5}"),
        ("copyright", 1.0, r"©|\(c\)\s*\d{4}|\bcopyright\b|\ball\s+rights\s+reserved\b|\blicen[cs]ed\s+under\b|"
         r"\bcreative\s+commons\b|\bcc[- ]by\b"),
        ("doi", 1.0, r"\bdoi\s*:|\bdoi\b|\b10\.\d{4,9}/\S+"),
        ("url", 1.0, r"(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|org|net|edu|gov|int|info|io)\b(?:/\S*)?"),
        ("email", 1.0, r"[\w.+-]+@[\w-]+\.[\w.]+"),
        ("issn", 1.0, r"\b(?:e-?|p-?)?issn\b|\bisbn\b"),
        ("volume_issue", 1.0, r"\b(?:vol(?:ume)?|issue|iss|no|nr|pp|jahrgang|tome|bd)\.?\s*\d+|"
         r"\b\d{1,4}\s*\(\d{1,4}\)\s*[:,]\s*e?\d+|\b\d{1,4}\s*:\s*e?\d{2,6}\s*[-–]\s*\d+|\be\d{4,7}\b|"
         r"\(\d{4}\)\s*\d{1,4}\s*[,:]\s*\d+|\b\d{1,4}\s*,\s*\d{1,6}\s*[-–]\s*\d{1,6}\b"),
        ("document_number", 1.0, r"\brev(?:ision)?\.?\s*(?:[A-Z]\b|\d+(?:\.\d+)*\b)|"
         r"\b(?:doc(?:ument)?|part|drawing|dwg|ref|report|catalog|order|model|serial)\.?\s*"
         r"(?:no\.?|nr\.?|number|#|id)\s*[:#]?\s*\S*\d|\bp/n\b|\bform\s+[A-Z]{0,4}[-\s]?\d[\w./-]*|"
         r"\b(?:our|your)?\s*ref\.?\s*[:#]?\s*[A-Z]{0,4}\d+[/.-]\w+"),
        # "confidential", "proprietary", "draft", "internal use" only as a stamp line (_stamp_line):
        # never from the word alone ("Draft Environmental Impact Statement" is a title)
        ("confidential", 1.0, r"\bconfidential\b|\bproprietary\b|\binternal\s+use\b|\bdo\s+not\s+(?:copy|distribute)\b|"
         r"\bdraft\b"),
        # a form's code and revision at the page foot: "DCF-F-2476-E (R. 04/2014)", "SF-424 (Rev. 12/04)",
        # "G0118-10 07/25/2023": upper-case letter groups joined by hyphens with a digit, or a
        # revision date in brackets
        ("form_code", 1.0, r"(?-i:\b(?=[A-Z0-9-]*\d)[A-Z][A-Z0-9]{0,5}(?:-[A-Z0-9]{1,6}){1,4}\b(?!-))\s*"
         r"(?:\((?:r|rev)\.?\s*\d{1,2}[/.-]\d{2,4}\)|\d{1,2}/\d{1,2}/\d{2,4})|"
         r"(?-i:^\s*[A-Z]{2,5}(?:-[A-Z0-9]{1,6}){2,4}\s*$)|\((?:r|rev)\.\s*\d{1,2}[/.-]\d{2,4}\)"),
        # a report number alone on its line, digits first: "10-P-0154" (a capital in it: no date). Not up a
        # side margin (`side_stamp`): there it is as often a map's label along a boundary
        ("report_number", 1.0, r"(?-i:^\s*(?=[\d-]*[A-Z])\d{1,4}(?:-[A-Z0-9]{1,6}){2,4}\s*$)"),
        ("page_of", 1.0, r"\bpage\s+\d+\s*(?:of|/)\s*\d+\b|\bp\.\s*\d+\b"),
        ("timestamp", 1.0, r"\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4},?\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?\b|"
         r"\b\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}\b|\b" + _MONTH + r"\s+\d{1,2},?\s+\d{4},?\s+(?:at\s+)?\d{1,2}:\d{2}\b"),
        # a folio run into a running head: "12 | Short Title", "Journal Name | xiv"
        ("folio_run", 1.0, r"^[-–—(\[]?\s*(?:\d{1,4}|" + _ROMAN + r")\s*[-–—)\]]?\s*[|•·]\s*\S|"
         r"\S\s*[|•·]\s*[-–—(\[]?\s*(?:\d{1,4}|" + _ROMAN + r")\s*[-–—)\]]?$"),
        ("date", 0.6, _DATE),
        ("banner", 0.6, r"\S\s*[|•·]\s*\S"),
        ("publication_name", 0.5, r"\b(?:journal|proceedings|transactions|annals|bulletin|letters|magazine|"
         r"review|press|society|conference|symposium|workshop|edition)\b"),
        ("edge_page_number", 0.6, r"^\d{1,4}\s{2,}\S|\S\s{2,}\d{1,4}$"),
        # a footer row the producer wrote as one line, its folio between the parts ("NNMB   75   Survey 2011-12")
        ("spread_folio", 1.0, r"\S\s{3,}\d{1,4}\s{3,}\S"),
    ]
]
_STAMPS = frozenset({"download_stamp", "published", "copyright", "doi", "issn"})
STRONG_CUES = frozenset({"download_stamp", "published", "copyright", "doi", "url", "email", "issn", "volume_issue",
                         "document_number", "confidential", "page_of", "timestamp", "folio_run",
                         "form_code", "report_number", "spread_folio"})
"""Content cues that make a band line furniture by its own page (furniture.has_evidence): what a
running head, a journal line or a stamp carries (a date with a time is a printer's or browser's
stamp) and a title, a greeting or a dated line does not. Dates, banners with `|`, publication
words and edge numbers only add to the score."""
"""Cues that stay strong inside a sentence; dates, volume numbers, URLs also occur in prose."""
FOOTNOTE_MARK = re.compile(r"^(?:[*†‡§¶]|\d{1,2}(?=[A-Za-z])|\d{1,2}\s+(?=[A-Z][a-z])|[¹²³⁴⁵⁶⁷⁸⁹⁰]+|<sup>[^<]{1,4}</sup>)")
"""A footnote's leading marker: a symbol, a number run into the text or set before a capitalised
word (a raised mark whose raise the text layer lost: "1 Corresponding author: ..."), a
superscript (Unicode or tagged `<sup>` by the text-layer reader)."""


class Item(Protocol):
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    chars: int


@dataclass
class Box:
    """A scorable item built from anything with a box and text (OCR blocks)."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    chars: int = 0
    lines: tuple[str, ...] = ()  # the block's lines, when it holds several (OCR layout blocks)

    def __post_init__(self) -> None:
        self.chars = self.chars or len(self.text.strip())


_STAMP_WORDS = frozenset(
    "strictly highly company business private personal and proprietary confidential internal use only for draft "
    "preliminary version v rev not distribution distribute copy do information document final review".split())
_DO_NOT = re.compile(r"\bdo\s+not\s+(?:copy|distribute)\b|\bnot\s+for\s+(?:distribution|circulation)\b|"
                     r"\bdraft\s+(?:v(?:ersion)?\.?\s*)?\d+(?:\.\d+)+\b|\bdraft\s+v(?:ersion)?\.?\s*\d+\b", re.IGNORECASE)
"""Stamps anywhere in a line: "do not distribute", a draft's version number ("- Draft 7.1 -")."""


def _stamp_line(text: str) -> bool:
    """The line is a confidentiality/draft stamp as a whole ("CONFIDENTIAL", "Company Confidential",
    "Draft v2 - 03/04/2020", "Proprietary and Confidential"), or says "do not copy/distribute" or
    carries a draft's version ("Short Title - Draft 7.1 - September");
    a title or sentence that merely holds the word ("Draft Environmental Impact Statement",
    "Confidential Settlement Agreement") is not."""
    if _DO_NOT.search(text):
        return True
    tokens = re.findall(r"[^\W\d_]+|\d[\d./-]*", text.lower())
    return bool(tokens) and all(t in _STAMP_WORDS or t[0].isdigit() for t in tokens)


def content_cues(text: str) -> dict[str, float]:
    """Named content cues found in `text` with their strength (0..1)."""
    cues = {name: strength for name, strength, pat in _CUES if pat.search(text)}
    if "confidential" in cues and not _stamp_line(text):
        del cues["confidential"]  # the word inside a title or sentence is no stamp
    return cues


_SPACED = re.compile(r"(?<!\S)(?:\w ){2,}\w(?!\S)")
"""A letter-spaced word ("P a g e", "j o u r n a l"): single letters with single spaces."""


def _reads_as_prose(text: str) -> bool:
    """Many words, most of them lower-case: a sentence, not a banner or a name. A letter-spaced
    word counts once ("... (Revised)   P a g e |23" is a running foot, not four more words)."""
    text = _SPACED.sub(lambda m: m.group(0).replace(" ", ""), text)
    words = [w for w in text.split() if w[:1].isalpha()]
    return len(words) >= 8 and sum(w[0].islower() for w in words) >= 0.5 * len(words)


def band_depth(page_height: float, share: float, cfg: TextLayerConfig) -> float:
    return min(share * page_height, cfg.furniture_band_max_pt)


def _beyond(cur: Item, items: Sequence[Item], down: bool) -> Item | None:
    """The nearest item past `cur` towards the page's middle, preferring ones overlapping it
    horizontally (the body under a header), else any."""
    h = max(0.5, cur.y1 - cur.y0)
    best = best_any = None
    for m in items:
        if m is cur:
            continue
        if down:
            if m.y0 < cur.y1 - 0.25 * h:
                continue
            d = m.y0
        else:
            if m.y1 > cur.y0 + 0.25 * h:
                continue
            d = -m.y1
        if best_any is None or d < best_any[0]:
            best_any = (d, m)
        if min(m.x1, cur.x1) > max(m.x0, cur.x0) and (best is None or d < best[0]):
            best = (d, m)
    pick = best or best_any
    return pick[1] if pick else None


def gap_to_body(item: Item, items: Sequence[Item], top: bool, band: float, page_h: float,
                cfg: TextLayerConfig) -> tuple[float | None, bool]:
    """(gap in points between the item's stack of band lines and what follows, runs_into_body).

    Walks from the item towards the page's middle through band lines closer than
    `furniture_chain_gap` line heights; `runs_into_body` is True when that walk leaves the
    band at body leading onto text of the same size (a paragraph starting near the edge).
    """
    cur, own_paragraph, last = item, True, None
    for _ in range(8):
        nb = _beyond(cur, items, down=top)
        if nb is None:
            return last, False
        gap = (nb.y0 - cur.y1) if top else (cur.y0 - nb.y1)
        h = max(cur.y1 - cur.y0, nb.y1 - nb.y0, 0.5)
        if gap >= cfg.furniture_chain_gap * h:
            return max(0.0, gap), False
        in_band = nb.y1 <= band if top else nb.y0 >= page_h - band
        # body leading: MuPDF line boxes (ascender to descender) of one paragraph nearly touch
        leading = abs(nb.size - cur.size) <= 0.1 * max(cur.size, 0.5) and gap < cfg.furniture_runon_gap * h
        if leading and own_paragraph:
            if not in_band:
                return max(0.0, gap), True  # the item's own paragraph goes on past the band
        elif leading:
            return last, False  # the stack reached a paragraph: its gap to it is what counts
        else:
            own_paragraph, last = False, max(0.0, gap)
            if not in_band:
                return last, False
        cur = nb
    return last if last is not None else 0.0, False


def score_item(
    item: Item, items: Sequence[Item], top: bool, band: float, page_h: float, body_size: float,
    cfg: TextLayerConfig, *, layout: bool = False, beside_page_number: bool = False, row_mates: int = 0,
    flush_with_page_number: bool = False,
) -> Decision:
    """The furniture Decision for one band item: `scores['furniture']` and the cues behind it."""
    body = max(body_size, 0.5)
    dist = item.y0 if top else page_h - item.y1
    position = min(1.0, max(0.0, 1.0 - max(0.0, dist) / max(band, 1.0)))
    gap, runs_on = gap_to_body(item, items, top, band, page_h, cfg)
    gap_cue = 0.5 if gap is None else min(1.0, gap / body / cfg.furniture_gap_full_em)
    size_cue = min(1.0, max(0.0, (body - item.size) / (0.25 * body)))
    span = max(1.0, cfg.furniture_max_chars - 60)
    short = min(1.0, max(0.0, 1.0 - (item.chars - 60) / span))
    cues = content_cues(item.text)
    if beside_page_number:
        cues["beside_page_number"] = 0.8
    if flush_with_page_number:
        cues["flush_with_page_number"] = 0.8
    prose = _reads_as_prose(item.text) and item.size >= 0.95 * body
    if prose:  # a body-size sentence: only stamp cues keep their full strength
        content = max([v if k in _STAMPS else 0.5 * v for k, v in cues.items()], default=0.0)
    else:
        content = max(cues.values(), default=0.0)
    heading = item.size >= cfg.furniture_heading_ratio * body
    footnote = not top and bool(FOOTNOTE_MARK.match(item.text.strip()))
    # without any cue only the geometry speaks, and it cannot tell a footnote from a footer,
    # nor a running head from one cell of a table or formula row reaching the band
    cued = bool(cues) or layout
    uncued_bottom = not cued and not top and cfg.furniture_bottom_needs_cue
    in_row = not cued and row_mates > 0
    # running heads sit in the outer part of the margin; uncued tiny text deep in the band is
    # a figure's labels reaching up into it
    deep = not cued and position < cfg.furniture_uncued_min_position
    # a cue counts fully only on a line set apart (near the edge or after a gap): a URL or a date
    # ending a paragraph at the top of a column is body text
    separated = 0.5 + 0.5 * max(gap_cue, position)
    s = (cfg.furniture_w_content * content * separated + cfg.furniture_w_gap * gap_cue + cfg.furniture_w_position * position
         + cfg.furniture_w_size * size_cue + cfg.furniture_w_short * short + cfg.furniture_w_layout * layout)
    s -= cfg.furniture_heading_penalty * heading + cfg.furniture_body_penalty * runs_on
    s -= cfg.furniture_footnote_penalty * footnote + cfg.furniture_prose_penalty * prose
    s -= cfg.furniture_body_penalty * (uncued_bottom or in_row or deep)
    scores = {
        "furniture": round(s, 3), "content": content, "gap": round(gap_cue, 3), "position": round(position, 3),
        "size": round(size_cue, 3), "short": round(short, 3), "layout": float(layout), "repeated": 0.0,
    }
    scores.update({f"cue_{k}": v for k, v in cues.items()})
    where = "top" if top else "bottom"
    reasons = [f"{where} band line, per-page score {s:.2f} (threshold {cfg.furniture_min_score:g})"]
    if cues:
        reasons.append("content cues: " + ", ".join(sorted(cues)))
    reasons.append("gap to body " + ("n/a (nothing beyond)" if gap is None else f"{gap / body:.1f} x body size"))
    reasons.append(f"{dist:.0f} pt from the page edge; size {item.size:g} vs body {body:g}")
    if layout:
        reasons.append("layout model region header/footer")
    if heading:
        reasons.append("heading-size type (penalised)")
    if runs_on:
        reasons.append("runs on past the band at body leading (penalised)")
    if footnote:
        reasons.append("starts with a footnote mark (penalised)")
    if prose:
        reasons.append("a body-size sentence (penalised, weak cues halved)")
    if uncued_bottom:
        reasons.append("bottom line without any cue: a footnote as likely as a footer (penalised)")
    if deep:
        reasons.append("no cue and deep in the band, away from the page edge (penalised)")
    if in_row:
        reasons.append(f"shares its row with {row_mates} other uncued line(s): a table or formula row (penalised)")
    return Decision(scores=scores, reasons=reasons)


def side_stamp(item: Item, page_w: float, page_h: float, cfg: TextLayerConfig) -> Decision | None:
    """A line drawn vertically along the left/right margin with a stamp cue ("Downloaded
    from ... on DATE" up the side of journal pages) is furniture, not a body paragraph."""
    margin = band_depth(page_w, cfg.furniture_band, cfg)
    if not (item.x1 <= margin or item.x0 >= page_w - margin):
        return None
    cues = {k: v for k, v in content_cues(item.text).items() if v >= 1.0 and k not in ("page_of", "volume_issue", "report_number")}
    if not cues:
        return None
    return Decision(
        scores={"furniture": 1.0, "content": 1.0, "side": 1.0, **{f"cue_{k}": v for k, v in cues.items()}},
        reasons=[f"vertical line in the side margin with stamp cues: {', '.join(sorted(cues))}"],
    )


_SENTENCE_END = re.compile(r"[.,;:!?]$")
_PART_PREFIX = re.compile(r"^(?:chapter|part|section|book|appendix|lecture)\s+(?:\d{1,3}|[ivxlc]{1,6}|[a-z])[.:]?\s+",
                          re.IGNORECASE)
_ET_AL = re.compile(r"\bet\s+al\.?$", re.IGNORECASE)


def running_head_form(text: str, max_words: int) -> str | None:
    """'author' or 'title' when a line reads like a running head ("Okafor et al.", "A. Okafor and
    B. Mendes", "TIDAL BASINS AND THE DUNE", "Northern islands and the frozen kiln"), else None.

    A running head is a short phrase with no digits that does not end like a sentence, a
    greeting or a closing ("Dear Dr Voss,", "Yours sincerely,"); a single word only in
    capitals ("PREFACE"): one ordinary word is a label or a heading."""
    t = _PART_PREFIX.sub("", text.strip())  # "Chapter 3. Short Title": the number names the chapter
    words = t.split()
    if not words or len(words) > max_words or len(t) > 90 or any(ch.isdigit() for ch in t):
        return None
    if sum(ch.isalpha() for ch in t) < 4:
        return None
    if _ET_AL.search(t) or re.search(r"\s(?:and|&)\s", t) and all(w[:1].isupper() or w in ("and", "&") for w in words):
        return "author"
    if _SENTENCE_END.search(t) or not words[0][:1].isalpha():
        return None
    if len(words) == 1 and not t.isupper():
        return None
    return "title"


def running_head(item: Item, items: Sequence[Item], band: float, page_h: float, body_size: float,
                 cfg: TextLayerConfig) -> Decision | None:
    """A top-band line that is furniture by its page alone without any content cue: a running
    head (author names or a short title) in type smaller than the body, in the outer part of
    the band, set apart from the text below. Each condition is what a title (heading-size), a
    greeting or a first paragraph (body size, running on), a letterhead address (digits) or a
    figure label (deep in the band) fails."""
    body = max(body_size, 0.5)
    form = running_head_form(item.text, cfg.furniture_head_max_words)
    if form is None or item.size > cfg.furniture_head_max_size_ratio * body:
        return None
    position = 1.0 - max(0.0, item.y0) / max(band, 1.0)
    if position < cfg.furniture_head_min_position:
        return None
    gap, runs_on = gap_to_body(item, items, True, band, page_h, cfg)
    if runs_on or gap is None or gap < cfg.furniture_head_min_gap_em * body:
        return None
    return Decision(
        scores={"furniture": 1.0, "running_head": 1.0, "position": round(position, 3), "gap": round(gap / body, 3),
                "size": round(item.size / body, 3)},
        reasons=[f"top band line that reads as a running head ({form}: short, no digits, no sentence end), "
                 f"{item.size:g} pt type under the {body:g} pt body, {item.y0:.0f} pt from the page edge, "
                 f"{gap / body:.1f} x body size above the text"],
    )
