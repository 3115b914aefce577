"""Per-page limits checked before a page's work starts (`limits` in config).

A page is refused (reported `failed`, the other pages converted) when its box is too large,
when its text layer holds too many characters, or when its content streams decode to more
than `limits.max_content_stream_mb`. The last one is a decompression bomb: a few KB of
nested deflate that MuPDF would decode to gigabytes of operators and then parse for minutes,
holding a worker until the page timeout. Measuring the decoded size ourselves, with zlib and
a cap, costs one extra inflate of a normal page's content (well under a millisecond) and
stops a bomb after the cap's worth of output.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Iterator

import pymupdf

_FLATE = {"/FlateDecode", "/Fl"}
_CHUNK = 1 << 20  # bytes of output per inflate step: bounds memory while measuring
_FLATE_RATIO = 1032
_REF = re.compile(r"(\d+) 0 R")


def page_box_problem(width: float, height: float, max_side_pt: float) -> str:
    """Why a page is too large to read (limits.max_page_side_pt), or ''."""
    side = max(width, height)
    if side > max_side_pt:
        return (f"page too large: {width:.0f} x {height:.0f} pt, the limit is {max_side_pt:g} pt a side "
                "(limits.max_page_side_pt)")
    return ""


def page_text_problem(textdict: dict, max_chars: int) -> str:
    """Why a page's text layer is too large to read (limits.max_page_chars), or ''."""
    n = 0
    for block in textdict.get("blocks", ()):
        for line in block.get("lines", ()):
            for span in line.get("spans", ()):
                n += len(span.get("text", ""))
    if n > max_chars:
        return f"too much text: {n} characters, the limit is {max_chars} a page (limits.max_page_chars)"
    return ""


def content_size_problem(page: pymupdf.Page, max_mb: float) -> str:
    """Why a page's content streams (its /Contents and the forms it draws) are too large once
    decoded (limits.max_content_stream_mb), or ''. Streams with filters other than Flate are
    not measured (MuPDF's own limits apply to them); a stream zlib cannot decode is left to
    MuPDF, which reports the damage."""
    cap = int(max_mb * 1024 * 1024)
    doc = page.parent
    xrefs = _content_xrefs(doc, page) + _form_xrefs(doc, page.xref)
    # Deflate expands at most ~1032:1: when one Flate layer (or none) over every stream cannot
    # reach the cap, nothing needs inflating (most pages). Nested Flate has no useful bound.
    bound = 0.0
    streams = []
    for xref in dict.fromkeys(xrefs):
        try:
            text = doc.xref_object(xref, compressed=True)
        except Exception:  # noqa: BLE001 - a broken object: the slow path reports what it can
            text = ""
        plain = _PLAIN_FLATE.fullmatch(text)
        if plain is not None:  # most streams: one Flate layer and a direct length, nothing else
            length = int(plain.group(1) or plain.group(2))
            streams.append((xref, ["/FlateDecode"], length))
            bound += (length if length > 0 else len(doc.xref_stream_raw(xref) or b"")) * _FLATE_RATIO + 1024
            continue
        filters, length = _stream_keys(doc, xref, text)
        streams.append((xref, filters, length))
        bound += _bound(doc, xref, filters, length)
    if bound <= cap:
        return ""
    total = 0
    for xref, filters, _ in streams:
        total += _decoded_size(doc, xref, filters, cap - total + 1)
        if total > cap:
            return (f"content streams decode to more than {max_mb:g} MB (a decompression bomb?); "
                    "the limit is limits.max_content_stream_mb")
    return ""


def _bound(doc: pymupdf.Document, xref: int, filters: list[str] | None, length: int | None) -> float:
    """Most bytes the stream can decode to: inf when it has to be measured, 0 when it cannot be."""
    plan = _plan(filters)
    if plan is None:
        return 0  # one filter we do not decode (LZW alone, an old file's): left to MuPDF
    if plan == _REFUSE or len(plan[1]) != 1 or plan[0]:
        return float("inf")
    # a declared length is a hint, never trusted below zero (a negative one would hide a bomb)
    raw_len = length if length is not None and length > 0 else len(doc.xref_stream_raw(xref) or b"")
    return raw_len * _FLATE_RATIO + 1024


# A content stream's dictionary as MuPDF prints it, when it is flat (no nested dictionary or
# string, no name value that could pose as a key): its /Filter and a direct /Length are read
# from that one string. One xref_object call costs about a sixth of the two xref_get_key calls
# it replaces, and a born-digital page can carry dozens of content streams (2.7 -> 0.7 ms a
# page on bench_textlayer's synthetic pages). Anything else takes MuPDF's own lookups.
_FILTER_KEY = re.compile(r"/Filter(?=[\s/\[])\s*(/[^\s/\[\]<>()]+|\[[^\]]*\]|\d+\s+\d+\s+R|null)")
_LENGTH_KEY = re.compile(r"/Length\s+([-+]?\d+)(?!\d)(?!\s+\d+\s+R)")


# The dictionary nearly every content stream has, as MuPDF prints it: one Flate layer and a
# direct length, in either order. Matched whole, it needs none of `_stream_keys`'s checks (a
# page of 50 streams: 0.66 -> 0.4 ms).
_PLAIN_FLATE = re.compile(r"<</Filter/FlateDecode/Length (\d+)>>|<</Length (\d+)/Filter/FlateDecode>>")


def _stream_keys(doc: pymupdf.Document, xref: int, text: str | None = None) -> tuple[list[str] | None, int | None]:
    """(filters, declared length or None) of a stream: `_filters` and /Length in one lookup
    (`text`: the stream's dictionary as `xref_object(compressed=True)` prints it, if read)."""
    if text is None:
        try:
            text = doc.xref_object(xref, compressed=True)
        except Exception:  # noqa: BLE001 - a broken object: the slow path reports what it can
            text = ""
    body = text.strip()
    if (not (body.startswith("<<") and body.endswith(">>")) or body.count("<<") != 1 or "(" in body
            or body.count("/Filter") > 1 or body.count("/Length") > 1):  # a name value could pose as a key
        kind, value = doc.xref_get_key(xref, "Length")
        return _filters(doc, xref), int(value) if kind == "int" else None
    m = _FILTER_KEY.search(body)
    if m is None and "/Filter" in body:  # an entry this parser does not know: ask MuPDF
        filters = _filters(doc, xref)
    elif m is None or m.group(1) == "null":
        filters = []
    elif m.group(1).endswith("R"):
        filters = _filters(doc, xref)  # an indirect filter entry
    elif m.group(1).startswith("["):
        filters = re.findall(r"/[^\s/\[\]<>()]+", m.group(1))
    else:
        filters = [m.group(1)]
    n = _LENGTH_KEY.search(body)
    return filters, int(n.group(1)) if n else None


# Decoding plan of a filter chain: (armour decoders applied to the raw bytes, Flate layers after
# them); _REFUSE for a chain that nests a compression we cannot measure; None: not measured.
_ARMOUR = {"/ASCIIHexDecode": "hex", "/AHx": "hex", "/ASCII85Decode": "a85", "/A85": "a85"}
_REFUSE = ("refuse", [])


def _plan(filters: list[str] | None):
    if filters is None:
        return _REFUSE  # an unreadable filter entry on a content stream: no honest file has one
    if not filters:
        return ((), [None])  # unfiltered: its size is its length
    i = 0
    while i < len(filters) and filters[i] in _ARMOUR:
        i += 1
    armour, rest = tuple(_ARMOUR[f] for f in filters[:i]), filters[i:]
    flate = 0
    while flate < len(rest) and rest[flate] in _FLATE:
        flate += 1
    tail = rest[flate:]
    if all(f in _ARMOUR for f in tail):  # armour after Flate only shrinks what Flate made: measure before it
        return (armour, [None] * flate) if flate else ((), [None])
    if flate or len(filters) > 1:
        return _REFUSE  # LZW, RunLength or an unknown filter nested with another compression
    return None


def _content_xrefs(doc: pymupdf.Document, page: pymupdf.Page) -> list[int]:
    """`page.get_contents()`, from the /Contents entry as MuPDF prints it when that is a direct
    array or one reference (half the cost on a page with many content streams: one call, not a
    Python call per element); an indirect array or anything else takes `get_contents()`."""
    kind, value = doc.xref_get_key(page.xref, "Contents")
    if kind == "array":
        refs = _REF_NUM.findall(value)
        if len(refs) == value.count("R"):
            return [int(x) for x in refs]
    elif kind == "xref" and doc.xref_is_stream(int(value.split()[0])):
        return [int(value.split()[0])]
    elif kind == "null":
        return []
    return list(page.get_contents())


_REF_NUM = re.compile(r"(\d+)\s+\d+\s+R")


def _form_xrefs(doc: pymupdf.Document, page_xref: int) -> list[int]:
    """The form XObjects named in the page's own resources (one level: PyMuPDF's recursive
    get_xobjects() costs a third of a millisecond a page in Python)."""
    try:
        kind, value = doc.xref_get_key(page_xref, "Resources/XObject")
        if kind not in ("dict", "xref"):
            return []
        if kind == "xref":
            value = doc.xref_object(int(value.split()[0]), compressed=True)
        refs = [int(x) for x in _REF.findall(value)]
        return [x for x in refs if doc.xref_get_key(x, "Subtype") == ("name", "/Form")]
    except Exception:  # noqa: BLE001 - a broken resource dictionary: measure the contents alone
        return []


def _filters(doc: pymupdf.Document, xref: int) -> list[str] | None:
    kind, value = doc.xref_get_key(xref, "Filter")
    if kind == "xref":  # an indirect filter entry: read the object it points to
        try:
            value, kind = doc.xref_object(int(value.split()[0]), compressed=True), "array"
        except Exception:  # noqa: BLE001
            return None
    if kind == "null":
        return []
    if kind == "name":
        return [value]
    if kind == "array":
        return re.findall(r"/[^\s/\[\]<>()]+", value)
    return None


def _decoded_size(doc: pymupdf.Document, xref: int, filters: list[str] | None, cap: int) -> int:
    """Bytes the stream decodes to, counting stops past `cap` (a chain we must refuse counts as
    past it); 0 when it is not measured."""
    plan = _plan(filters)
    if plan is None:
        return 0
    if plan == _REFUSE:
        return cap + 1
    armour, layers = plan
    try:
        raw = doc.xref_stream_raw(xref) or b""
        for kind in armour:  # ASCII armour never grows the data: decoded whole, on the file's own bytes
            raw = _unarmour(raw, kind)
    except Exception:  # noqa: BLE001 - not a stream, or armour MuPDF will call broken: it reports it
        return 0
    if layers == [None] and not armour and filters == []:
        return len(raw)
    chunks: Iterable[bytes] = (raw,)
    for _ in layers:
        chunks = _inflate(chunks)
    total = 0
    try:
        for chunk in chunks:
            total += len(chunk)
            if total > cap:
                break
    except zlib.error:
        pass  # broken data: MuPDF decodes what it can and says so
    return total


def _unarmour(data: bytes, kind: str) -> bytes:
    import base64
    import binascii

    if kind == "hex":
        hexdigits = re.sub(rb"[^0-9A-Fa-f]", b"", data.split(b">", 1)[0])
        return binascii.unhexlify(hexdigits + b"0" * (len(hexdigits) % 2))
    body = data.split(b"~>", 1)[0]
    body = re.sub(rb"\s", b"", body[2:] if body.startswith(b"<~") else body)
    return base64.a85decode(body)


def _inflate(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Inflate a stream of chunks lazily, at most _CHUNK bytes of output at a time."""
    d = zlib.decompressobj()
    for data in chunks:
        while data and not d.eof:
            out = d.decompress(data, _CHUNK)
            if out:
                yield out
            elif d.unconsumed_tail == data:  # no progress: never spin
                return
            data = d.unconsumed_tail
        if d.eof:
            return
