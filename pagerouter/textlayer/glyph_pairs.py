"""Text as a reader would copy it: glyph pairs of old typesetting read as the one mark they show.

TeX and the typesetters that followed it draw a double quotation mark as two single quotes
(‘‘corporate social responsibility’’, or in ASCII ``word''); the layer then holds two characters
where the page shows one, and a reader's search for “respectability” misses. Pairs become the
double mark; anything else is left as drawn:

* three or more in a row (‘‘‘ is a Markdown code fence drawn with typographic quotes) stay;
* ASCII '' is a double prime after a digit or letter (4''-(methylamino), 5'' of arc) unless a
  `` opened it on the same line: only a `` ... '' pair is a quotation;
* monospaced lines (code) are never touched (the caller skips them).
"""

from __future__ import annotations

import re

_PAIR_OPEN = re.compile(r"(?<!‘)‘‘(?!‘)")
_PAIR_CLOSE = re.compile(r"(?<!’)’’(?!’)")
_TEX_QUOTE = re.compile(r"(?<!`)``(?!`)([^`']*?)(?<!')''(?!')")
_TEX_OPEN = re.compile(r"(?<!`)``(?!`)")


def reader_quotes(text: str) -> str:
    """`text` with each doubled single quote read as the double quote it draws."""
    if "‘‘" in text:
        text = _PAIR_OPEN.sub("“", text)
    if "’’" in text:
        text = _PAIR_CLOSE.sub("”", text)
    if "``" in text:
        text = _TEX_QUOTE.sub(r"“\1”", text)
        # an opening `` whose closing '' is on a later line: the opening mark alone
        text = _TEX_OPEN.sub("“", text)
    return text
