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


def local_ocr_calls(cfg: PagerouterConfig) -> OcrCalls | None:
    """Build (once per config) the OCR stage calls over in-process engines; None if OCR is off."""
    if not cfg.ocr.enabled:
        return None
    key = cfg.ocr.model_dump_json()
    if key in _ENGINE_CACHE:
        return _ENGINE_CACHE[key]
    from .ocr.api import build_layout_engine, build_small_reader
    from .ocr.escalate import build_escalator

    layout = build_layout_engine(cfg.ocr)
    reader = build_small_reader(cfg.ocr)
    escalator = build_escalator(cfg.ocr) if cfg.ocr.escalation.enabled else None

    async def layout_call(task):
        return layout.detect_batch([task])[0]

    async def read_call(task, lay):
        return reader.read_batch([task], [lay])[0]

    async def escalate_call(task, first):
        return await asyncio.to_thread(escalator.escalate, task, first)

    calls = OcrCalls(
        layout=layout_call,
        read=read_call,
        escalate=escalate_call if escalator is not None else None,
        engines={e.name: e.version for e in (layout, reader, escalator) if e is not None},
    )
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
    if calls is not None:
        doc.engines.update(calls.engines)
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
