"""Running headers, footers and page numbers, and the document's type-size ladder.

`FurnitureModel.from_document` reads a bounded, evenly spread sample of pages once (default
24, whatever the document's length: bounded time and memory on a 500-page document) and
learns:

* lines in the top/bottom bands that repeat across pages, with digits normalised (so
  "Page 3 of 10" matches "Page 4 of 10") and roman page numbers normalised too;
* the body font size and the font sizes used for larger text, so heading levels are the same
  on every page (a page whose biggest heading is a section heading does not promote it to
  level 1).

Because the model is learned before any page is read, page 1's header is recognised too.
When only a few pages of a longer document are converted (a page requested alone), their
neighbours are sampled too (`furniture_context_pages`), so the page still gets repetition
evidence.

Page numbers ("3", "- 3 -", "Page 3", "p. 3", "3 / 10", "iii", "Page ii of iv") in the
bands are recognised by pattern alone, unless the band holds more number-only lines than a
page has page numbers (a scale, an axis, a table row). Every other band line that does not
repeat gets a per-page score (furniture_cues.py: content cues such as URLs, DOIs, dates,
download/publish/copyright stamps, volume/issue lines, plus position, gap to the body, type
size and length), so a one-page input, a page converted alone and a journal whose running
head changes every page keep their furniture out of the body too. Repetition stays the
stronger signal: a repeated band line is furniture with no cue at all.

A running head on a page with no neighbours (a one-page input, page 1) often has no cue either
("Okafor et al.", "THE SALT ROADS"): a top-band line is one by its page alone when it reads as
one (short, no digits, no sentence end: furniture_cues.running_head_form), is set in smaller type
than the body, lies in the outer part of the band, stands alone (no line of its type stacked on
it: a sender's block, an affiliation) and is set apart from the text. A title (heading type), a
greeting or a first paragraph (body size), a letterhead address (digits) never are. In a band
holding a letter's greeting, closing or signature, only small type set apart from that block (a
company's registration line) can be furniture.

Each furniture line gets a `Decision` (score and reasons) that the pipeline puts on its block.

Furniture is never dropped: it keeps its role (header/footer/page_number) in the JSON and
the Markdown renderer leaves it out of the body.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import pymupdf

from ..config.textlayer import TextLayerConfig
from ..common.pagetext import read_textdict
from ..model import Decision
from .frame import reading_frame
from .furniture_cues import (DATE, FOOTNOTE_MARK, STRONG_CUES, Box, band_depth, content_cues, gap_to_body, running_head, score_item,
                              side_stamp)
from .lines import Line, extract_lines, merge_fragments
from .roles import _CAPTION_RE as _CAPTION

# page numbers are small roman numerals (i..xxxix); "L", "C", "D", "M" alone are map and
# table labels far more often than page 50, 100, 500 or 1000
_PAGE_ROMAN = r"(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3})"
# a manual's chapter-page number ("2-13", "A-4": chapter or appendix, then the page in it)
_CHAPTER_PAGE = r"(?:\d{1,2}|[A-Z])[-–]\d{1,3}"
_PAGE_NUMBER = re.compile(
    r"^(?:(?:page|pg\.?|p\.|seite|s\.|стр\.?|страница|pagina|página)\s*)?"
    r"[-–—(\[|]?\s*(?:" + _CHAPTER_PAGE + r"|\d{1,4}|" + _PAGE_ROMAN + r")\s*[-–—)\]|]?"
    r"(?:\s*(?:of|/|von|из|de)\s*(?:\d{1,4}|" + _PAGE_ROMAN + r"))?$",
    re.IGNORECASE,
)
_NUMBER_ONLY = re.compile(r"^[\d\s.,:/()%+-]+$")
_SPACES = re.compile(r"\s+")


def is_page_number(text: str) -> bool:
    t = text.strip()
    return 0 < len(t) <= 24 and bool(_PAGE_NUMBER.match(t))


# a table's unit statement: "(In millions, except per share data)", "[In thousands]", "(€ '000)",
# "(Unaudited)": a financial statement repeats it under its title on every page, where a running
# head stands, but it says how to read the numbers under it
_UNIT_LINE = re.compile(
    r"^[\[(][^\[\]()]{0,60}\b(?:thousands?|millions?|billions?|mn|bn|000s?|unaudited|except per share)\b"
    r"[^\[\]()]{0,60}[\])]$|^[\[(]\s*[$€£¥]?\s*'?000s?\s*[\])]$",
    re.IGNORECASE,
)


def belongs_to_a_table_or_figure(text: str) -> bool:
    """A caption ("Table 3.", "FIGURE 2.") or a table's unit statement: it belongs to what stands
    under it, however near the page edge or however often repeated (a continued table's caption),
    so it is never a running head or foot."""
    t = text.strip()
    return bool(_CAPTION.match(t) or _UNIT_LINE.match(t))


_LEAD_NUMBER = re.compile(r"^[-–—(\[|]?\s*(?:\d{1,4}|" + _PAGE_ROMAN + r")\s*[-–—)\]|]?(?=\s|$)")
_TAIL_NUMBER = re.compile(r"(?<=\s)[-–—(\[|]?\s*(?:\d{1,4}|" + _PAGE_ROMAN + r")\s*[-–—)\]|]?$")
_PAGE_WORD_NUMBER = re.compile(r"\b(page|pg\.?|p\.|seite|s\.|стр\.?|pagina|página)\s*(?:\d{1,4}|" + _PAGE_ROMAN + r")\b")
_NUMBER_OF = re.compile(r"\b(?:\d{1,4}|" + _PAGE_ROMAN + r")(?=\s*(?:of|/|von|из|de)\s*(?:\d|[ivx]))")


def normalise(text: str) -> str:
    """One key for every page's variant of a running line: the page number (a number or roman
    numeral standing at the start or end of the line, after "Page", or before "of N") becomes
    `#`; every other digit is kept, so a table's first data row ("03.05.2024 R1207 ... 412.50")
    never matches the next page's, nor "Total 1,200" another total."""
    t = _SPACES.sub(" ", text.strip().lower())
    t = _PAGE_WORD_NUMBER.sub(lambda m: f"{m.group(1)} #", t)
    t = _NUMBER_OF.sub("#", t)
    t = _LEAD_NUMBER.sub("#", t)
    return _TAIL_NUMBER.sub("#", t)


@dataclass
class FurnitureModel:
    """What repeats in the page bands, and the document's font sizes."""

    headers: frozenset[str] = frozenset()
    footers: frozenset[str] = frozenset()
    # running-title slots: small type at the same place on many pages, whatever it says (a journal's
    # alternating author / short-title heads): `top|bottom:size:bold:bucket` keys
    slots: frozenset[str] = frozenset()
    sampled_pages: int = 0
    body_size: float | None = None
    heading_sizes: tuple[float, ...] = ()  # distinct sizes larger than body, biggest first
    reasons: list[str] = field(default_factory=list)

    @classmethod
    def from_document(
        cls,
        doc: pymupdf.Document,
        page_numbers: list[int],
        cfg: TextLayerConfig,
        textdict_for=None,
    ) -> "FurnitureModel":
        """Pre-scan an evenly spread sample of `page_numbers` (1-based).

        `textdict_for(number, page) -> dict`, if given, extracts a page's text dict (the
        pipeline passes one that keeps the dicts, so sampled pages are not extracted twice).
        """
        nums = [n for n in page_numbers if 1 <= n <= doc.page_count]
        k = min(len(nums), cfg.furniture_sample_pages)
        if k == 0:
            return cls(reasons=["no pages to sample"])
        sample = sorted({nums[round(i * (len(nums) - 1) / max(1, k - 1))] for i in range(k)})
        context = _context_pages(sample, doc.page_count, cfg.furniture_context_pages)
        top_c: Counter[str] = Counter()
        bot_c: Counter[str] = Counter()
        slot_c: Counter[str] = Counter()
        sizes: Counter[float] = Counter()
        for n in sorted(set(sample) | set(context)):
            try:
                page = doc[n - 1]
                # (neighbours only lend evidence: their dicts are not kept for the pipeline)
                keep = textdict_for and n not in context
                td = textdict_for(n, page) if keep else read_textdict(page)
                frame = reading_frame(page, td)  # the frame read_text_layer reads the page in
                lines = merge_fragments(extract_lines(td, cfg, frame.matrix), cfg)
            except Exception:  # a damaged page must not stop the pre-scan; it is read (and fails) later
                continue
            h = frame.height
            band = band_depth(h, cfg.furniture_band, cfg)
            seen_top: set[str] = set()
            seen_bot: set[str] = set()
            seen_slots: set[str] = set()
            horiz = [ln for ln in lines if ln.horizontal]
            stacked = {id(ln) for top in (True, False) for ln in band_stack(horiz, band, h, _page_body(lines), top)}
            for ln in lines:
                sizes[ln.size] += ln.chars
                if ln.chars > cfg.furniture_max_chars or not ln.horizontal:
                    continue
                # the key carries the position (8 pt buckets): running heads sit at the same
                # height on every page, table rows that happen to reach the band do not
                if ln.y1 <= band or (id(ln) in stacked and ln.yc < h / 2):
                    seen_top.add(_key(ln, 0.0))
                    seen_slots.add(_slot(ln, True, h))
                elif ln.y0 >= h - band or id(ln) in stacked:
                    seen_bot.add(_key(ln, h))
                    seen_slots.add(_slot(ln, False, h))
            # count PAGES, not lines: a key's neighbouring height buckets are pooled per page first,
            # so two different lines of one page ("Line 1", "Line 2" -> "Line #") count once
            top_c.update(_with_neighbours(seen_top))
            bot_c.update(_with_neighbours(seen_bot))
            slot_c.update(_with_neighbours(seen_slots))
        sample = sorted(set(sample) | set(context))
        need = max(cfg.furniture_min_pages, cfg.furniture_min_share * len(sample))
        headers = _repeated(top_c, need)
        footers = _repeated(bot_c, need)
        slots = frozenset(k for k, c in slot_c.items() if c >= need and len(sample) >= 3)
        body = max(sizes.items(), key=lambda kv: kv[1])[0] if sizes else None
        ladder: tuple[float, ...] = ()
        if body:
            big = sorted({s for s, c in sizes.items() if s >= body * cfg.heading_size_ratio and c >= 3}, reverse=True)
            ladder = tuple(big)
        reasons = [
            f"sampled {len(sample)} pages ({len(context)} of them neighbours of the {len(nums)} selected); "
            f"a band line is furniture when seen on >= {need:.1f} of them",
            f"{len(headers)} repeated header line(s), {len(footers)} repeated footer line(s)",
        ]
        if body:
            reasons.append(f"body size {body:g} pt; larger sizes {', '.join(f'{s:g}' for s in ladder) or 'none'}")
        return cls(headers, footers, slots, len(sample), body, ladder, reasons)

    def classify(
        self, lines: list[Line], page_height: float, body_size: float, cfg: TextLayerConfig, page_width: float = 0.0,
        page_number: int = 0,
    ) -> dict[int, Decision]:
        """Set `role` on the lines of one page that are headers, footers or page numbers.

        Returns each such line's Decision, keyed by `id(line)`. Order of evidence: page-number
        pattern, repetition across pages (no cue needed), then the per-page score.
        """
        band = band_depth(page_height, cfg.furniture_band, cfg)
        horiz = [ln for ln in lines if ln.horizontal]
        out: dict[int, Decision] = {}
        top = [ln for ln in horiz if ln.y1 <= band and ln.chars <= cfg.furniture_max_chars]
        bottom = [ln for ln in horiz if ln.y0 >= page_height - band and ln.chars <= cfg.furniture_max_chars]
        # a page whose margins are deep sets its running head below the band: the first (last)
        # row, when it holds a page number at one end beside the head's text and stands apart
        top += [ln for ln in _head_row(horiz, band, page_height, body_size, True) if ln not in top]
        bottom += [ln for ln in _head_row(horiz, band, page_height, body_size, False) if ln not in bottom]
        # a footer of two or three small lines whose innermost line stands just past the band edge
        top += [ln for ln in band_stack(horiz, band, page_height, body_size, True)
                if ln not in top and ln.chars <= cfg.furniture_max_chars]
        bottom += [ln for ln in band_stack(horiz, band, page_height, body_size, False)
                   if ln not in bottom and ln.chars <= cfg.furniture_max_chars]
        top = [ln for ln in top if not belongs_to_a_table_or_figure(ln.text)]
        bottom = [ln for ln in bottom if not belongs_to_a_table_or_figure(ln.text)]
        # on a document's first page, a centred stack of head lines is its title block first
        title_block = _centred_stack(top, page_width) if page_number == 1 and page_width else set()
        # both bands' page numbers first: a head set flush with the page number at the foot is judged by it
        numbered = {id(ln): ln for group, is_top in ((top, True), (bottom, False))
                    for ln in _page_numbers(group, is_top, horiz, band, page_height, body_size, cfg)}
        page_numbers = list(numbered.values())
        for group, is_top in ((top, True), (bottom, False)):
            for ln in group:
                if id(ln) in numbered:
                    ln.role = "page_number"
                    out[id(ln)] = Decision(
                        scores={"furniture": 1.0, "page_number": 1.0},
                        reasons=[f"{'top' if is_top else 'bottom'} band line matches the page-number pattern"],
                    )
                elif self._repeated(ln, is_top, page_height, body_size, cfg) and not _table_row(ln, horiz) \
                        and not (page_number == 1 and is_top and (_title_type(ln, body_size) or id(ln) in title_block)) and (
                    self.sampled_pages >= 3 or not gap_to_body(ln, horiz, is_top, band, page_height, cfg)[1]
                ):  # (a continued table's header row repeats too: it is the table's; on two pages only, a
                    # repeated line that runs on at body leading is body text)
                    ln.role = "page_number" if is_page_number(ln.text) else "header" if is_top else "footer"
                    out[id(ln)] = Decision(
                        scores={"furniture": 1.0, "repeated": 1.0},
                        reasons=[f"repeated in the {'top' if is_top else 'bottom'} band on >= "
                                 f"{cfg.furniture_min_share:g} of {self.sampled_pages} sampled pages"],
                    )
                elif self._running_slot(ln, is_top, page_height, body_size, cfg) and not _table_row(ln, horiz) \
                        and not gap_to_body(ln, horiz, is_top, band, page_height, cfg)[1] \
                        and not _LETTER_PHRASE.match(ln.text.strip()) and _alone(ln, horiz, cfg) \
                        and (is_top or not FOOTNOTE_MARK.match(ln.text.strip())):
                    # (a running title is one line; footnotes in small type at the foot of several pages
                    # share its place and type, but start with their mark or run on over lines)
                    ln.role = "header" if is_top else "footer"
                    out[id(ln)] = Decision(
                        scores={"furniture": 1.0, "running_slot": 1.0},
                        reasons=[f"a running title: {ln.size:g} pt type (body {body_size:g} pt) at the same place in the "
                                 f"{'top' if is_top else 'bottom'} band on >= {cfg.furniture_min_share:g} of "
                                 f"{self.sampled_pages} sampled pages, its words changing from page to page"],
                    )
            if not is_top:
                _below_page_number(group, horiz, page_height - band, body_size, out)
            if len(group) > cfg.furniture_max_band_lines:
                # a map, an axis, a table, a reference list reaching the band: only repetition decides
                # there, except for the lines at the page edge set well apart from it (a download stamp
                # and a journal's running head over the references that fill the rest of the band)
                group = _edge_stack(group, is_top)
                if not group or len(group) > cfg.furniture_max_band_lines:
                    continue
            # a letter's greeting, closing or signature block in the band: nothing in it is furniture by its
            # page alone (small type set well apart from it, a company's registration line, still can be)
            letter = _letter_block(group, body_size)
            free = [ln for ln in group if id(ln) not in letter]
            for ln in free:
                if ln.role is not None or sum(ch.isalnum() for ch in ln.text) < 2:
                    continue
                row = [m for m in group if m is not ln and abs(m.yc - ln.yc) < 0.5 * max(m.height, ln.height)]
                beside = any(m.role == "page_number" for m in row) or _on_page_number(ln, group)
                flush = not row and not beside and _flush_with_page_number(ln, page_numbers, page_width)
                mates = sum(1 for m in row if m.role is None and not content_cues(m.text))
                d = score_item(ln, horiz, is_top, band, page_height, body_size, cfg, beside_page_number=beside,
                               row_mates=mates, flush_with_page_number=flush)
                folio = any(m.role == "page_number" for m in group)
                if d.scores["furniture"] >= cfg.furniture_min_score and _with_evidence(d, ln.text, folio):
                    ln.role = "header" if is_top else "footer"
                    out[id(ln)] = d
                elif is_top and not mates and not letter and _alone(ln, horiz, cfg):
                    head = running_head(ln, horiz, band, page_height, body_size, cfg)
                    if head is not None:
                        ln.role = "header"
                        out[id(ln)] = head
            if not is_top:
                _release_paragraph_ends(free, horiz, page_height - band, out)
            _join_rows([ln for ln in free if id(ln) not in title_block], is_top, body_size, out)
            if is_top:  # (at the bottom, small type stacked on a footer line is as often a footnote)
                _join_stacks([ln for ln in group if id(ln) not in title_block], is_top, body_size, out)
        if page_width:
            for ln in lines:
                if not ln.horizontal and ln.role is None and ln.chars <= 2 * cfg.furniture_max_chars:
                    d = side_stamp(ln, page_width, page_height, cfg)
                    if d is not None:
                        ln.role = "header" if ln.yc < page_height / 2 else "footer"
                        out[id(ln)] = d
        return out

    def _running_slot(self, ln: Line, top: bool, page_height: float, body_size: float, cfg: TextLayerConfig) -> bool:
        """Small type (<= 0.9 x body) where small type stands on many pages: a running title slot."""
        if not self.slots or ln.size > 0.9 * body_size:
            return False
        text, _, b = _slot(ln, top, page_height).rpartition("@")
        return any(f"{text}@{int(b) + d}" in self.slots for d in (-1, 0, 1))

    def _repeated(self, ln: Line, top: bool, page_height: float, body_size: float, cfg: TextLayerConfig) -> bool:
        if top:
            # (a repeated line in heading type, "Section 3" on every page, is a heading; heading type
            # against the document's body too: a page filled by a table in smaller type is no measure)
            body = max(body_size, self.body_size or 0.0)
            return ln.size < cfg.heading_size_ratio * body and _matches(_key(ln, 0.0), self.headers)
        return _matches(_key(ln, page_height), self.footers)


OCR_TEXT_KINDS = ("text", "header", "footer", "title", "reference")


def classify_blocks(
    items: list[Box], kinds: list[str], page_h: float, body_size: float, band_share: float, max_chars: int,
    cfg: TextLayerConfig,
) -> dict[int, tuple[str, Decision | None]]:
    """OCR pages: the same per-page score on recognised blocks (points, upright page).

    `kinds` are the layout kinds; a layout `header`/`footer` is one more cue (weight
    `furniture_w_layout`), never enough alone: the layout model labels the first lines of a
    sparse page `header`. Returns index -> (kind, Decision) for every band block that is
    furniture, and (`text`, None) for a layout header/footer that is not.
    """
    band = band_depth(page_h, band_share, cfg)
    out: dict[int, tuple[str, Decision | None]] = {}
    cand = [i for i, it in enumerate(items) if kinds[i] in OCR_TEXT_KINDS and it.chars]
    for is_top in (True, False):
        group = [i for i in cand if (items[i].y1 <= band if is_top else items[i].y0 >= page_h - band)
                 and items[i].chars <= max_chars]
        numbers = sum(1 for i in group if _NUMBER_ONLY.match(items[i].text.strip()))
        for i in group:
            if numbers <= cfg.furniture_max_page_numbers and is_page_number(items[i].text):
                out[i] = ("page_number", Decision(scores={"furniture": 1.0, "page_number": 1.0},
                                                  reasons=["band block matches the page-number pattern"]))
        if len(group) > cfg.furniture_max_band_lines:
            continue
        letter_band = any(_LETTER_PHRASE.match(items[i].text.strip()) for i in group)
        for i in group:
            it = items[i]
            if i in out or sum(ch.isalnum() for ch in it.text) < 2:
                continue
            if _title_block(it, body_size):
                continue
            row = [j for j in group if j != i and abs((items[j].y0 + items[j].y1 - it.y0 - it.y1) / 2)
                   < 0.5 * max(items[j].y1 - items[j].y0, it.y1 - it.y0)]
            beside = any(j in out for j in row)
            mates = sum(1 for j in row if j not in out and not content_cues(items[j].text))
            d = score_item(it, items, is_top, band, page_h, body_size, cfg, layout=kinds[i] in ("header", "footer"),
                           beside_page_number=beside, row_mates=mates)
            folio = any(out.get(j, ("",))[0] == "page_number" for j in group)
            if d.scores["furniture"] >= cfg.furniture_min_score and not letter_band and _with_evidence(d, it.text, folio):
                out[i] = ("header" if is_top else "footer", d)
    for i, k in enumerate(kinds):
        if k in ("header", "footer") and i not in out:
            out[i] = ("text", None)
    return out


def _title_block(it: Box, body_size: float) -> bool:
    """An OCR block of several lines in type at least the body's, one of them words with no
    running-head content: a form's or report's title block ("Form 101-02" over "Application for
    RPA Operator's Certificate (ReOC)" over "Initial Issue and Variation"). The text layer
    judges each line; a block is judged whole, and one line's cue (the form number) must not
    take the title with it. (A journal head over its DOI, every line cued, still can go.)"""
    return len(it.lines) >= 2 and it.size >= 0.95 * body_size and any(
        not content_cues(t) and len(t.split()) >= 3 for t in it.lines)


_LETTER_PHRASE = re.compile(
    r"(?:dear|yours|sincerely|kind regards|best regards|warm regards|regards|with best wishes|best wishes|"
    r"respectfully|cordially|faithfully|signed|sehr geehrte|mit freundlichen|cordialement|atentamente)\b",
    re.IGNORECASE,
)
"""A letter's greeting or closing: the band holding one is the letter's own text (its signature
block, its salutation), never a running header or footer."""


def _alone(ln: Line, lines: list[Line], cfg: TextLayerConfig) -> bool:
    """No unclassified line in the same type stacked on this one (closer than `furniture_chain_gap`
    line heights above or below): a running head is one line; a stack of small lines (a sender's
    name over the address, an affiliation block) is text. (Larger type close below is the body,
    whose distance `running_head` judges.)"""
    for m in lines:
        if m is ln or m.role is not None or abs(m.yc - ln.yc) < 0.5 * max(m.height, ln.height):
            continue
        if abs(m.size - ln.size) > 0.15 * ln.size:
            continue
        if max(m.y0 - ln.y1, ln.y0 - m.y1) < cfg.furniture_chain_gap * max(m.height, ln.height):
            return False
    return True


def _letter_block(group: list[Line], body_size: float) -> set[int]:
    """ids of the band lines that belong to a letter's greeting, closing or signature block: the
    lines starting with a letter phrase, the lines set tight on them (the signer's name, role,
    email in small type), and every band line in body-size type."""
    block = {id(ln) for ln in group if _LETTER_PHRASE.match(ln.text.strip())}
    if not block:
        return block
    block |= {id(ln) for ln in group if ln.size >= 0.95 * body_size}
    grown = True
    while grown:
        grown = False
        for ln in group:
            if id(ln) in block:
                continue
            if any(id(m) in block and max(m.y0 - ln.y1, ln.y0 - m.y1) < 0.6 * max(m.height, ln.height) for m in group):
                block.add(id(ln))
                grown = True
    return block


def has_evidence(d: Decision) -> bool:
    """Furniture judged from one page alone needs content that body text does not carry (a
    stamp, a URL, a DOI, a page-of count, a document number...) or a page number beside it (or
    set on its edge, `_flush_with_page_number`):
    position, type size and a gap alone also describe a letter's title or a dated last line."""
    return any(d.scores.get(k, 0.0) > 0 for k in ("beside_page_number", "cue_beside_page_number",
                                                   "cue_flush_with_page_number")) or any(
        d.scores.get(f"cue_{c}", 0.0) > 0 for c in STRONG_CUES)


def _table_row(ln: Line, horiz: list[Line]) -> bool:
    """A line that is one cell of a row whose cells start where the cells of the next row below
    start: a table's (header) row, which a continued table repeats on every page."""
    row = [m for m in horiz if abs(m.yc - ln.yc) < 0.5 * max(m.height, ln.height)]
    if len(row) < 2:
        return False
    below = [m for m in horiz if m.y0 >= ln.y1 - 0.25 * ln.height and m.y0 - ln.y1 < 2.5 * ln.height]
    if not below:
        return False
    nxt = min(m.yc for m in below)
    next_row = [m for m in below if abs(m.yc - nxt) < 0.5 * m.height]
    starts = [m.x0 for m in next_row]
    aligned = sum(1 for m in row if any(abs(m.x0 - x) <= 2.0 for x in starts))
    return aligned >= 2


def _release_paragraph_ends(free: list[Line], horiz: list[Line], band_top: float,
                            out: dict[int, Decision]) -> None:
    """A bottom-band line judged furniture by its page alone (its URL, its date) that ends a
    paragraph of the body is body text: the lines of its type set tight above it, one over the
    next, reach out of the band (a source note's "<http://...>." under "Source: ..." under the
    table's last rows) or start with a footnote mark. A stamp block of its own in the band (a
    repository's name over its URL) stays furniture. (At the top, a stack under a cued line is a
    letterhead: `_join_stacks` takes it the other way.)"""
    for ln in free:
        d = out.get(id(ln))
        if d is None or "content" not in d.scores:
            continue
        chain, cur = {id(ln)}, ln
        while True:
            above = [m for m in horiz if id(m) not in chain and m.role is None and abs(m.size - cur.size) <= 0.5
                     and m.x0 < cur.x1 and m.x1 > cur.x0
                     and -0.25 * cur.height <= cur.y0 - m.y1 <= 0.5 * max(m.height, cur.height)]
            if not above:
                break
            cur = max(above, key=lambda m: m.y1)
            chain.add(id(cur))
            if cur.y0 < band_top:
                break
        if cur is not ln and (cur.y0 < band_top or FOOTNOTE_MARK.match(cur.text.strip())):
            ln.role = None
            del out[id(ln)]


def _counted(ln: Line, horiz: list[Line]) -> bool:
    """A number one of a counted column: the nearest number-only line straight above or below it,
    on its left or right edge, differs from it by one (a transcript's or a pleading's line
    numbers, a table's row numbers). A page carries one page number, never a run of them."""
    t = ln.text.strip()
    if not t.isdigit():
        return False
    value = int(t)
    for down in (True, False):
        near = [m for m in horiz if m is not ln and m.text.strip().isdigit()
                and (abs(m.x0 - ln.x0) <= 2 or abs(m.x1 - ln.x1) <= 2)
                and ((m.y0 >= ln.y1 - 0.25 * ln.height) if down else (m.y1 <= ln.y0 + 0.25 * ln.height))]
        if not near:
            continue
        m = min(near, key=lambda m: abs(m.yc - ln.yc))
        if abs(m.yc - ln.yc) <= 4 * max(m.height, ln.height) and abs(int(m.text.strip()) - value) == 1:
            return True
    return False


def _ends_a_paragraph(ln: Line, horiz: list[Line]) -> bool:
    """A number set tight under a longer line of its type and left edge ("... United States, 1997–"
    over "2007"): the paragraph's last line, not a page number."""
    for m in horiz:
        if m is ln or abs(m.size - ln.size) > 0.5 or abs(m.x0 - ln.x0) > 2 or m.chars < 3 * ln.chars:
            continue
        if -0.25 * ln.height <= ln.y0 - m.y1 <= 0.5 * max(m.height, ln.height):
            return True
    return False


def _join_rows(group: list[Line], is_top: bool, body_size: float, out: dict[int, Decision]) -> None:
    """A short line sharing its row with furniture found by evidence (a browser's print header: the
    page title left, the date and time right) belongs to the same header or footer."""
    for ln in group:
        if ln.role is not None or ln.chars > 80 or ln.size > body_size * 1.05:
            continue
        mates = [m for m in group if m is not ln and m.role is not None
                 and abs(m.yc - ln.yc) < 0.5 * max(m.height, ln.height)]
        if mates:
            ln.role = "header" if is_top else "footer"
            out[id(ln)] = Decision(
                scores={"furniture": 1.0, "row_mate": 1.0},
                reasons=[f"{'top' if is_top else 'bottom'} band line on the row of furniture "
                         f"({mates[0].text.strip()[:40]!r}): one header/footer row"],
            )


def _join_stacks(group: list[Line], is_top: bool, body_size: float, out: dict[int, Decision]) -> None:
    """A banner or letterhead is a stack of small lines of which only some carry a cue (the
    address under a company's name, the line above "Tel ... | info@..."): an unmarked line in
    the same small type, set tight against a furniture line and sharing its left edge or
    overlapping it, is part of the same block."""
    changed = True
    while changed:
        changed = False
        for ln in group:
            if ln.role is not None or ln.size >= 0.95 * body_size:
                continue
            for m in group:
                if m.role not in ("header", "footer") or abs(m.size - ln.size) > 0.5:
                    continue
                gap = max(m.y0 - ln.y1, ln.y0 - m.y1)
                aligned = abs(m.x0 - ln.x0) < 2 or min(m.x1, ln.x1) - max(m.x0, ln.x0) > 0
                if gap <= 0.6 * max(m.height, ln.height) and aligned:
                    ln.role = m.role
                    base = out[id(m)].scores.get("furniture", 1.0)
                    out[id(ln)] = Decision(
                        scores={"furniture": base, "stacked": 1.0},
                        reasons=[f"{'top' if is_top else 'bottom'} band line set tight against a furniture line "
                                 f"in the same small type ({ln.size:g} vs body {body_size:g}): one block"],
                    )
                    changed = True
                    break


def _page_numbers(group: list[Line], is_top: bool, horiz: list[Line], band: float, page_height: float,
                  body_size: float, cfg: TextLayerConfig) -> list[Line]:
    """The band's page numbers: number-pattern lines standing apart on their row, neither one of a
    counted column nor a paragraph's last line; none where the band holds more bare numbers than a
    page carries (a table's or an axis's)."""
    numbers = sum(1 for ln in group if _NUMBER_ONLY.match(ln.text.strip()) and
                  (ln.y1 <= band if is_top else ln.y0 >= page_height - band))
    if numbers > cfg.furniture_max_page_numbers:
        return []
    return [ln for ln in group if is_page_number(ln.text) and _apart(ln, group, body_size)
            and not _counted(ln, horiz) and not _ends_a_paragraph(ln, horiz)]


def _flush_with_page_number(ln: Line, numbers: list[Line], page_width: float) -> bool:
    """`ln` ends flush with a page number set at the right of the page, in either band: a designer
    sets a running head on the page number's edge ("Company Name" at the top right over a folio
    at the foot's right). Right edges only: the body's lines and headings all start at the left
    margin, and a right-aligned date (a letter's) is no head."""
    if not page_width or ln.role is not None:
        return False
    t = ln.text.strip()
    if is_page_number(t) or not DATE.sub("", t).strip(" ,.-–"):
        return False
    return any(m is not ln and (m.x0 + m.x1) / 2 > 0.6 * page_width and abs(m.x1 - ln.x1) <= 1.5
               for m in numbers)


def _with_evidence(d: Decision, text: str, folio_in_band: bool) -> bool:
    """`has_evidence`, or a short dated line that is no sentence in the band that holds the page
    number (both routes; its reason is added to `d`): a document's footer row ("Guide title ...
    June 2011" over the folio). A report's dated last line ("Approved at Bergen on 16 March
    2020.") is a sentence; a letter's date stands at its head or in its signature block
    (`_letter_block`)."""
    if has_evidence(d):
        return True
    t = text.strip()
    if folio_in_band and d.scores.get("cue_date", 0.0) > 0 and len(t.split()) <= 8 and not re.search(r"[.,;:!?]$", t):
        d.reasons.append("a dated line in the band that holds the page number")
        return True
    return False


def _on_page_number(ln: Line, group: list[Line]) -> bool:
    """`ln` is stacked on the band's page number as one block with it: set tight above or below
    it (within 0.6 line heights) and flush with it at the left, the right or the centre. A
    running head often carries its page number as a second line ("Appendix 5" over "Page 8 of
    11", a company's name over "Page 3"); a title, a footnote or the body's first line does not
    sit flush on the page number that tight."""
    for m in group:
        if m.role != "page_number" or m is ln:
            continue
        gap = max(m.y0 - ln.y1, ln.y0 - m.y1)
        if gap < -0.2 * min(m.height, ln.height) or gap > 0.6 * max(m.height, ln.height):
            continue
        if abs(m.x0 - ln.x0) <= 2 or abs(m.x1 - ln.x1) <= 2 or abs((m.x0 + m.x1) - (ln.x0 + ln.x1)) <= 4:
            return True
    return False


def _below_page_number(group: list[Line], horiz: list[Line], band_top: float, body_size: float,
                       out: dict[int, Decision]) -> None:
    """Small type set under the page number at the foot of the page (a disclaimer, a legal
    line, however long) is in the footer: footnotes stand above the page number, never under."""
    pns = [ln for ln in group if ln.role == "page_number"]
    if not pns:
        return
    floor = max(ln.y1 for ln in pns)
    for ln in horiz:
        if ln.role is None and ln.y0 >= floor - 0.2 * ln.height and ln.y0 >= band_top and ln.size <= 0.9 * body_size:
            ln.role = "footer"
            out[id(ln)] = Decision(
                scores={"furniture": 1.0, "below_page_number": 1.0},
                reasons=[f"{ln.size:g} pt type (body {body_size:g} pt) under the page number at the page foot"],
            )


def _title_type(ln: Line, body_size: float) -> bool:
    """A line in a title's type with nothing of a running head's content: on a document's first
    page, the head every later page repeats is first its title ("Application for ... Certificate"
    over a form), and a reader keeps it there."""
    return (ln.bold or ln.size >= 1.05 * body_size) and not content_cues(ln.text) and not is_page_number(ln.text) \
        and sum(ch.isalpha() for ch in ln.text) >= 8


def _centred_stack(top: list[Line], page_width: float) -> set[int]:
    """ids of the top-band lines that form a title block: two lines or more set one under the
    next (at most 0.8 line heights apart) on one centre axis (within 2% of the page's width)
    near the page's middle, none as wide as the text, one at least holding no running-head
    content (a date, a URL, a number). A report repeats its title block ("Vote Yes for Strong
    Schools / Major Contribution Report / For the Period ...") at the head of every page: on
    the first page it is the report's title, which a reader keeps."""
    mid = page_width / 2
    cand = sorted((ln for ln in top if abs((ln.x0 + ln.x1) / 2 - mid) <= 0.15 * page_width
                   and ln.x1 - ln.x0 <= 0.8 * page_width), key=lambda ln: ln.y0)
    best: list[Line] = []
    for i, first in enumerate(cand):
        axis = (first.x0 + first.x1) / 2
        stack = [first]
        for ln in cand[i + 1:]:
            last = stack[-1]
            if abs((ln.x0 + ln.x1) / 2 - axis) <= 0.02 * page_width \
                    and -0.25 * ln.height <= ln.y0 - last.y1 <= 0.8 * max(ln.height, last.height):
                stack.append(ln)
        if len(stack) > len(best):
            best = stack
    if len(best) < 2 or all(content_cues(ln.text) or is_page_number(ln.text) for ln in best):
        return set()
    return {id(ln) for ln in best}


def _head_row(horiz: list[Line], band: float, page_height: float, body_size: float, top: bool) -> list[Line]:
    """The page's first (top) or last row of lines, within twice the band, when it is a running
    head or foot with its page number: a line of text and a lone page number at the row's left
    or right end, nothing in body-heading type, set apart from the text under (over) it by more
    than a line space. A heading or a table row ending in a number has body text tight to it."""
    if len(horiz) < 3:
        return []
    edge = min(horiz, key=lambda ln: ln.y0) if top else max(horiz, key=lambda ln: ln.y1)
    row = sorted((m for m in horiz if abs(m.yc - edge.yc) < 0.5 * max(m.height, edge.height)), key=lambda m: m.x0)
    inside = row[-1].y1 <= 2 * band if top else row[0].y0 >= page_height - 2 * band
    if len(row) < 2 or not inside or any(m.size > 1.05 * body_size for m in row):
        return []
    ends = [m for m in (row[0], row[-1]) if is_page_number(m.text) and _NUMBER_ONLY.match(m.text.strip())]
    if len(ends) != 1 or not any(sum(ch.isalpha() for ch in m.text) >= 3 for m in row):
        return []
    rest = [m for m in horiz if m not in row]
    if top:
        gap = min((m.y0 for m in rest if m.y0 >= edge.yc), default=page_height) - max(m.y1 for m in row)
    else:
        gap = min(m.y0 for m in row) - max((m.y1 for m in rest if m.y1 <= edge.yc), default=0.0)
    return row if gap > 0.8 * max(m.height for m in row) else []


def _edge_stack(group: list[Line], top: bool) -> list[Line]:
    """The band's lines from the page edge inward down to the first gap wider than two of their
    line heights, when lines stand beyond that gap (else [])."""
    rows: list[list[Line]] = []
    for ln in sorted(group, key=lambda m: m.y0 if top else -m.y1):
        if rows and abs(rows[-1][0].yc - ln.yc) < 0.5 * max(rows[-1][0].height, ln.height):
            rows[-1].append(ln)
        else:
            rows.append([ln])
    for i in range(1, len(rows)):
        a, b = rows[i - 1], rows[i]
        gap = (min(m.y0 for m in b) - max(m.y1 for m in a)) if top else (min(m.y0 for m in a) - max(m.y1 for m in b))
        if gap > 2 * max(m.height for m in a + b):
            return [m for r in rows[:i] for m in r]
    return []


def band_stack(horiz: list[Line], band: float, page_height: float, body_size: float, top: bool,
               depth: int = 2) -> list[Line]:
    """Lines just past the band edge that are part of a block of small lines standing in the
    band: set tight against a band line (at most 0.6 line heights apart, as lines of one block
    are), in the same type size, smaller than the body, overlapping it or on its left edge; up to
    `depth` lines inward. A journal's foot ("#176000 - $15.00 USD  Received ...; published ..."
    over "(C) 2012 OSA  1 December 2012 / Vol. 3 ...") has its first line above the band; the
    band is a share of the page, the block is what the typesetter set as one."""
    inside = [ln for ln in horiz if (ln.y1 <= band if top else ln.y0 >= page_height - band)]
    out: list[Line] = []
    edge = inside
    for _ in range(depth):
        nxt = []
        for ln in horiz:
            # the cheap tests first: the membership tests compare Line dataclasses field by field,
            # and the row count walks every line of the page
            if ln.size >= 0.95 * body_size or (ln.yc >= page_height / 2) == top:
                continue
            if not any(_stacks_under(m, ln, top) for m in edge):
                continue
            if ln in inside or ln in out or ln in nxt:
                continue
            if sum(1 for m in horiz if abs(m.yc - ln.yc) < 0.5 * max(m.height, ln.height)) > 3:
                continue  # a table row running into the band: its cells are no block of small lines
            nxt.append(ln)
        if not nxt:
            break
        out += nxt
        edge = nxt
    return out


def _stacks_under(m: Line, ln: Line, top: bool) -> bool:
    """`ln` is set tight against band-side line `m` (`band_stack`): same size, at most 0.6 line
    heights apart, overlapping it or on its left edge."""
    if abs(m.size - ln.size) > 0.5:
        return False
    gap = ln.y0 - m.y1 if top else m.y0 - ln.y1
    aligned = abs(m.x0 - ln.x0) < 2 or min(m.x1, ln.x1) - max(m.x0, ln.x0) > 0
    return -0.25 * ln.height <= gap <= 0.6 * max(m.height, ln.height) and aligned


def _page_body(lines: list[Line]) -> float:
    """The page's body type size: the size holding most characters."""
    c: Counter[float] = Counter()
    for ln in lines:
        c[ln.size] += ln.chars
    return max(c.items(), key=lambda kv: kv[1])[0] if c else 10.0


def _apart(ln, group, em: float) -> bool:
    """A page number stands apart on its row: no text within 0.3 em of it (a subscript or a
    formula's digit touching its neighbours is none)."""
    for m in group:
        if m is ln or abs(m.yc - ln.yc) >= 0.5 * max(m.height, ln.height):
            continue
        if max(m.x0 - ln.x1, ln.x0 - m.x1) < 0.3 * em:
            return False
    return True


def _context_pages(sample: list[int], page_count: int, want: int) -> list[int]:
    """Neighbours of a small selection (a page converted alone), nearest first, not in it."""
    if len(sample) >= want or page_count <= len(sample):
        return []
    chosen: list[int] = []
    for d in range(1, page_count):
        for n in sample:
            for m in (n + d, n - d):
                if 1 <= m <= page_count and m not in sample and m not in chosen:
                    chosen.append(m)
                    if len(sample) + len(chosen) >= want:
                        return sorted(chosen)
    return sorted(chosen)


def _key(ln: Line, edge: float) -> str:
    """Normalised text plus its distance from the page edge in 8 pt buckets."""
    return f"{normalise(ln.text)}@{round(abs((ln.y0 if edge == 0 else ln.y1) - edge) / 8)}"


def _slot(ln: Line, top: bool, page_height: float) -> str:
    """A band line's place and type, not its words: `top:8.0:0:0@4` (size to 0.5 pt, bold, mono,
    distance from the page edge in 8 pt buckets)."""
    edge = ln.y0 if top else page_height - ln.y1
    return f"{'top' if top else 'bottom'}:{round(ln.size * 2) / 2}:{int(ln.bold)}:{int(ln.mono)}@{round(abs(edge) / 8)}"


def _matches(key: str, known: frozenset[str]) -> bool:
    text, _, b = key.rpartition("@")
    return any(f"{text}@{int(b) + d}" in known for d in (-1, 0, 1))


def _with_neighbours(keys: set[str]) -> set[str]:
    """Each key plus the same text one height bucket up and down (a page contributes once)."""
    out: set[str] = set()
    for key in keys:
        text, _, b = key.rpartition("@")
        out.update(f"{text}@{int(b) + d}" for d in (-1, 0, 1))
    return out


def _repeated(counts: Counter[str], need: float) -> frozenset[str]:
    """Keys seen on enough pages (counts are per page, neighbouring buckets already pooled)."""
    out = set()
    for key in counts:
        text, _, b = key.rpartition("@")
        if sum(1 for ch in text if ch.isalnum()) < 2 and "#" not in text:
            continue
        if counts[key] >= need and text.strip("# "):
            out.add(key)
    return frozenset(out)
