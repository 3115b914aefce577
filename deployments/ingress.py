"""Ingress deployment: HTTP (FastAPI) and gRPC front of the graph.

It fans one document's pages out to the stage deployments and streams pages back in page
order. The conversion of a request is the core's (`pagerouter.service.served_conversion`, around
`pagerouter.flow.pipeline.convert_pages`); this class only adapts it: stage calls become
deployment-handle calls (`OcrCalls`), triage outcomes come from the Triage deployment's stream
(or this replica's own walk of a small request), and pages go out as JSON, NDJSON lines or protobuf.
"""

# No `from __future__ import annotations` here: FastAPI must see real annotations
# (e.g. `request: Request`) on the methods Serve wraps.

import asyncio
import logging
import weakref
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import aclosing

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from ray import serve
from ray.serve.handle import DeploymentHandle

from pagerouter.common.stages import LayoutResult, OcrCalls, OcrTask, Reading, page_work_started
from pagerouter.flow.escalation_wait import EscalationWait
from pagerouter.flow.options import PageOptions, RequestOptions, installed_languages
from pagerouter.isolation import PageWork, page_work
from pagerouter.model import Document, Page
from pagerouter.service.admission import Admission, Refused, Slot
from pagerouter.service.api_key import server_api_key
from pagerouter.service.api_key_middleware import ApiKeyMiddleware
from pagerouter.service.api_problems import single_page_field_problem
from pagerouter.service.client_identity import grpc_client_id, http_client_id
from pagerouter.service.deadline import deadline_in
from pagerouter.service.delivery import collect_document, ndjson_lines
from pagerouter.service.document_body import document_body
from pagerouter.service.error_status import grpc_refused, problem_error, refused_error
from pagerouter.service.errors import internal_message
from pagerouter.service.openapi import JOB_RESPONSES, OPTION_RESPONSES, option_body
from pagerouter.service.redaction import public_config, redact
from pagerouter.service.request_options import request_options
from pagerouter.service.resumable_walk import ResumableWalk
from pagerouter.service.served_conversion import conversion_items
from pagerouter.service.tracing import stage_span
from pagerouter.service.upload import parse_upload
from pagerouter.service.version import PAGEROUTER_VERSION
from pagerouter.wire.items import DocumentHead, DocumentTail, InputProblem

from .common import load_cfg
from .docs import install_docs
from .fast_path import LocalWalk, triaged_in_ingress, warm_up_pdf
from .health import Readiness, applied_config
from .http_errors import install_error_handlers
from .ingress_grpc import GrpcMethods
from .jobs import JobMethods
from .observe import GraphMetrics, current_request_id
from .stage_calls import assigned, replica_died, stage_call
from .triage import triage_stream


log = logging.getLogger("ray.serve")  # Serve writes this logger to the replica's log file


class IngressCore(GrpcMethods, JobMethods):
    """Everything the ingress does; `make_ingress` wraps it with a fresh FastAPI app."""

    def __init__(
        self,
        cfg_data: dict,
        triage: DeploymentHandle,
        layout: DeploymentHandle,
        small_reader: DeploymentHandle,
        large_reader: DeploymentHandle,
        require_api_key: bool = False,
    ):
        self.cfg = load_cfg(cfg_data)
        self.triage, self.layout, self.small_reader, self.large_reader = triage, layout, small_reader, large_reader
        self.metrics = GraphMetrics(self.cfg.serve.metrics_enabled)
        self.concurrency = self.cfg.ocr.pages_in_flight_for(served=True)
        self.deadline_s = self.cfg.serve.ingress_deadline_s()
        self.admission = Admission(self.cfg.limits, self.deadline_s)
        self._versions: dict[str, dict[str, str]] = {}
        self._local_pages: PageWork | None = None  # deployments/fast_path.py
        self.triage_paths: Counter[str] = Counter()
        self._warming: asyncio.Task | None = None  # check_health: both triage paths warmed once
        self.health = Readiness(
            {"Triage": triage, "Layout": layout, "SmallReader": small_reader, "LargeReader": large_reader},
            self.cfg.serve.app_name, PAGEROUTER_VERSION,
        )
        # From this replica's environment, never from its arguments; a bad key file fails the start.
        self.api_key = server_api_key(required=require_api_key)
        installed_languages()  # runs `tesseract --list-langs` once, here, not on the event loop of a request
        self.start_jobs()  # deployments/jobs.py: resumes jobs whose replica died

    # ------------------------------------------------------------------ the one conversion path
    def convert_items(
        self, data: bytes, name: str, password: str | None, pages: str | None,
        wait: str | None = None, escalation_wait_s: float | None = None, options: RequestOptions | None = None,
        slot: Slot | None = None,
    ) -> AsyncIterator[DocumentHead | InputProblem | Page | DocumentTail]:
        """DocumentHead (or InputProblem and stop), every Page in page order, DocumentTail
        (pagerouter.service.served_conversion). `options` (validated) bring the ocr mode and
        images to Triage and the languages to the OCR tasks. With an admission `slot`, the
        head's page count is checked against the deadline (Refused before any page starts) and
        the pages feed the replica's page rate."""
        opts = options or RequestOptions()
        items = conversion_items(
            self.cfg, name, len(data), opts, wait, escalation_wait_s, concurrency=self.concurrency,
            start_walk=lambda: self._triage_walk(data, name, password, pages, opts),
            ocr_calls=lambda used, wait: self._ocr_calls(used, wait, slot), page_done=self.metrics.page_done,
        )
        return items if slot is None else self._counted(slot.track(items))

    async def _counted(self, items: AsyncIterator) -> AsyncIterator:
        """`items`, with a refusal at the head (the page count known) logged and counted."""
        async with aclosing(items):
            try:
                async for item in items:
                    yield item
            except Refused as exc:
                self._refused(exc)
                raise

    def _triage_walk(self, data: bytes, name: str, password: str | None, pages: str | None, opts: RequestOptions):
        """The triage of one request: in this replica for a few pages of a small upload
        (deployments/fast_path.py), else the Triage deployment's stream."""
        def walk(selection: str | None):
            return self.triage.outcomes.options(stream=True).remote(
                data, name, password, selection, opts.ocr, opts.images
            )

        here = triaged_in_ingress(self.cfg.serve, len(data), pages)
        self.triage_paths["ingress" if here else "deployment"] += 1
        self.metrics.triage_path.inc(tags={"where": "ingress" if here else "deployment"})
        if here:
            return LocalWalk(triage_stream(self.cfg, self.local_pages, data, name, password, pages, opts.ocr, opts.images))
        return ResumableWalk(walk(pages), walk, name, resumable=replica_died)  # a Triage replica that died mid-walk

    @property
    def local_pages(self) -> PageWork:
        """This replica's own isolation workers (started on first use) for the requests it triages."""
        if self._local_pages is None:
            self._local_pages = page_work(self.cfg)
        return self._local_pages

    def __del__(self) -> None:
        """Serve calls this when the replica shuts down gracefully (and the collector may, later):
        the isolation workers this replica started go with it."""
        pages, self._local_pages = getattr(self, "_local_pages", None), None
        if pages is not None:
            pages.close()

    async def check_health(self) -> None:
        """Serve calls this periodically. The first call warms both triage paths in the background:
        the first walk through the Triage deployment cost ~1 s (its stream and its isolation worker
        starting), paid otherwise by the first whole document after a run of single pages."""
        if self._warming is None:
            self._warming = asyncio.get_running_loop().create_task(self._warm_triage())

    async def _warm_triage(self) -> None:
        data = warm_up_pdf()
        try:
            stream = self.triage.outcomes.options(stream=True).remote(data, "warm-up.pdf", None, None, "auto", False)
            async for _ in stream:
                pass
            if self.cfg.serve.ingress_triage_max_pages > 0:
                async for _ in triage_stream(self.cfg, self.local_pages, data, "warm-up.pdf", None, "1"):
                    pass
                await asyncio.to_thread(self.local_pages.warm)  # all its workers, proof recogniser loaded
        except Exception as exc:  # noqa: BLE001 - a warm-up only; real requests report their own errors
            log.warning("pagerouter: warming the triage paths failed: %s", internal_message(exc))

    def stats(self) -> dict:
        """Requests triaged here vs. by the Triage deployment (tests and the benchmark read it)."""
        return {"triage": dict(self.triage_paths)}

    def _ocr_calls(
        self, used: dict[str, str], wait: EscalationWait | None = None, slot: Slot | None = None,
    ) -> OcrCalls | None:
        """The OCR stage calls of one request, as deployment-handle calls with a span each; its
        admission `slot` counts the pages that go to OCR (the OCR lane of its outlook)."""
        if not self.cfg.ocr.enabled:
            return None

        async def layout(task: OcrTask) -> LayoutResult:
            if slot is not None:
                slot.ocr_page_started()
            with stage_span("layout", task.number, task.decision.route):
                result = await stage_call(lambda: self._started(self.layout.run.remote(task)))  # retried if it died
            used.update(await self._engine_versions("layout", self.layout))
            return result

        async def read(task: OcrTask, lay: LayoutResult) -> Reading:
            with stage_span("read", task.number, task.decision.route):
                reading = await stage_call(lambda: self.small_reader.run.remote(task, lay))
            used.update(await self._engine_versions("small_reader", self.small_reader))
            return reading

        async def escalate(task: OcrTask, first: Reading) -> Reading:
            # ocr_flow bounds this with the request's wait (serve.escalation_timeout_s or
            # escalation_timeout_bulk_s, or less if asked); cancelling the await
            # cancels the queued or running request, so a sleeping tier never hangs a page.
            with stage_span("escalate", task.number, task.decision.route):
                reading, versions = await stage_call(lambda: self.large_reader.escalate.remote(task, first))
            used.update(versions)
            return reading

        return OcrCalls(
            reports_start=True,
            layout=layout, read=read, escalate=escalate if self.cfg.ocr.escalation.enabled else None,
            escalation_timeout_s=wait.seconds if wait else None, escalation_wait=wait.why if wait else "",
        )

    @staticmethod
    async def _started(response):
        """The layout call's result; the page's clock starts when a Layout replica takes it."""
        await assigned(response)
        page_work_started()
        return await response

    async def _engine_versions(self, key: str, handle: DeploymentHandle) -> dict[str, str]:
        if key not in self._versions:
            self._versions[key] = await handle.describe.remote()
        return self._versions[key]

    async def collect(
        self, data: bytes, name: str, password: str | None, pages: str | None,
        wait: str | None = None, escalation_wait_s: float | None = None, deadline: float | None = None,
        options: RequestOptions | None = None, slot: Slot | None = None,
    ) -> Document | InputProblem:
        """The whole document, or the InputProblem that stopped it (`timeout` past `deadline`);
        Refused when `slot`'s page count, once known, would not finish in time."""
        deadline = deadline if deadline is not None else self._deadline()
        items = self.convert_items(data, name, password, pages, wait, escalation_wait_s, options, slot)
        return await collect_document(items, name, deadline, self.deadline_s)

    def _deadline(self) -> float | None:
        return deadline_in(self.deadline_s)

    def _admit_http(self, request: Request, pages: int | None = None) -> Slot:
        """The slot (release) of one admitted conversion of `pages` (None: not known before the
        upload is read), or ApiError 503/429 with Retry-After (before the upload is read)."""
        try:
            return self.admission.acquire(http_client_id(request), pages)
        except Refused as exc:
            self._refused(exc)
            raise refused_error(exc) from None

    def _admit_grpc(self, grpc_context, pages: int | None = None) -> Slot | None:
        """The slot of one admitted gRPC conversion, or None with the call's status set (UNAVAILABLE...)."""
        try:
            return self.admission.acquire(grpc_client_id(grpc_context), pages)
        except Refused as exc:
            self._refused(exc)
            grpc_refused(grpc_context, exc)
            return None

    def _refused(self, exc: Refused) -> None:
        """A refusal in the replica's metrics and log, with its figures (an operator sizing the
        replicas reads the rate and the pages in flight here)."""
        reason = "expected_finish" if exc.outlook else "client" if exc.status == 429 else "in_flight"
        self.metrics.refused.inc(tags={"reason": reason})
        log.info(
            "pagerouter: admission refused (%s, Retry-After %d s, %d conversions and %.0f pages in flight): %s",
            reason, exc.retry_after_s, self.admission.total, self.admission.pages_in_flight(), exc.message,
        )

    # ------------------------------------------------------------------ HTTP
    async def readiness(self) -> tuple[bool, dict]:
        """(ready, body) of the whole graph (deployments/health.py); the gRPC front asks it too."""
        return await self.health.check()

    async def healthz(self) -> Response:
        ready, body = await self.readiness()
        return JSONResponse(body, status_code=200 if ready else 503)

    async def config(self) -> dict:
        """The pagerouter config plus, per deployment, what Serve applied (a Serve YAML wins)."""
        out = public_config(self.cfg)
        # Serve's settings may carry secrets too (runtime_env env_vars): redacted the same way.
        out["deployments"] = redact(await applied_config(self.health), api_key=self.api_key)
        return out

    async def convert_http(self, request: Request) -> Response:
        deadline, release = self._deadline(), self._admit_http(request)
        try:
            response = await self._convert_http(request, deadline, release)
            if isinstance(response, StreamingResponse):
                release = None  # the stream releases it when it ends
            return response
        except Refused as exc:  # its page count, once the file was opened, would not finish in time
            raise refused_error(exc) from None
        finally:
            if release is not None:
                release()

    async def _convert_http(self, request: Request, deadline: float | None, release) -> Response:
        rid = current_request_id()
        data, name, fields = await parse_upload(request, self.cfg.serve.max_upload_mb)
        opts = request_options(fields, RequestOptions)
        password, pages, wait = opts.password, opts.pages, (opts.wait, opts.escalation_wait_s)
        if opts.stream:
            return await self._stream_http(data, name, password, pages, rid, wait, deadline, release, opts)
        result = await self.collect(data, name, password, pages, *wait, deadline=deadline, options=opts, slot=release)
        if isinstance(result, InputProblem):
            raise problem_error(result)
        text, media_type = await document_body(result, opts.format, self.cfg.output)
        return Response(text, media_type=media_type)

    async def _stream_http(
        self, data: bytes, name: str, password: str | None, pages: str | None, rid: str,
        wait: tuple[str | None, float | None] = (None, None), deadline: float | None = None, release=None,
        options: RequestOptions | None = None,
    ):
        items = self.convert_items(data, name, password, pages, *wait, options=options, slot=release)
        head = await items.__anext__()  # bad input must be a 4xx (a refusal a 503), not a 200 stream with an error
        if isinstance(head, InputProblem):
            await items.aclose()
            raise problem_error(head)
        body = ndjson_lines(items, head, name, rid, deadline, self.deadline_s, release)
        if release is not None:  # a body never started (client gone first) still frees its slot
            weakref.finalize(body, release)
        return StreamingResponse(body, media_type="application/x-ndjson")

    async def convert_page_http(self, request: Request) -> Response:
        deadline = self._deadline()
        with self._admit_http(request, pages=1) as slot:
            try:
                return await self._convert_page_http(request, deadline, slot)
            except Refused as exc:
                raise refused_error(exc) from None

    async def _convert_page_http(self, request: Request, deadline: float | None, slot: Slot) -> Response:
        data, name, fields = await parse_upload(request, self.cfg.serve.max_upload_mb)
        problem = single_page_field_problem(fields.get("page"), name)  # "-3": bad_pages, named, not a range
        if problem is not None:
            raise problem_error(problem)
        opts = request_options(fields, PageOptions)
        result = await self.collect(
            data, name, opts.password, str(opts.page), opts.wait, opts.escalation_wait_s, deadline=deadline,
            options=opts, slot=slot,
        )
        if isinstance(result, InputProblem):
            raise problem_error(result)
        return Response(result.pages[0].model_dump_json(), media_type="application/json")


def make_ingress():
    """A fresh Ingress deployment with its own FastAPI app.

    Built per application: a FastAPI app that has served once (e.g. in-process) holds
    uvicorn state that cannot be pickled, so a module-level app breaks the second build.
    """
    # /docs and /redoc come from deployments/docs.py: assets served locally, no CDN.
    api = FastAPI(title="pagerouter", version=PAGEROUTER_VERSION, docs_url=None, redoc_url=None)
    install_error_handlers(api)
    install_docs(api)
    # the key is read in the replica, when the app first runs; 401s carry Serve's request id
    api.add_middleware(ApiKeyMiddleware, request_id=current_request_id)

    @serve.deployment(name="Ingress")
    @serve.ingress(api)
    class Ingress(IngressCore):
        @api.get("/healthz")
        async def get_healthz(self) -> Response:
            """Readiness: 200 when every deployment can serve, else 503 naming each one's state."""
            return await self.healthz()

        @api.get("/livez")
        async def get_livez(self) -> dict:
            """Liveness: 200 while this Ingress replica runs."""
            return {"status": "ok", "version": PAGEROUTER_VERSION}

        @api.get("/v1/config")
        async def get_config(self) -> dict:
            return await self.config()

        @api.post("/v1/convert", openapi_extra=option_body(RequestOptions), responses=OPTION_RESPONSES)
        async def post_convert(self, request: Request) -> Response:
            return await self.convert_http(request)

        @api.post("/v1/pages", openapi_extra=option_body(PageOptions), responses=OPTION_RESPONSES)
        async def post_pages(self, request: Request) -> Response:
            return await self.convert_page_http(request)

        # Jobs for long documents (deployments/jobs.py).
        @api.post("/v1/jobs", status_code=202, openapi_extra=option_body(RequestOptions), responses=JOB_RESPONSES)
        async def post_job(self, request: Request) -> Response:
            """Accept a document as a job: 202 with its status (and id) at once."""
            return await self.submit_job_http(request)

        @api.get("/v1/jobs/{job_id}")
        async def get_job(self, job_id: str) -> dict:
            """State and progress of a job (pages done per route and status, errors, timestamps)."""
            return await self.get_job_http(job_id)

        @api.get("/v1/jobs/{job_id}/result")
        async def get_job_result(self, job_id: str, format: str | None = None) -> Response:
            """The document so far (`format` md or json; default: the job's); X-Job-Partial until done."""
            return await self.job_result_http(job_id, format)

        @api.get("/v1/jobs/{job_id}/review")
        async def get_job_review(self, job_id: str) -> Response:
            """The job's review page (HTML, self-contained, strict CSP): pages, boxes, routes, flags."""
            return await self.job_review_http(job_id)

        @api.delete("/v1/jobs/{job_id}")
        async def delete_job(self, job_id: str) -> dict:
            """Cancel a job: its pages stop being converted."""
            return await self.cancel_job_http(job_id)

    return Ingress
