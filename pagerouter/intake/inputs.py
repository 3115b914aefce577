"""Opening inputs: PDFs and page images (PNG, JPEG, TIFF incl. multi-page, BMP, GIF, WebP).

Everything is opened as a PyMuPDF document. Images are converted to PDF pages in memory, so
every later stage sees one kind of page. If PyMuPDF cannot open a PDF, pypdf gets a try (it
tolerates some broken cross-reference tables and streams differently) and its rewrite is
handed back to PyMuPDF. Every failure is an `InputError` whose message names the file (and
page): callers print it as one line, never a traceback.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from ..common.pagetext import MUPDF_LOCK

logging.getLogger("pypdf").setLevel(logging.ERROR)  # its recoveries are ours to report, in one line

pymupdf.TOOLS.mupdf_display_errors(False)  # MuPDF's own stderr chatter; we report errors ourselves
pymupdf.TOOLS.mupdf_display_warnings(False)

_IMAGE_MAGIC: list[tuple[bytes, str]] = [
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"BM", "bmp"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
]


class InputError(Exception):
    """A clear, one-line problem with an input file (or one of its pages)."""

    def __init__(self, source: str, message: str, page: int | None = None):
        self.source, self.page, self.message = source, page, message
        where = f"{source}: page {page}" if page is not None else source
        super().__init__(f"{where}: {message}")


@dataclass
class SourceDocument:
    """An opened input. In this process `doc` is the PyMuPDF document; opened in an isolation
    worker (`pagerouter.isolation`) `doc` is None and the worker holds it, found by `digest`,
    re-opened from `data` by a fresh worker."""

    name: str  # what error messages and the output call the input
    doc: pymupdf.Document | None
    kind: str  # "pdf" or "image"
    opened_with: str  # "pymupdf" or "pypdf" (repaired)
    open_warnings: str = ""  # MuPDF warnings raised while decoding an image input (e.g. truncated)
    pages: int = 0  # the page count, when `doc` lives in a worker
    data: bytes | None = field(default=None, repr=False)  # the input's bytes, when `doc` lives in a worker
    digest: str = ""  # sha256 of `data` and the open's serial number: the worker's key for this open
    password: str | None = field(default=None, repr=False)
    on_close: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def page_count(self) -> int:
        return self.doc.page_count if self.doc is not None else self.pages

    def close(self) -> None:
        if self.doc is not None:
            self.doc.close()
        if self.on_close is not None:
            self.on_close, hook = None, self.on_close
            hook()


def read_input(path: str | Path, name: str | None = None) -> bytes:
    """A file's bytes, or an InputError naming it (missing, a directory, unreadable)."""
    p, name = Path(path), name or str(path)
    if not p.exists():
        raise InputError(name, "no such file")
    if p.is_dir():
        raise InputError(name, "is a directory, not a file")
    try:
        return p.read_bytes()
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None


def sniff_kind(data: bytes) -> str | None:
    """`pdf`, an image type, or None. PDFs may have junk before `%PDF` (allowed: first 1 KiB)."""
    if b"%PDF" in data[:1024]:
        return "pdf"
    for magic, kind in _IMAGE_MAGIC:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def open_source(
    path: str | Path | None = None,
    *,
    data: bytes | None = None,
    name: str | None = None,
    password: str | None = None,
) -> SourceDocument:
    """Open a file path or raw bytes as a SourceDocument, or raise InputError."""
    if data is None:
        if path is None:
            raise ValueError("open_source needs a path or data")
        name = name or str(path)
        data = read_input(path, name)
    name = name or "-"
    if not data:
        raise InputError(name, "empty file (0 bytes)")
    kind = sniff_kind(data)
    if kind is None:
        raise InputError(name, "not a PDF or a supported image (PNG, JPEG, TIFF, BMP, GIF, WebP)")
    with MUPDF_LOCK:
        if kind != "pdf":
            return _open_image(name, data, kind)
        try:
            return _open_pdf(name, data, password)
        except (RuntimeError, ValueError) as exc:  # e.g. a page tree MuPDF cannot count ("Invalid number of pages")
            raise InputError(name, f"corrupt PDF (PyMuPDF: {_short(exc)})") from None


def _webp_as_png(data: bytes) -> bytes:
    """PNG bytes of a WebP's first frame. PyMuPDF's wheels carry no WebP decoder ("Failed to open
    file as type webp"); Pillow, already a dependency, has one. An animated WebP is read as its
    first frame: a page picture, not a document."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im.seek(0)
        out = io.BytesIO()
        im.convert("RGBA" if im.mode in ("RGBA", "LA", "P") else "RGB").save(out, "PNG")
        return out.getvalue()


def _open_image(name: str, data: bytes, kind: str) -> SourceDocument:
    pymupdf.TOOLS.reset_mupdf_warnings()
    img = None
    try:
        if kind == "webp":
            data, kind = _webp_as_png(data), "png"
        img = pymupdf.open(stream=data, filetype=kind)
        pdf = pymupdf.open("pdf", img.convert_to_pdf())
    except Exception as exc:  # noqa: BLE001 - any decoder failure is a bad input
        raise InputError(name, f"unreadable {kind.upper()} image: {_short(exc)}") from None
    finally:
        if img is not None:
            img.close()
    if pdf.page_count == 0:
        pdf.close()
        raise InputError(name, f"{kind.upper()} image has no frames")
    # A truncated image decodes partially with only a warning: keep it for the pages' damage check.
    warnings = pymupdf.TOOLS.mupdf_warnings()
    return SourceDocument(name=name, doc=pdf, kind="image", opened_with="pymupdf", open_warnings=warnings)


def _open_pdf(name: str, data: bytes, password: str | None) -> SourceDocument:
    opened_with = "pymupdf"
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as first:  # noqa: BLE001
        doc = _repair_with_pypdf(data, password)
        if doc is None:
            raise InputError(name, f"corrupt or truncated PDF (PyMuPDF: {_short(first)}; pypdf could not read it either)") from None
        opened_with = "pypdf"
    if doc.needs_pass:
        if not password:
            doc.close()
            raise InputError(name, "encrypted PDF: a password is needed (--password)")
        if not doc.authenticate(password):
            doc.close()
            raise InputError(name, "encrypted PDF: the password is wrong")
    if doc.page_count == 0:
        # A file whose page tree PyMuPDF can't find may still be readable by pypdf.
        doc.close()
        repaired = _repair_with_pypdf(data, password)
        if repaired is not None and repaired.page_count > 0:
            doc, opened_with = repaired, "pypdf"
        else:
            if repaired is not None:
                repaired.close()
            raise InputError(name, "PDF has no pages")
    return SourceDocument(name=name, doc=doc, kind="pdf", opened_with=opened_with)


def _repair_with_pypdf(data: bytes, password: str | None) -> pymupdf.Document | None:
    """Let pypdf parse what PyMuPDF could not, write a clean copy, and open that."""
    try:
        import pypdf

        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            reader.decrypt(password or "")
        writer = pypdf.PdfWriter()
        for page in reader.pages:
            writer.add_page(page)
        out = io.BytesIO()
        writer.write(out)
        doc = pymupdf.open(stream=out.getvalue(), filetype="pdf")
        return doc
    except Exception:  # noqa: BLE001 - any failure means "pypdf can't help either"
        return None


_RANGE = re.compile(r"^\s*(\d*)\s*(?:(-)\s*(\d*))?\s*$")


class PageSelectionError(InputError):
    """A page selection that is not one (`x`, `0`, `5-3`) or names pages the document lacks."""

    code = "bad_pages"


def is_page_selection(spec: str) -> bool:
    """Whether `spec` reads as a page selection like `1-3,7,10-`: the syntax alone, the ranges
    unchecked (a request whose selection is not one is refused at once; one that is, but names
    page 0 or a page past the end, is the document's error, found when it is opened)."""
    return all((m := _RANGE.match(part)) is not None and any(m.groups()) for part in spec.split(","))


def page_ranges(spec: str, source: str = "-") -> Iterator[tuple[str, int, int | None]]:
    """Each part of a selection like `1-3,7,10-` as (part, first, last), `last` None for "to the
    end": the syntax alone, read part by part (`parse_pages` checks each against a document;
    a caller without one, the ingress deciding whether a request is small, counts them)."""
    for part in spec.split(","):
        m = _RANGE.match(part)
        if not m or (not m.group(1) and not m.group(3) and not m.group(2)):
            raise PageSelectionError(source, f"bad page selection {spec!r} (use e.g. 1-3,7)")
        lo = int(m.group(1)) if m.group(1) else 1
        hi = (int(m.group(3)) if m.group(3) else None) if m.group(2) else lo
        if lo < 1 or (hi is not None and hi < lo):
            raise PageSelectionError(source, f"bad page range {part.strip()!r}")
        yield part, lo, hi


def parse_pages(spec: str | None, page_count: int, source: str = "-") -> list[int]:
    """Parse `1-3,7,10-` into sorted unique 1-based page numbers, checked against the document."""
    if spec is None or not spec.strip():
        return list(range(1, page_count + 1))
    pages: set[int] = set()
    for part, lo, last in page_ranges(spec, source):
        hi = page_count if last is None else last
        if hi < lo:  # `5-` of a 3-page document
            raise PageSelectionError(source, f"bad page range {part.strip()!r}")
        if lo > page_count:
            raise PageSelectionError(source, f"page {lo} requested but the document has {page_count} pages")
        pages.update(range(lo, min(hi, page_count) + 1))
    return sorted(pages)


class PageLimitError(InputError):
    """More pages asked for than `limits.max_pages` allows (HTTP 413, gRPC RESOURCE_EXHAUSTED)."""

    code = "too_many_pages"


def pages_text(numbers: list[int]) -> str:
    """`3-5,9` for [3, 4, 5, 9]: the selection `parse_pages` reads back as exactly these pages."""
    parts: list[str] = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        parts.append(str(numbers[i]) if i == j else f"{numbers[i]}-{numbers[j]}")
        i = j + 1
    return ",".join(parts)


def check_page_count(numbers: list[int], max_pages: int, source: str = "-") -> list[int]:
    """`numbers`, or PageLimitError when there are more than `max_pages` of them (before any page is read)."""
    if len(numbers) > max_pages:
        raise PageLimitError(
            source,
            f"{len(numbers)} pages to convert, more than the limit of {max_pages} per request (limits.max_pages); "
            "select fewer pages",
        )
    return numbers


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]
