"""The in-process converter: open a document, walk its pages, read, escalate, render.

`pagerouter.convert(source, ...)` is this package, called: a one-call conversion for scripts and
notebooks (`convert` below). The package is named for its stage like every other one, and the
package-level call is the short name users expect, so the module itself is made callable rather
than a function shadowing the package (a function bound to `pagerouter.convert` would be
replaced by the package as soon as anything imported `pagerouter.convert.converter`).
Importing this package stays cheap: the converter is imported on the first call.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

if TYPE_CHECKING:
    from ..config import PagerouterConfig
    from ..model import Document


def convert(
    source: str | os.PathLike[str] | bytes | bytearray | BinaryIO,
    *,
    name: str | None = None,
    pages: str | None = None,
    password: str | None = None,
    ocr: Literal["auto", "force", "off"] | None = None,
    languages: list[str] | str | None = None,
    images: bool | None = None,
    images_dir: str | os.PathLike[str] | None = None,
    wait: Literal["interactive", "bulk"] | None = None,
    escalation_wait_s: float | None = None,
    progress: Any = None,
    config: PagerouterConfig | str | os.PathLike[str] | None = None,
) -> Document:
    """Convert one PDF or page image to a `Document` with a converter of its own, closed after the
    call (for many files, keep one `pagerouter.convert.converter.Converter` open instead: its
    engines and worker processes start once). Works in scripts, in a notebook cell and in an async
    app's code (there it blocks the loop for the call; `await Converter.convert_async` does not).

        doc = pagerouter.convert("report.pdf", pages="1-3", ocr="off")
        print(doc.to_markdown())

    `source`: a path, a URL fsspec opens (`s3://bucket/a.pdf`, `https://...`, `file:///...`; the
    scheme's fsspec package, e.g. s3fs, must be installed), the document's bytes, or a binary file
    object (read whole, not closed);
    `name` names bytes and file objects in messages and as `Document.source`. `pages`: a
    selection like "1-3,7" (1-based). `ocr`: auto (triage decides), force (OCR every page) or
    off (text layers only). `languages`: Tesseract packs ("eng+deu" or a list). `images`:
    figure blocks carry base64 PNG in the JSON; `images_dir`: figures saved as PNG files there.
    `wait` and `escalation_wait_s`: how long flagged pages wait for the escalation tier.
    `progress(page, done, total)` is called after each page. `config`: a `PagerouterConfig` or
    the path of a pagerouter YAML config (default: the built-in defaults).

    Raises `pagerouter.intake.inputs.InputError` for an input that cannot be opened, and
    ValueError (`OptionError`) for a bad option."""
    from ..config import PagerouterConfig, load_config
    from .converter import Converter

    cfg = config if isinstance(config, PagerouterConfig) else load_config(None if config is None else Path(config))
    with Converter(cfg) as conv:
        return conv.convert(
            source, name=name, pages=pages, password=password, ocr=ocr, languages=languages, images=images,
            images_dir=None if images_dir is None else Path(images_dir), wait=wait,
            escalation_wait_s=escalation_wait_s, progress=progress,
        )


class _CallableModule(types.ModuleType):
    """This package's module type: calling it calls `convert` (help() and notebooks show its signature)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Document:
        return convert(*args, **kwargs)

    @property
    def __signature__(self):
        import inspect

        return inspect.signature(convert)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["convert"]
