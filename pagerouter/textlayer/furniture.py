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
Page numbers ("3", "- 3 -", "Page 3", "p. 3", "3 / 10", "iii") in the bands are recognised
by pattern alone, so even a 1-page document gets them; documents of one or two pages get no
repetition evidence, only patterns and (for the top band) a position rule: a short
small-type line alone at the top of the page, well above the body, is a header.

Furniture is never dropped: it keeps its role (header/footer/page_number) in the JSON and
the Markdown renderer leaves it out of the body.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import pymupdf

from ..config.textlayer import TextLayerConfig
from ..pagetext import TEXT_FLAGS
from .frame import reading_frame
from .lines import Line, extract_lines, merge_fragments

_ROMAN = r"[ivxlcdm]{1,7}"
_PAGE_NUMBER = re.compile(
    r"^(?:(?:page|pg\.?|p\.|seite|s\.|стр\.?|страница|pagina|página)\s*)?"
    r"[-–—(\[|]?\s*(?:\d{1,4}|" + _ROMAN + r")\s*[-–—)\]|]?"
    r"(?:\s*(?:of|/|von|из|de)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_ROMAN_WORD = re.compile(r"\b" + _ROMAN + r"\b", re.IGNORECASE)


def is_page_number(text: str) -> bool:
    t = text.strip()
    return 0 < len(t) <= 24 and bool(_PAGE_NUMBER.match(t))


def normalise(text: str) -> str:
    """Text with digits and roman numerals replaced: one key for every page's variant."""
    t = _SPACES.sub(" ", text.strip().lower())
    t = _DIGITS.sub("#", t)
    return _ROMAN_WORD.sub("#", t) if len(t) <= 12 else t


@dataclass
class FurnitureModel:
    """What repeats in the page bands, and the document's font sizes."""

    headers: frozenset[str] = frozenset()
    footers: frozenset[str] = frozenset()
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
        top_c: Counter[str] = Counter()
        bot_c: Counter[str] = Counter()
        sizes: Counter[float] = Counter()
        for n in sample:
            try:
                page = doc[n - 1]
                td = textdict_for(n, page) if textdict_for else page.get_text("dict", flags=TEXT_FLAGS)
                frame = reading_frame(page, td)  # the frame read_text_layer reads the page in
                lines = merge_fragments(extract_lines(td, cfg, frame.matrix), cfg)
            except Exception:  # a damaged page must not stop the pre-scan; it is read (and fails) later
                continue
            h = frame.height
            seen_top: set[str] = set()
            seen_bot: set[str] = set()
            for ln in lines:
                sizes[ln.size] += ln.chars
                if ln.chars > cfg.furniture_max_chars or not ln.horizontal:
                    continue
                # the key carries the position (8 pt buckets): running heads sit at the same
                # height on every page, table rows that happen to reach the band do not
                if ln.y1 <= cfg.furniture_band * h:
                    seen_top.add(_key(ln, 0.0))
                elif ln.y0 >= (1 - cfg.furniture_band) * h:
                    seen_bot.add(_key(ln, h))
            # count PAGES, not lines: a key's neighbouring height buckets are pooled per page first,
            # so two different lines of one page ("Line 1", "Line 2" -> "Line #") count once
            top_c.update(_with_neighbours(seen_top))
            bot_c.update(_with_neighbours(seen_bot))
        need = max(cfg.furniture_min_pages, cfg.furniture_min_share * len(sample))
        headers = _repeated(top_c, need)
        footers = _repeated(bot_c, need)
        body = max(sizes.items(), key=lambda kv: kv[1])[0] if sizes else None
        ladder: tuple[float, ...] = ()
        if body:
            big = sorted({s for s, c in sizes.items() if s >= body * cfg.heading_size_ratio and c >= 3}, reverse=True)
            ladder = tuple(big)
        reasons = [
            f"sampled {len(sample)} of {len(nums)} pages; a band line is furniture when seen on >= {need:.1f} of them",
            f"{len(headers)} repeated header line(s), {len(footers)} repeated footer line(s)",
        ]
        if body:
            reasons.append(f"body size {body:g} pt; larger sizes {', '.join(f'{s:g}' for s in ladder) or 'none'}")
        return cls(headers, footers, len(sample), body, ladder, reasons)

    def classify(self, lines: list[Line], page_height: float, body_size: float, cfg: TextLayerConfig) -> None:
        """Set `role` on the lines of one page that are headers, footers or page numbers."""
        band = cfg.furniture_band * page_height
        body_lines = [ln for ln in lines if ln.horizontal]
        for ln in body_lines:
            if ln.chars > cfg.furniture_max_chars:
                continue
            top = ln.y1 <= band
            bottom = ln.y0 >= page_height - band
            if not (top or bottom):
                continue
            if is_page_number(ln.text):
                ln.role = "page_number"
            elif top and ln.size < cfg.heading_size_ratio * body_size and _matches(_key(ln, 0.0), self.headers):
                # (a repeated line in heading type, "Section 3" on every page, is a heading)
                ln.role = "header"
            elif bottom and _matches(_key(ln, page_height), self.footers):
                ln.role = "footer"
        if self.sampled_pages < 3:
            self._position_rule(body_lines, page_height, body_size, cfg)

    @staticmethod
    def _position_rule(lines: list[Line], page_height: float, body_size: float, cfg: TextLayerConfig) -> None:
        """Without repetition evidence: small type alone at the top, far above the body."""
        band = cfg.furniture_band * page_height
        rest = [ln for ln in lines if ln.role is None]
        top = [ln for ln in rest if ln.y1 <= band]
        if not top or len(top) > 3:
            return
        below = [ln for ln in rest if ln.y1 > band]
        if not below:
            return
        first_body = min(ln.y0 for ln in below)
        for ln in top:
            if ln.size <= 0.9 * body_size and first_body - ln.y1 >= 1.5 * ln.height and ln.chars <= 100:
                ln.role = "header"


def _key(ln: Line, edge: float) -> str:
    """Normalised text plus its distance from the page edge in 8 pt buckets."""
    return f"{normalise(ln.text)}@{round(abs((ln.y0 if edge == 0 else ln.y1) - edge) / 8)}"


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
