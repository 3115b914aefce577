"""What the text layer holds and how it is painted: one walk over the shared text dict plus
PyMuPDF's cheap placement calls (image info, fonts, and the paint-order log only when a
sizeable picture could hide text).

Coordinates: PyMuPDF reports text, image and paint-log boxes in the *unrotated* page; renders
and our outputs are in the page as displayed, so boxes are moved with `page.rotation_matrix`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pymupdf

from ..common.pagetext import page_fonts
from ..layout.ink import Span
from ..layout.paints import to_display



@dataclass
class Layer:
    visible_text: str = ""
    invisible_text: str = ""
    visible_chars: int = 0
    invisible_chars: int = 0
    spans: list[Span] = field(default_factory=list)  # visible spans with text
    light_chars: int = 0
    chars_by_font: dict[str, int] = field(default_factory=dict)

    @property
    def total_chars(self) -> int:
        return self.visible_chars + self.invisible_chars

    @property
    def invisible_share(self) -> float:
        return self.invisible_chars / self.total_chars if self.total_chars else 0.0


def _nonspace(s: str) -> int:
    return len(s) - s.count(" ") - s.count("\u00a0") - s.count("\t")



def read_layer(page: pymupdf.Page, textdict: dict, light_level: int) -> Layer:
    """Visible/invisible text, visible span boxes and characters per font from the text dict.

    Invisible text is render mode 3 (MuPDF reports it with alpha 0); that is what OCR tools put
    over a scan, so it is kept apart from what the page shows.
    """
    lay = Layer()
    vis: list[str] = []
    inv: list[str] = []
    light_min = light_level
    fonts = lay.chars_by_font
    spans = lay.spans
    rotm = page.rotation_matrix if page.rotation else None
    # Per-span work is kept minimal (a dense page has 1-2k spans): span weights are raw
    # lengths; non-space totals are counted once on the joined text.
    for block in textdict.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", ()):
            for sp in line.get("spans", ()):
                t = sp.get("text", "")
                if not t or t.isspace():
                    continue
                if sp.get("alpha", 255) == 0:
                    inv.append(t)
                    continue
                vis.append(t)
                n = len(t)
                c = sp.get("color", 0)
                light = (c >> 16) >= light_min and ((c >> 8) & 255) >= light_min and (c & 255) >= light_min
                if light:
                    lay.light_chars += n
                bbox = sp["bbox"]
                spans.append(Span(bbox if rotm is None else to_display(page, bbox, rotm), n, light))
                f = sp.get("font", "")
                fonts[f] = fonts.get(f, 0) + n
            if vis and vis[-1] != "\n":
                vis.append("\n")
            if inv and inv[-1] != "\n":
                inv.append("\n")
    lay.visible_text = "".join(vis)
    lay.invisible_text = "".join(inv)
    lay.visible_chars = _nonspace(lay.visible_text) - lay.visible_text.count("\n")
    lay.invisible_chars = _nonspace(lay.invisible_text) - lay.invisible_text.count("\n")
    return lay


def _norm_font(name: str) -> str:
    if len(name) > 7 and name[6] == "+":
        name = name[7:]  # subset prefix ABCDEF+
    return "".join(c for c in name.lower() if c.isalnum())


def unmapped_font_share(page: pymupdf.Page, chars_by_font: dict[str, int]) -> float:
    """Share of visible characters set in fonts whose codes have no Unicode map: composite
    (Type0) fonts with an Identity encoding, and Type3 fonts, without a ToUnicode stream. Their
    text comes out as glyph ids or control codes unless MuPDF can guess from glyph names.

    Spans name fonts by their internal name (`DejaVuSans`), the page resources by BaseFont
    (`DejaVu Sans Book`, `ABCDEF+Foo`), so names are compared normalised and by prefix."""
    total = sum(chars_by_font.values())
    if not total:
        return 0.0
    doc = page.parent
    fonts = page_fonts(page)
    bad: list[str] = []
    for xref, _ext, ftype, basefont, *_rest in fonts:
        encoding = _rest[1] if len(_rest) > 1 else ""
        if ftype not in ("Type0", "Type3"):
            continue
        if ftype == "Type0" and not str(encoding).startswith("Identity"):
            continue
        try:
            kind, _val = doc.xref_get_key(xref, "ToUnicode")
        except Exception:  # a damaged font object: treat as unmapped
            kind = "null"
        if kind == "null":
            bad.append(_norm_font(basefont))
    if not bad:
        return 0.0
    if len(bad) == len(fonts):
        return 1.0  # every font on the page is unmapped, whatever the spans call them
    hit = 0
    for name, n in chars_by_font.items():
        nn = _norm_font(name)
        if nn and any(b.startswith(nn) or nn.startswith(b) for b in bad if b):
            hit += n
    return hit / total

