"""The one converter every in-process front end calls: the CLI, the tests and the benchmarks.

    conv = Converter(cfg)                        # engines are built lazily, once per converter
    doc = conv.convert("in.pdf", pages="1-3", progress=lambda page, done, total: ...)
    doc = conv.convert("archive.pdf", wait="bulk")   # flagged pages wait longer for escalation
    doc = conv.convert("scan.pdf", ocr="force", languages=["deu"], images=True)  # RequestOptions
    for page in conv.iter_pages("in.pdf"):       # pages stream in page order
        ...
    doc = await conv.convert_async(data, name="upload.pdf")   # async code: the caller's loop runs it

`convert` and `iter_pages` also work where an event loop is already running (a Jupyter cell, an
async app's handler): they then run the coroutines on a private loop in a worker thread.

It owns the engines (`engines.EngineSet`: one cache, built per `kind` on first use) and runs
the one orchestration of `pipeline.py`. The Serve deployments build the very same engines with
`engines.build_engine` and feed the same `pipeline.convert_pages`, so the served graph and
this converter produce identical documents. Each input is opened and walked by
`walk.walk_document`, the walk the served graph and the batch run read theirs with. MuPDF's
work on the input (open, triage, text layer, render for OCR, figure export) goes through
`isolation.PageWork`, in worker processes
unless `isolation.enabled: false`, so a crash or hang in MuPDF fails a page, not the caller;
`close()` (or `with Converter(...)`) stops the workers. No Ray import here or below.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import aclosing
from pathlib import Path
from typing import BinaryIO, Literal

import pymupdf

from ..config import PagerouterConfig
from ..flow.engines import EngineSet
from ..flow.escalation_wait import EscalationWait, resolve_escalation_wait
from ..intake.inputs import SourceDocument, read_input
from ..intake.remote import is_url, read_url
from ..isolation import InProcessPages, PageWork, page_work
from ..common.memory import release_free_memory
from ..model import Document, Page
from ..flow.figure_export import figure_problem
from ..flow.pipeline import convert_pages, ocr_flow
from ..flow.options import OcrMode, RequestOptions
from ..common.stages import OcrTask, Reading
from .walk import OpenedDocument, walk_document

Progress = Callable[[Page, int, int], None]
"""Called after each page: (page, pages done, pages in total)."""

Source = str | os.PathLike[str] | bytes | bytearray | BinaryIO
"""A path, the document's bytes, or a binary file object open for reading (read whole, not closed)."""

WaitMode = Literal["interactive", "bulk"]
"""How long flagged pages wait for the escalation tier (config `serve.escalation_timeout_s` or
`serve.escalation_timeout_bulk_s`)."""


class Converter:
    """PDFs and page images to `Document`s, in this process, with the configured engines."""

    def __init__(self, cfg: PagerouterConfig | None = None):
        self.cfg = cfg or PagerouterConfig()
        self.engines = EngineSet(self.cfg.ocr)
        # MuPDF's work on the inputs: worker processes unless `isolation.enabled: false`
        self.pages: PageWork = page_work(self.cfg)

    def close(self) -> None:
        """Stop the isolation workers and the engines now (workers also stop when the converter is
        collected; a VLM engine must be closed here, not at interpreter exit)."""
        try:
            self.engines.close()
        finally:
            self.pages.close()

    def warm(self) -> list[dict]:
        """Start the isolation workers and load in each what its first pages would load (the
        hidden-layer proof's recogniser), for a long-lived converter that should not make its
        first such page wait; each worker's answer. The OCR engines load on their first page."""
        return self.pages.warm()

    def __enter__(self) -> Converter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ walking
    @staticmethod
    def _input(source: Source | SourceDocument, name: str | None) -> tuple[bytes | SourceDocument, str]:
        """What `walk.walk_document` opens, and its name: a path is read here (`InputError` if it cannot be)."""
        if isinstance(source, SourceDocument):
            return source, source.name
        if isinstance(source, (bytes, bytearray)):
            return bytes(source), name or "-"
        if hasattr(source, "read"):  # a binary file object: its name when it has one (open(), not BytesIO)
            data = source.read()
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"{name or getattr(source, 'name', 'input')}: the file object must be opened in binary mode ('rb')")
            file_name = getattr(source, "name", None)
            return bytes(data), name or (os.fspath(file_name) if isinstance(file_name, (str, os.PathLike)) else "-")
        if is_url(source):  # s3://, https://, file://, ...: through fsspec
            return read_url(source, name), name or source
        name = name or os.fspath(source)
        return read_input(source, name), name

    def escalation_wait(self, wait: str | None = None, escalation_wait_s: float | None = None) -> EscalationWait:
        """The escalation wait of `wait` (interactive | bulk) and an optional explicit wait, capped
        at the mode's configured bound; raises ValueError for bad values."""
        return resolve_escalation_wait(self.cfg.serve, wait, escalation_wait_s)

    def _converted(
        self, outcomes: AsyncIterator, name: str, used: dict[str, str] | None, wait: EscalationWait | None,
        opts: RequestOptions,
    ) -> AsyncIterator[Page]:
        """The walk's triage outcomes through `pipeline.convert_pages` with this converter's engines."""
        calls = self.engines.calls(used)
        if calls is not None and wait is not None:
            calls.escalation_timeout_s, calls.escalation_wait = wait.seconds, wait.why
        in_flight = self.cfg.ocr.pages_in_flight_for(served=False)
        return convert_pages(
            outcomes, name, self.cfg, calls, concurrency=in_flight,
            languages=tuple(opts.languages or ()), images=opts.images,
        )

    async def _walk(
        self, source: Source | SourceDocument, name: str | None, password: str | None, pages: str | None,
        opts: RequestOptions, wait: EscalationWait, used: dict[str, str] | None,
    ) -> AsyncIterator[OpenedDocument | Page]:
        """`walk.walk_document` of one input, its pages converted: the document head, then each
        page in page order. A path is read first; an open document is walked and left open."""
        data, name = self._input(source, name)
        walk = walk_document(self.pages, data, max_pages=self.cfg.limits.max_pages, name=name, password=password,
                             pages=pages, ocr=opts.ocr, images=opts.images, open_off_loop=False)
        async with aclosing(walk):
            yield await anext(walk)
            async with aclosing(self._converted(walk, name, used, wait, opts)) as converted:
                async for page in converted:
                    yield page

    def options(self, **values) -> RequestOptions:
        """The validated options of one call (`OptionError`, a ValueError, names a bad one);
        the requested Tesseract packs must be installed."""
        opts = RequestOptions.from_fields({k: v for k, v in values.items() if v is not None})
        opts.check_languages()
        return opts

    async def convert_async(
        self,
        source: Source | SourceDocument,
        *,
        name: str | None = None,
        pages: str | None = None,
        password: str | None = None,
        images_dir: Path | None = None,
        progress: Progress | None = None,
        wait: WaitMode | None = None,
        escalation_wait_s: float | None = None,
        ocr: OcrMode | None = None,
        languages: list[str] | str | None = None,
        images: bool | None = None,
    ) -> Document:
        """Convert one input: a path, bytes or a binary file object (`name` names the last two in
        messages and as `Document.source`). `pages` is a selection like "1-3,7"; `images_dir` saves figure
        blocks as PNG files; `progress` is called after each page; `wait` (interactive, the
        default, or bulk) and `escalation_wait_s` bound how long flagged pages wait for the
        escalation tier; `ocr` (auto | force | off), `languages` (Tesseract packs) and `images`
        (figures as base64 PNG in the JSON) are the `RequestOptions` of that name. Raises
        `InputError`, or ValueError (`OptionError`) for a bad option."""
        opts = self.options(pages=pages, wait=wait, escalation_wait_s=escalation_wait_s, ocr=ocr,
                            languages=languages, images=images)
        escalation = self.escalation_wait(wait, escalation_wait_s)
        used: dict[str, str] = {}
        async with aclosing(self._walk(source, name, password, pages, opts, escalation, used)) as walk:
            head = await anext(walk)
            doc = head.document
            async for page in walk:
                if images_dir is not None and page.status != "failed":
                    save_figures(head.src, page, Path(images_dir), pages=self.pages)
                doc.pages.append(page)
                if progress is not None:
                    progress(page, len(doc.pages), len(head.numbers))
        doc.engines = {"pymupdf": pymupdf.VersionBind, **used}
        return doc

    def convert(
        self,
        source: Source | SourceDocument,
        *,
        name: str | None = None,
        pages: str | None = None,
        password: str | None = None,
        images_dir: Path | None = None,
        progress: Progress | None = None,
        wait: WaitMode | None = None,
        escalation_wait_s: float | None = None,
        ocr: OcrMode | None = None,
        languages: list[str] | str | None = None,
        images: bool | None = None,
    ) -> Document:
        """`convert_async` as a blocking call: scripts, the CLI, and also a notebook cell or an async
        app's code, where a loop is already running (the conversion then runs on a private loop in a
        worker thread, which also calls `progress`; async code that must not block its loop awaits
        `convert_async`). Options as in `convert_async`."""
        return _run(self.convert_async(
            source, name=name, pages=pages, password=password, images_dir=images_dir, progress=progress,
            wait=wait, escalation_wait_s=escalation_wait_s, ocr=ocr, languages=languages, images=images,
        ))

    def iter_pages(
        self, source: Source | SourceDocument, *, name: str | None = None, pages: str | None = None,
        password: str | None = None, wait: WaitMode | None = None, escalation_wait_s: float | None = None,
        ocr: OcrMode | None = None, languages: list[str] | str | None = None, images: bool | None = None,
    ) -> Iterator[Page]:
        """Pages one by one, in page order, with or without a running loop of the caller's. Closing the
        iterator early stops the conversion (pending OCR is cancelled). Options as in `convert_async`."""
        opts = self.options(pages=pages, wait=wait, escalation_wait_s=escalation_wait_s, ocr=ocr,
                            languages=languages, images=images)
        escalation = self.escalation_wait(wait, escalation_wait_s)
        loop = _PrivateLoop()
        agen = self._walk(source, name, password, pages, opts, escalation, None)
        try:
            loop.run(agen.__anext__())  # the document head
            while True:
                try:
                    yield loop.run(agen.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            try:
                loop.run(agen.aclose())
            finally:
                loop.close()

    # ------------------------------------------------------------------ one OCR task
    def read_task(self, task: OcrTask, *, escalation_timeout_s: float | None = None) -> Reading:
        """One OCR task through the pipeline's own `ocr_flow` (layout, read, checks, escalation),
        so tests and benchmarks of the OCR path exercise exactly what a conversion runs.
        `escalation_timeout_s` overrides the escalation wait as is (not capped: a test knob)."""
        calls = self.engines.calls()
        if calls is None:
            raise ValueError("the OCR path is disabled in config (ocr.enabled: false)")
        if escalation_timeout_s is not None:
            calls.escalation_timeout_s, calls.escalation_wait = escalation_timeout_s, "read_task override"
        try:
            return _run(ocr_flow(task, calls, self.cfg))
        finally:
            release_free_memory()


def _caller_loop_running() -> bool:
    """Whether this thread is inside a running event loop (a Jupyter cell, an async app's handler)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run(coro):
    """`asyncio.run(coro)`'s result, also from inside a running event loop: there (Jupyter runs every
    cell in one, an async app calls us from a handler) `asyncio.run` refuses, so the coroutine runs
    on a private loop in a worker thread while the caller's thread waits; the caller's loop is
    blocked for the call, as any blocking call blocks it (async code should `await convert_async`).

    The main task's own result is kept small: Python 3.11's asyncio.run asks for the SIGINT
    handler after the task finished, and building the error message for it repr()s the task,
    whole Document included (~0.1 s per call on a 100-page document, per call on a single-page one)."""
    box: list = []

    async def main() -> None:
        box.append(await coro)

    if _caller_loop_running():
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pagerouter-sync") as pool:
            pool.submit(asyncio.run, main()).result()
    else:
        asyncio.run(main())
    return box[0]


class _PrivateLoop:
    """An event loop of our own that steps an async generator from synchronous code (`iter_pages`).
    Without a running loop in the caller's thread it runs in that thread; inside one (Jupyter, an
    async app) it runs in one worker thread of its own, which every step goes through, so the
    generator always sees the same loop and thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.pool = (ThreadPoolExecutor(max_workers=1, thread_name_prefix="pagerouter-sync")
                     if _caller_loop_running() else None)

    def run(self, coro):
        if self.pool is None:
            return self.loop.run_until_complete(coro)
        return self.pool.submit(self.loop.run_until_complete, coro).result()

    def close(self) -> None:
        try:
            self.run(self.loop.shutdown_default_executor())  # what asyncio.run does too
        finally:
            if self.pool is None:
                self.loop.close()
            else:
                self.pool.submit(self.loop.close).result()
                self.pool.shutdown()


def save_figures(src: SourceDocument, page: Page, images_dir: Path, dpi: int = 150, pages: PageWork | None = None) -> None:
    """Write each figure block as a PNG and reference it from the block (for --images); the
    rendering runs where `pages` runs MuPDF (an isolation worker, or here). A render or write
    that fails flags the page (`figure_not_saved`) instead of stopping the run."""
    figures = [b for b in page.blocks if b.role == "figure"]
    if not figures:
        return
    stem = Path(src.name).stem or "input"
    try:
        images_dir.mkdir(parents=True, exist_ok=True)
        work = pages or InProcessPages(PagerouterConfig())
        pngs = work.figure_pngs(src, page.number, [tuple(b.bbox) for b in figures], dpi)
        for i, (b, png) in enumerate(zip(figures, pngs), 1):
            if png is None:
                continue
            out = images_dir / f"{stem}-p{page.number}-{i}.png"
            out.write_bytes(png)
            b.image = str(out)
    except (OSError, RuntimeError, ValueError) as exc:
        figure_problem(page, src.name, exc)
