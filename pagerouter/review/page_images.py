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
import logging
import os
from pathlib import Path
from urllib.parse import quote

from ..isolation import PageWork
from ..model import Document, Page

log = logging.getLogger(__name__)

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


WHOLE_PAGE = (0.0, 0.0, 1e6, 1e6)
"""A clip the renderer cuts to the page's rectangle: the whole page, as displayed."""


def png_to_jpeg(png: bytes, rotation: int) -> bytes:
    """A page picture rendered as PNG (by an isolation worker) as JPEG, turned clockwise by
    `rotation` degrees. Pillow decodes a PNG MuPDF wrote for us, not the untrusted file."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        img = img.convert("RGB")
        if rotation % 360:
            img = img.rotate(-(rotation % 360), expand=True)
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=JPEG_QUALITY, optimize=True)
    return buf.getvalue()


def _render(work: PageWork, data: bytes, name: str, pages: list[Page], dpi: int, password: str | None):
    """(page number, JPEG bytes) for each of `pages` the source has. MuPDF runs where `work`
    runs it (an isolation worker when isolation is on: the source is untrusted, and its crash or
    hang costs a worker, not this process); a page that does not render is left out."""
    src = work.open(data, name, password)
    try:
        for p in pages:
            if not 1 <= p.number <= src.page_count:
                continue
            try:
                pngs = work.figure_pngs(src, p.number, [WHOLE_PAGE], dpi)
            except Exception as exc:  # noqa: BLE001 - one page without its picture, never a lost review
                log.warning("%s: page %d: no page image: %s", name, p.number, exc)
                continue
            if pngs and pngs[0]:
                yield p.number, png_to_jpeg(pngs[0], p.rotation)
    finally:
        src.close()


def write_page_images(work: PageWork, source: Path, doc: Document, rel: str, images_root: Path,
                      dpi: int = DEFAULT_DPI, password: str | None = None, overwrite: bool = False) -> dict[int, Path]:
    """Render the converted pages of `doc` from its `source` file into `images_root`; pages
    already there are kept unless `overwrite`. Returns {page number: image path}."""
    todo = [p for p in doc.pages if overwrite or not image_path(images_root, rel, p.number).is_file()]
    if todo:
        source = Path(source)
        for number, jpeg in _render(work, source.read_bytes(), source.name, todo, dpi, password):
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


def embedded_images(work: PageWork, data: bytes, doc: Document, dpi: int = DEFAULT_DPI,
                    password: str | None = None, numbers: list[int] | None = None) -> dict[int, str]:
    """{page number: data URI} of the converted pages of `doc` (those in `numbers` when given),
    rendered from the input's bytes."""
    pages = doc.pages if numbers is None else [p for p in doc.pages if p.number in set(numbers)]
    return {n: "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
            for n, jpeg in _render(work, data, doc.source or "document", pages, dpi, password)}
