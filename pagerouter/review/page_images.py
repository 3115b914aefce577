"""Page pictures for the review: each converted page rendered once, at a modest DPI, as JPEG.

Files (the default) sit beside the review, `review-images/<document>/p0001.jpg`, so the HTML
stays small, opens fast and lazy-loads only the cards on screen, and the folder works from a
file:// URL or a bucket as it is. Data URIs (`embedded_images`) are for a page served alone
(the jobs endpoint), where no file can sit beside it.

The picture shows the page as its JSON's boxes see it: as displayed (after /Rotate), then
turned by the page's `rotation` (the orientation correction the reader applied).
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from urllib.parse import quote

from ..common.pagetext import MUPDF_LOCK
from ..intake.inputs import open_source
from ..model import Document, Page

DEFAULT_DPI = 72
IMAGES_DIR = "review-images"
JPEG_QUALITY = 70


def image_path(images_root: Path, rel: str, number: int) -> Path:
    """Where page `number` of the document written as `rel` (its output path, no suffix) goes."""
    return Path(images_root) / rel / f"p{number:04d}.jpg"


def image_url(html_dir: Path, path: Path) -> str:
    """`path` as a relative URL from the review's folder, every segment percent-encoded (a
    file name may hold `#`, `?` or spaces)."""
    rel = os.path.relpath(Path(path).resolve(), Path(html_dir).resolve())
    return "/".join(p if p == ".." else quote(p, safe="") for p in Path(rel).parts)


def page_jpeg(pdf_page, rotation: int, dpi: int = DEFAULT_DPI) -> bytes:
    """One page as a JPEG at `dpi`, turned clockwise by `rotation` degrees."""
    from PIL import Image

    with MUPDF_LOCK:
        pix = pdf_page.get_pixmap(dpi=dpi, alpha=False)
        img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
    if rotation % 360:
        img = img.rotate(-(rotation % 360), expand=True)
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=JPEG_QUALITY, optimize=True)
    return buf.getvalue()


def _render(source: Path | None, data: bytes | None, pages: list[Page], dpi: int, password: str | None):
    """(page number, JPEG bytes) for each of `pages` the source has."""
    src = open_source(source, data=data, password=password)
    try:
        for p in pages:
            if src.doc is None or not 1 <= p.number <= src.page_count:
                continue
            with MUPDF_LOCK:
                pdf_page = src.doc.load_page(p.number - 1)
            yield p.number, page_jpeg(pdf_page, p.rotation, dpi)
    finally:
        src.close()


def write_page_images(source: Path, doc: Document, rel: str, images_root: Path, dpi: int = DEFAULT_DPI,
                      password: str | None = None, overwrite: bool = False) -> dict[int, Path]:
    """Render the converted pages of `doc` from its `source` file into `images_root`; pages
    already there are kept unless `overwrite`. Returns {page number: image path}."""
    todo = [p for p in doc.pages if overwrite or not image_path(images_root, rel, p.number).is_file()]
    if todo:
        for number, jpeg in _render(Path(source), None, todo, dpi, password):
            target = image_path(images_root, rel, number)
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".tmp")
            tmp.write_bytes(jpeg)
            tmp.replace(target)
    return {p.number: image_path(images_root, rel, p.number) for p in doc.pages
            if image_path(images_root, rel, p.number).is_file()}


def existing_page_images(doc: Document, rel: str, images_root: Path) -> dict[int, Path]:
    """The page images already rendered for `doc` (by `convert --review` or an earlier review)."""
    return {p.number: image_path(images_root, rel, p.number) for p in doc.pages
            if image_path(images_root, rel, p.number).is_file()}


def embedded_images(data: bytes, doc: Document, dpi: int = DEFAULT_DPI, password: str | None = None) -> dict[int, str]:
    """{page number: data URI} of the converted pages of `doc`, rendered from the input's bytes."""
    return {n: "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
            for n, jpeg in _render(None, data, doc.pages, dpi, password)}
