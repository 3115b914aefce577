"""Output hygiene, in one place for every route: no control characters in any text a page or
document carries out (text layer, OCR, VLM alike).

A VLM's rejected reading kept as a fallback, a damaged text layer or an OCR engine can put
C0/C1 control characters (`\\x14`, `\\x07`, ...) into block text, table cells, check reasons that
quote an output, or a file name; they break Markdown viewers and JSON consumers that expect
text. So every page leaving `pipeline.convert_pages` and every new document goes through
`clean_model`: every string field, nested ones included, loses its control characters except
newline and tab (a carriage return becomes a newline), lone surrogates (not encodable as UTF-8)
are dropped, and a run of U+FFFD replacement characters (undecodable bytes) becomes one.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

_BAD = re.compile(r"\r\n?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]|\ufffd{2,}")


def _fix(m: re.Match) -> str:
    s = m.group()
    if s[0] == "\r":
        return "\n"
    if s[0] == "\ufffd":
        return "\ufffd"
    return ""


def clean_text(s: str) -> str:
    """`s` without control characters other than newline and tab (see the module doc)."""
    return _BAD.sub(_fix, s) if _BAD.search(s) else s


def has_control_chars(s: str) -> bool:
    """Whether `s` holds a character `clean_text` would remove (tests and checks use this)."""
    return any(c not in "\n\t" and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F) for c in s)


def _clean_value(v: Any) -> Any:
    if isinstance(v, str):
        return clean_text(v)
    if isinstance(v, BaseModel):
        clean_model(v)
        return v
    if isinstance(v, list):
        out = [_clean_value(x) for x in v]
        return v if all(a is b for a, b in zip(out, v)) else out
    if isinstance(v, tuple):
        out_t = tuple(_clean_value(x) for x in v)
        return v if all(a is b for a, b in zip(out_t, v)) else out_t
    if isinstance(v, dict):
        out_d, changed = {}, False
        for k, x in v.items():
            k2, x2 = _clean_value(k), _clean_value(x)
            changed = changed or k2 is not k or x2 is not x
            out_d[k2] = x2
        return out_d if changed else v
    return v


def clean_model(m: BaseModel) -> BaseModel:
    """Clean every string field of `m` and its nested models, lists and dicts, in place."""
    for name in type(m).model_fields:
        v = getattr(m, name)
        new = _clean_value(v)
        if new is not v:
            object.__setattr__(m, name, new)  # a cleaned copy of a field pydantic already validated
    return m
