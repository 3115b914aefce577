"""Jobs for long documents on the ingress: HTTP `/v1/jobs` and the gRPC job rpcs (a mixin of
`pagerouter.deployments.ingress.IngressCore`) over `pagerouter.service.job_desk.JobDesk`.

A job's conversion is the ingress's own `convert_items` (the same stages, options and
cancellation as /v1/convert), run in the background with no request deadline; it is not tied to
the submitting connection, so a caller that goes away leaves it running. Submitting counts
against admission (`limits`) only while the upload is stored; the running jobs per replica are
bounded by serve.jobs.max_running_per_replica and the jobs waiting or running in all by
serve.jobs.max_queued (503 `jobs_full` + Retry-After).
"""

# No `from __future__ import annotations`: Serve inspects the methods of the ingress class.

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import TypeVar

import grpc
from fastapi import Request
from fastapi.responses import JSONResponse, Response

from pagerouter.flow.options import RequestOptions
from pagerouter.jobs import JobNotFound
from pagerouter.service.document_body import document_body
from pagerouter.service.error_status import grpc_problem, set_grpc_status
from pagerouter.service.errors import ApiError
from pagerouter.service.grpc_auth import grpc_unauthenticated
from pagerouter.service.job_desk import JobDesk, JobsFull
from pagerouter.review import REVIEW_HEADERS
from pagerouter.service.job_replies import job_result_headers, status_to_proto
from pagerouter.service.job_review import job_review_page
from pagerouter.service.request_options import grpc_request_options, request_options
from pagerouter.service.upload import parse_upload
from pagerouter.wire import proto_model
from pagerouter.wire.items import InputProblem
from pagerouter.wire.protos import pagerouter_pb2 as pb

from .observe import current_request_id

T = TypeVar("T")


class JobMethods:
    """Needs `cfg`, `convert_items`, `local_pages`, `_admit_http`, `_admit_grpc` and `api_key` from
    the class it is mixed into; `start_jobs()` from its constructor (on the replica's event loop)."""

    jobs: JobDesk | None = None

    def start_jobs(self) -> None:
        if self.cfg.serve.jobs.enabled:  # started at once: this replica resumes orphaned jobs without a request
            self.jobs = JobDesk(self.cfg.serve.jobs, self._job_items).start()

    def _job_items(self, data: bytes, source: str, opts: RequestOptions, selection: str | None) -> AsyncIterator:
        return self.convert_items(data, source, opts.password, selection, opts.wait, opts.escalation_wait_s, options=opts)

    def _desk(self) -> JobDesk:
        if self.jobs is None:
            raise ApiError(404, "not_found", "jobs are turned off on this server (serve.jobs.enabled)")
        return self.jobs.start()

    @staticmethod
    async def _found(call: Awaitable[T]) -> T:
        try:
            return await call
        except JobNotFound as exc:
            raise ApiError(404, "not_found", str(exc)) from None

    # ------------------------------------------------------------------ HTTP
    async def submit_job_http(self, request: Request) -> Response:
        with self._admit_http(request):
            data, name, fields = await parse_upload(request, self.cfg.serve.max_upload_mb)
            opts = request_options(fields, RequestOptions)
            try:
                status = await self._desk().submit(data, name, opts)
            except JobsFull as exc:
                retry = str(self.cfg.limits.retry_after_s)
                raise ApiError(503, "jobs_full", str(exc), {"Retry-After": retry}) from None
        root = (request.scope.get("root_path") or "").rstrip("/")  # the application's route prefix
        return JSONResponse(status.public(), status_code=202, headers={"Location": f"{root}/v1/jobs/{status.id}"})

    async def get_job_http(self, job_id: str) -> dict:
        return (await self._found(self._desk().status(job_id))).public()

    async def cancel_job_http(self, job_id: str) -> dict:
        return (await self._found(self._desk().cancel(job_id))).public()

    async def job_result_http(self, job_id: str, fmt: str | None) -> Response:
        desk = self._desk()
        doc, status = await self._found(desk.result(job_id))
        if status.state == "failed" and doc is None:
            raise ApiError(422, "job_failed", status.errors[0] if status.errors else f"{status.source}: job failed")
        headers = job_result_headers(status)
        if doc is None:  # not opened yet: nothing to show, come back
            headers["Retry-After"] = "1"
            return JSONResponse(status.public(), status_code=202, headers=headers)
        try:
            fmt = await desk.result_format(job_id, fmt)
        except ValueError as exc:
            raise ApiError(422, "bad_request", str(exc)) from None
        text, media_type = await document_body(doc, fmt, self.cfg.output)
        return Response(text, media_type=media_type, headers=headers)

    async def job_review_http(self, job_id: str) -> Response:
        html, status = await self._found(job_review_page(self._desk(), job_id, self.local_pages, self.cfg))
        headers = job_result_headers(status)
        if html is None:  # not opened yet: nothing to show, come back
            headers["Retry-After"] = "1"
            return JSONResponse(status.public(), status_code=202, headers=headers)
        return Response(html, media_type="text/html; charset=utf-8", headers={**headers, **REVIEW_HEADERS})

    # ------------------------------------------------------------------ gRPC
    def _grpc_desk(self, grpc_context) -> JobDesk | None:
        """The desk, or None with the call's status set (UNAUTHENTICATED; UNIMPLEMENTED when jobs are off)."""
        if grpc_unauthenticated(grpc_context, self.api_key):
            return None
        if self.jobs is None:
            set_grpc_status(grpc_context, grpc.StatusCode.UNIMPLEMENTED, "jobs are turned off on this server", "not_found")
            return None
        return self.jobs.start()

    async def SubmitJob(self, request: pb.ConvertRequest, grpc_context=None) -> pb.JobReply:
        rid = current_request_id()
        desk = self._grpc_desk(grpc_context)
        release = self._admit_grpc(grpc_context) if desk is not None else None
        if release is None:
            return pb.JobReply(request_id=rid)
        with release:
            opts = grpc_request_options(request, RequestOptions)
            if isinstance(opts, InputProblem):
                grpc_problem(grpc_context, opts)
                return pb.JobReply(request_id=rid)
            try:
                status = await desk.submit(request.data, request.filename or "-", opts)
            except JobsFull as exc:
                set_grpc_status(grpc_context, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), "jobs_full",
                                str(self.cfg.limits.retry_after_s))
                return pb.JobReply(request_id=rid)
        return pb.JobReply(job=status_to_proto(status), request_id=rid)

    async def _grpc_found(self, call: Awaitable[T], grpc_context) -> T | None:
        try:
            return await call
        except JobNotFound as exc:
            set_grpc_status(grpc_context, grpc.StatusCode.NOT_FOUND, str(exc), "not_found")
            return None

    async def GetJob(self, request: pb.JobRequest, grpc_context=None) -> pb.JobReply:
        desk, rid = self._grpc_desk(grpc_context), current_request_id()
        status = desk and await self._grpc_found(desk.status(request.job_id), grpc_context)
        return pb.JobReply(job=status_to_proto(status), request_id=rid) if status else pb.JobReply(request_id=rid)

    async def CancelJob(self, request: pb.JobRequest, grpc_context=None) -> pb.JobReply:
        desk, rid = self._grpc_desk(grpc_context), current_request_id()
        status = desk and await self._grpc_found(desk.cancel(request.job_id), grpc_context)
        return pb.JobReply(job=status_to_proto(status), request_id=rid) if status else pb.JobReply(request_id=rid)

    async def GetJobResult(self, request: pb.JobRequest, grpc_context=None) -> pb.JobResultReply:
        desk, rid = self._grpc_desk(grpc_context), current_request_id()
        found = desk and await self._grpc_found(desk.result(request.job_id), grpc_context)
        if not found:
            return pb.JobResultReply(request_id=rid)
        doc, status = found
        reply = pb.JobResultReply(job=status_to_proto(status), partial=status.state != "done", request_id=rid)
        if doc is not None:
            reply.document.CopyFrom(await asyncio.to_thread(proto_model.document_to_proto, doc))
        return reply
