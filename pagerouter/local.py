"""Run the page graph in this process with the engines called directly.

Used by tests and benchmarks of the pure page logic; the CLI runs the same `convert_pages`
orchestration (see pagerouter.pipeline) so both produce identical documents.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from .config import PagerouterConfig
from .inputs import SourceDocument, open_source, parse_pages
from .model import Document
from .pipeline import OcrCalls, convert_pages, new_document, save_figures, triage_outcomes

_ENGINE_CACHE: dict[str, OcrCalls] = {}


class _LazyOcr:
    """Engines are built on the first OCR page, so a born-digital run never loads a model."""

    def __init__(self, cfg: PagerouterConfig):
        self.cfg = cfg
        self.ocr = None

    def get(self):
        if self.ocr is None:
            from .ocr.api import LocalOcr

            self.ocr = LocalOcr(self.cfg.ocr)
        return self.ocr

    def versions(self) -> dict[str, str]:
        return {e.name: e.version for e in self.ocr.engines} if self.ocr is not None else {}


def local_ocr_calls(cfg: PagerouterConfig) -> OcrCalls | None:
    """OCR stage calls over in-process engines (cached per OCR config); None if OCR is off."""
    if not cfg.ocr.enabled:
        return None
    key = cfg.ocr.model_dump_json()
    if key in _ENGINE_CACHE:
        return _ENGINE_CACHE[key]
    lazy = _LazyOcr(cfg)

    async def layout_call(task):
        return await lazy.get().calls().layout(task)

    async def read_call(task, lay):
        return await lazy.get().calls().read(task, lay)

    async def escalate_call(task, first):
        esc = lazy.get().calls().escalate
        return first if esc is None else await esc(task, first)

    calls = OcrCalls(
        layout=layout_call,
        read=read_call,
        escalate=escalate_call if cfg.ocr.escalation.enabled else None,
    )
    calls.lazy = lazy  # type: ignore[attr-defined]
    _ENGINE_CACHE[key] = calls
    return calls


async def convert_source_async(
    src: SourceDocument,
    cfg: PagerouterConfig,
    numbers: list[int],
    *,
    images_dir: Path | None = None,
    on_page=None,
) -> Document:
    calls = local_ocr_calls(cfg)
    doc = new_document(src)
    outcomes = triage_outcomes(src, numbers, cfg)
    async for page in convert_pages(outcomes, src.name, cfg, calls, concurrency=cfg.serve.ocr_concurrency):
        if images_dir is not None and page.status != "failed":
            save_figures(src, page, images_dir)
        doc.pages.append(page)
        if on_page is not None:
            on_page(page)
    import pymupdf

    doc.engines["pymupdf"] = pymupdf.VersionBind
    if calls is not None:
        lazy = getattr(calls, "lazy", None)
        doc.engines.update(lazy.versions() if lazy is not None else calls.engines)
    return doc


def convert_file(
    path: str | Path,
    cfg: PagerouterConfig | None = None,
    *,
    pages: str | None = None,
    password: str | None = None,
    images_dir: Path | None = None,
) -> Document:
    """Convert one file in-process; raises InputError for unreadable input."""
    cfg = cfg or PagerouterConfig()
    src = open_source(path, password=password)
    try:
        numbers = parse_pages(pages, src.page_count, src.name)
        return asyncio.run(convert_source_async(src, cfg, numbers, images_dir=images_dir))
    finally:
        src.close()
