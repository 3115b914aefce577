"""A hostile-input corpus, written at test time (small on disk, hostile when read).

`build_corpus(dir)` writes every case and returns {case name: path}. The cases (issue 11):

- `stream_bomb.pdf`: a page whose content stream is flate inside flate: ~10 KB on disk, 1 GiB of
  content-stream operators once decoded (a decompression bomb aimed at the text layer and the renderer).
- `pages_10000.pdf`: 10,000 pages, all drawing one shared content stream (~1 MB).
- `page_200in.pdf`: one 200 x 200 inch page (14,400 pt a side) with a line of text.
- `image_bomb.pdf`: a page drawing a 100,000 x 100,000 RGB image (30 GB declared) whose flate data is a
  few KB.
- `png_bomb.png`: a PNG declaring 100,000 x 100,000 pixels, a few KB on disk.
- `encrypted.pdf`: a text page behind a user password.
- `javascript.pdf`: a text page with /OpenAction JavaScript (never run; the text is read).
- `broken_xref.pdf`: a text page whose xref offsets all point to the wrong bytes.
- `cyclic_tree.pdf`: a page tree whose /Kids include its own ancestor.
- `zero.pdf` (0 bytes), `random.pdf` (64 KiB of random bytes), `png_named.pdf` (a PNG page scan).

Each case builds in milliseconds; the bombs are built from raw PDF objects so nothing here ever
decodes them. `GOOD_TEXT` is what `good.pdf` (the well-behaved file sent alongside) says.
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path

import pymupdf

from pagerouter.bench import synth

GOOD_TEXT = "The good document arrives intact while hostile files are refused around it."
JS_TEXT = "This page carries JavaScript that must never run; its text is still read."
XREF_TEXT = "A page whose cross reference table points at the wrong bytes."
BOMB_DECODED_BYTES = 1 << 30
IMAGE_SIDE = 100_000


def _raw_pdf(objects: list[bytes], root: int = 1, trailer_extra: bytes = b"", xref_shift: int = 0) -> bytes:
    """A PDF from numbered object bodies (object i+1 = objects[i]) with a correct xref table, or one
    whose offsets are all off by `xref_shift` bytes."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % (off + xref_shift))
    out.write(b"trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objects) + 1, root, trailer_extra, xref))
    return out.getvalue()


def _stream(dict_body: bytes, data: bytes) -> bytes:
    return b"<< " + dict_body + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _deflate_spaces(n: int, chunk: int = 1 << 20) -> bytes:
    """zlib data of `n` bytes of spaces (MuPDF lexes them as whitespace: maximal decode work), built in
    milliseconds: after a full flush the deflate dictionary is reset, so every further 1 MiB chunk
    compresses to the same bytes and is repeated instead of compressed again."""
    block = b" " * chunk
    z = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate; the zlib header and checksum are added here
    first = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    steady = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    assert z.compress(block) + z.flush(zlib.Z_FULL_FLUSH) == steady
    count = n // chunk
    adler = 1
    for _ in range(count):
        adler = zlib.adler32(block, adler)
    raw = first + steady * (count - 1) + z.flush(zlib.Z_FINISH)
    return b"\x78\xda" + raw + struct.pack(">I", adler)


_BOMB_CACHE: dict[int, bytes] = {}


def stream_bomb(decoded: int = BOMB_DECODED_BYTES) -> bytes:
    if decoded not in _BOMB_CACHE:
        inner = _deflate_spaces(decoded)  # ~1 MB for 1 GiB
        outer = zlib.compress(inner, 9)  # flate of flate: ~10 KB
        content = _stream(b"/Filter [/FlateDecode /FlateDecode]", outer)
        _BOMB_CACHE[decoded] = _raw_pdf([
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << >> >>",
            content,
        ])
    return _BOMB_CACHE[decoded]


def many_pages(n: int = 10_000) -> bytes:
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    content = _stream(b"", b"BT /F1 12 Tf 72 720 Td (One page of ten thousand.) Tj ET")
    first_page = 5
    kids = b" ".join(b"%d 0 R" % (first_page + i) for i in range(n))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n,
            content, font]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>"
    objs.extend([page] * n)
    return _raw_pdf(objs)


def huge_page(inches: float = 200) -> bytes:
    doc = pymupdf.open()
    side = inches * 72
    synth.add_text_page(doc, ["A poster page two hundred inches on each side."], size=(side, side))
    data = doc.tobytes()
    doc.close()
    return data


def image_bomb_pdf(side: int = IMAGE_SIDE) -> bytes:
    data = zlib.compress(b"\x00" * (1 << 20), 9)  # 1 MiB of the declared 30 GB; MuPDF must not allocate it all
    image = _stream(b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
                    b"/BitsPerComponent 8 /Filter /FlateDecode" % (side, side), data)
    content = _stream(b"", b"q 612 0 0 792 0 0 cm /Im1 Do Q")
    return _raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >> >>",
        content,
        image,
    ])


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def image_bomb_png(side: int = IMAGE_SIDE) -> bytes:
    """A PNG declaring side x side RGB pixels; its IDAT holds a few rows (the rest is missing)."""
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    rows = zlib.compress(b"\x00" * ((side * 3 + 1) * 4), 9)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", rows) + _png_chunk(b"IEND", b"")


def _text_pdf(lines: list[str]) -> pymupdf.Document:
    doc = pymupdf.open()
    synth.add_text_page(doc, lines)
    return doc


def encrypted() -> bytes:
    doc = _text_pdf(["A secret page that only the password opens."])
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user-secret", owner_pw="owner-secret")
    doc.close()
    return data


def javascript() -> bytes:
    doc = _text_pdf([JS_TEXT])
    xref = doc.get_new_xref()
    doc.update_object(xref, "<< /Type /Action /S /JavaScript /JS (app.alert('pwned'); while (true) {}) >>")
    doc.xref_set_key(doc.pdf_catalog(), "OpenAction", f"{xref} 0 R")
    data = doc.tobytes()
    doc.close()
    return data


def broken_xref() -> bytes:
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    content = _stream(b"", b"BT /F1 12 Tf 72 720 Td (" + XREF_TEXT.encode() + b") Tj ET")
    return _raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        content,
        font,
    ], xref_shift=7)


def cyclic_tree() -> bytes:
    # 2 (root Pages) -> 3 (Pages) -> [4 (Page), 2 (the root again)]
    content = _stream(b"", b"BT /F1 12 Tf 72 720 Td (Inside a cycle.) Tj ET")
    return _raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 2 >>",
        b"<< /Type /Pages /Parent 2 0 R /Kids [4 0 R 2 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 3 0 R /MediaBox [0 0 612 792] /Contents 5 0 R >>",
        content,
    ])


def png_page() -> bytes:
    doc = pymupdf.open()
    synth.add_scanned_page(doc, ["A scanned page saved as PNG"], size=(320.0, 220.0), fontsize=14)
    png = doc[0].get_pixmap(dpi=72).tobytes("png")
    doc.close()
    return png


def good_pdf() -> bytes:
    doc = _text_pdf([GOOD_TEXT])
    data = doc.tobytes()
    doc.close()
    return data


CASES = {
    "stream_bomb.pdf": stream_bomb,
    "pages_10000.pdf": many_pages,
    "page_200in.pdf": huge_page,
    "image_bomb.pdf": image_bomb_pdf,
    "png_bomb.png": image_bomb_png,
    "encrypted.pdf": encrypted,
    "javascript.pdf": javascript,
    "broken_xref.pdf": broken_xref,
    "cyclic_tree.pdf": cyclic_tree,
    "zero.pdf": lambda: b"",
    "random.pdf": lambda: os.urandom(64 * 1024),
    "png_named.pdf": png_page,
}


def build_corpus(d: Path) -> dict[str, Path]:
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, make in CASES.items():
        (d / name).write_bytes(make())
        out[name] = d / name
    (d / "good.pdf").write_bytes(good_pdf())
    return out


# -- memory of a process tree (the test's and the benchmark's RSS bound) ---------------------
def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def descendants(pid: int, with_parents: bool = False) -> list:
    """`pid` and every process below it (as (pid, parent pid) pairs with `with_parents`)."""
    kids, out, todo = _children(), [], [(pid, 0)]
    while todo:
        p, parent = todo.pop()
        out.append((p, parent) if with_parents else p)
        todo.extend((k, p) for k in kids.get(p, []))
    return out


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""
