"""Triage deployment (CPU): opens the input, triages each page, reads good text layers itself.

Streams `DocumentHead` (or `InputProblem`), then one `TriageOutcome` per page in page order:
a finished page, or a page plus its `OcrTask` for the OCR tiers. The walk is the core's
`pagerouter.convert.walk.walk_document`, the one the Converter runs; the file is opened and its
pages read through `pagerouter.isolation` (worker processes unless `isolation.enabled: false`),
so a crash or a hang in MuPDF fails one page, never this replica.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

from ray import serve

from pagerouter.intake.inputs import InputError
from pagerouter.config import PagerouterConfig
from pagerouter.convert.walk import walk_document
from pagerouter.isolation import PageWork, page_work
from pagerouter.common.memory import release_after
from pagerouter.flow.pipeline import TriageOutcome
from pagerouter.service.stage_faults import stage_fault, stage_stopped
from pagerouter.service.tracing import record_stage_span
from pagerouter.wire.items import DocumentHead, InputProblem

from .common import load_cfg
from .health import check_page_work, stage_ready

TRIAGE_STAGES = ("triage", "text_layer", "render")


@serve.deployment(name="Triage")
class Triage:
    def __init__(self, cfg_data: dict):
        self.cfg = load_cfg(cfg_data)
        self.pages = page_work(self.cfg)
        self.pages.warm()  # workers started and their proof recogniser loaded before the first request

    def __del__(self) -> None:
        """Serve calls this when the replica shuts down gracefully: its isolation workers go with it."""
        pages, self.pages = getattr(self, "pages", None), None
        if pages is not None:
            pages.close()

    def ready(self) -> dict:
        """The readiness ping of /healthz (deployments/health.py): no work, just an answer."""
        return stage_ready("Triage")

    def check_health(self) -> None:
        """Serve calls this periodically; raising makes it replace this replica."""
        check_page_work(self.pages)

    async def outcomes(
        self, data: bytes, name: str, password: str | None, pages: str | None, ocr: str = "auto",
        images: bool = False,
    ) -> AsyncIterator[DocumentHead | InputProblem | TriageOutcome]:
        """`ocr` and `images` are the request's options (validated by the ingress): the triage
        mode, and whether text-layer pages' figures are rendered here (this replica holds the file)."""
        async for item in triage_stream(self.cfg, self.pages, data, name, password, pages, ocr, images):
            yield item


async def triage_stream(
    cfg: PagerouterConfig, work: PageWork, data: bytes, name: str, password: str | None, pages: str | None,
    ocr: str = "auto", images: bool = False,
) -> AsyncIterator[DocumentHead | InputProblem | TriageOutcome]:
    """DocumentHead (or InputProblem and stop), then one TriageOutcome per page in page order.

    The one triage walk of the served graph: the Triage deployment streams it to the ingress,
    and the ingress runs it itself, in its own isolation workers, for small requests of a few
    pages (`serve.ingress_triage_max_pages`, deployments/fast_path.py): the same code, so the
    same pages, problems, fault hooks and spans either way. The walk itself (open, page
    selection, triage, figures) is the core's `walk_document`; here are only what a Serve
    stream adds: problems as items, the test fault hook, spans and the upload's memory."""
    walk = walk_document(work, data, max_pages=cfg.limits.max_pages, name=name, password=password, pages=pages,
                         ocr=ocr, images=images)
    try:
        async with aclosing(walk):
            try:
                head = await anext(walk)
            except InputError as exc:  # before any page is triaged: a file that does not open, or a bad selection
                yield InputProblem(getattr(exc, "code", "bad_input"), str(exc), exc.source, exc.page, exc.message)
                return
            yield DocumentHead(head.document, head.numbers)
            walked = False
            try:
                async for outcome in walk:
                    await stage_fault("triage", head.src.name, outcome.page.number)  # test-only hook, off by default
                    for stage in TRIAGE_STAGES:
                        if stage in outcome.page.timings:
                            record_stage_span(stage, outcome.page.number, outcome.page.route, outcome.page.timings[stage])
                    yield outcome
                walked = True
            finally:
                if not walked:  # cancelled or closed mid-walk (the caller left); test-only log, off by default
                    stage_stopped("triage", head.src.name)
    finally:
        release_after(len(data))  # a large upload's buffers back to the OS (pagerouter.common.memory)
