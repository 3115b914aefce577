"""Jobs for long documents on the ingress: HTTP `/v1/jobs` and the gRPC job rpcs (a mixin of
`deployments.ingress.IngressCore`).

The state lives in files (pagerouter/jobs/store.py, directory `serve.jobs.dir`), never in this
replica: any ingress replica answers any job, and a job whose replica died is resumed by the
next replica's scan (pagerouter/jobs/runner.py). A job's conversion is the ingress's own
`convert_items` (the same stages, options and cancellation as /v1/convert), run in the
background with no request deadline; it is not tied to the submitting connection, so a caller
that goes away leaves it running. Submitting counts against admission (`limits`) only while the
upload is stored; the running jobs per replica are bounded by serve.jobs.max_running_per_replica
and the jobs waiting or running in all by serve.jobs.max_queued (503 `jobs_full` + Retry-After).
"""

# No `from __future__ import annotations`: Serve inspects the methods of the ingress class.

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
from fastapi import Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from pagerouter.jobs import JobNotFound, JobScheduler, JobStatus, JobStore, job_document
from pagerouter.render.output import to_markdown
from pagerouter.flow.options import RequestOptions
from pagerouter.wire import proto_model
from pagerouter.wire.items import InputProblem
from pagerouter.wire.protos import pagerouter_pb2 as pb

from .http_input import ApiError, parse_upload, request_options
from .ingress_support import _grpc_problem, _grpc_unauthenticated
from .observe import current_request_id
from .options_api import OPTION_RESPONSES, grpc_request_options

# OpenAPI of POST /v1/jobs: the upload errors of /v1/convert, 202 instead of 200, no 504 (no deadline).
JOB_RESPONSES: dict = {k: v for k, v in OPTION_RESPONSES.items() if k not in (200, 504)}
JOB_RESPONSES[202] = {"description": "The job was accepted: its status (`id`, `state` queued), Location /v1/jobs/{id}."}
JOB_RESPONSES[503] = {**OPTION_RESPONSES[503], "description": "At capacity, or serve.jobs.max_queued jobs already "
                      "waiting or running (`jobs_full`); retry after Retry-After seconds."}


class JobsFull(Exception):
    pass


def job_options(opts: RequestOptions) -> dict[str, Any]:
    """What a job keeps of its request options: everything but `stream` (a job's result is fetched,
    not streamed). Jobs are bulk work: `wait` defaults to `bulk` (serve.escalation_timeout_bulk_s)."""
    out = opts.model_dump(mode="json", exclude_none=True, exclude={"stream"})
    out.setdefault("wait", "bulk")
    return out


def status_to_proto(s: JobStatus) -> pb.JobStatus:
    msg = pb.JobStatus(
        id=s.id, source=s.source, state=s.state, pages_done=s.pages_done, errors=s.errors,
        created_at=s.created_at, updated_at=s.updated_at, runs=s.runs, owner=s.owner or "",
    )
    msg.pages_by_route.update(s.pages_by_route)
    msg.pages_by_status.update(s.pages_by_status)
    for name in ("pages_total", "started_at", "finished_at"):
        if getattr(s, name) is not None:
            setattr(msg, name, getattr(s, name))
    return msg


class JobMethods:
    """Needs `cfg`, `convert_items`, `_admit_http`, `_admit_grpc`, `_admitted` and `api_key` from
    the class it is mixed into; `start_jobs()` from its constructor (on the replica's event loop)."""

    jobs_store: JobStore | None = None
    jobs: JobScheduler | None = None

    def start_jobs(self) -> None:
        jc = self.cfg.serve.jobs
        if not jc.enabled:
            return
        self.jobs_store = JobStore(jc.dir)
        self.jobs = JobScheduler(self.jobs_store, jc, self._job_items)
        try:
            self.jobs.start()  # at once, so a restarted replica resumes orphaned jobs without a request
        except RuntimeError:
            pass  # no running loop (a direct construction): started by the first job call

    def _job_items(self, data: bytes, source: str, options: dict, selection: str | None) -> AsyncIterator:
        opts = RequestOptions.model_validate(options)
        return self.convert_items(data, source, opts.password, selection, opts.wait, opts.escalation_wait_s, options=opts)

    def _store(self) -> JobStore:
        if self.jobs is None or self.jobs_store is None:
            raise ApiError(404, "not_found", "jobs are turned off on this server (serve.jobs.enabled)")
        self.jobs.start()
        return self.jobs_store

    async def _job_status(self, job_id: str) -> JobStatus:
        store = self._store()
        try:
            return await asyncio.to_thread(store.get, job_id)
        except JobNotFound as exc:
            raise ApiError(404, "not_found", str(exc)) from None

    async def _submit(self, data: bytes, name: str, opts: RequestOptions) -> JobStatus:
        store, jc = self._store(), self.cfg.serve.jobs
        if await asyncio.to_thread(store.pending) >= jc.max_queued:
            raise JobsFull(f"{jc.max_queued} jobs are already waiting or running (serve.jobs.max_queued); retry later")
        status = await asyncio.to_thread(store.create, data, name, job_options(opts))
        self.jobs.kick()
        return status

    # ------------------------------------------------------------------ HTTP
    async def submit_job_http(self, request: Request) -> Response:
        with self._admitted(self._admit_http(request)):
            data, name, fields = await parse_upload(request, self.cfg.serve.max_upload_mb)
            opts = request_options(fields, RequestOptions)
            try:
                status = await self._submit(data, name, opts)
            except JobsFull as exc:
                retry = str(self.cfg.limits.retry_after_s)
                raise ApiError(503, "jobs_full", str(exc), {"Retry-After": retry}) from None
        root = (request.scope.get("root_path") or "").rstrip("/")  # the application's route prefix
        return JSONResponse(status.public(), status_code=202, headers={"Location": f"{root}/v1/jobs/{status.id}"})

    async def get_job_http(self, job_id: str) -> dict:
        return (await self._job_status(job_id)).public()

    async def cancel_job_http(self, job_id: str) -> dict:
        store = self._store()
        try:
            status = await asyncio.to_thread(store.cancel, job_id)
        except JobNotFound as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        self.jobs.cancel_local(job_id)  # another replica's run sees the mark at its next page or heartbeat
        return status.public()

    async def job_result_http(self, job_id: str, fmt: str | None) -> Response:
        store = self._store()
        try:
            doc, status = await asyncio.to_thread(job_document, store, job_id)
        except JobNotFound as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        if status.state == "failed" and doc is None:
            raise ApiError(422, "job_failed", status.errors[0] if status.errors else f"{status.source}: job failed")
        headers = {"X-Job-State": status.state, "X-Job-Partial": "false" if status.state == "done" else "true",
                   "X-Job-Pages": f"{status.pages_done}/{status.pages_total if status.pages_total is not None else '?'}"}
        if doc is None:  # not opened yet: nothing to show, come back
            headers["Retry-After"] = "1"
            return JSONResponse(status.public(), status_code=202, headers=headers)
        fmt = (fmt or (await asyncio.to_thread(store.options, job_id)).get("format") or "json").lower()
        if fmt not in ("json", "md"):
            raise ApiError(422, "bad_request", f"format: {fmt!r} is not one of json, md")
        if fmt == "md":
            text = await asyncio.to_thread(to_markdown, doc, self.cfg.output)
            return PlainTextResponse(text, media_type="text/markdown", headers=headers)
        return Response(await asyncio.to_thread(doc.model_dump_json), media_type="application/json", headers=headers)

    # ------------------------------------------------------------------ gRPC
    def _grpc_job_denied(self, grpc_context) -> bool:
        if _grpc_unauthenticated(grpc_context, self.api_key):
            return True
        if self.jobs is None:
            _grpc_set(grpc_context, grpc.StatusCode.UNIMPLEMENTED, "jobs are turned off on this server", "not_found")
            return True
        self.jobs.start()
        return False

    async def SubmitJob(self, request: pb.ConvertRequest, grpc_context=None) -> pb.JobReply:
        rid = current_request_id()
        if self._grpc_job_denied(grpc_context):
            return pb.JobReply(request_id=rid)
        release = self._admit_grpc(grpc_context)
        if release is None:
            return pb.JobReply(request_id=rid)
        with self._admitted(release):
            opts = grpc_request_options(request, RequestOptions)
            if isinstance(opts, InputProblem):
                _grpc_problem(grpc_context, opts)
                return pb.JobReply(request_id=rid)
            try:
                status = await self._submit(request.data, request.filename or "-", opts)
            except JobsFull as exc:
                _grpc_set(grpc_context, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), "jobs_full",
                          str(self.cfg.limits.retry_after_s))
                return pb.JobReply(request_id=rid)
        return pb.JobReply(job=status_to_proto(status), request_id=rid)

    async def _grpc_status(self, job_id: str, grpc_context, cancel: bool = False) -> JobStatus | None:
        try:
            if cancel:
                status = await asyncio.to_thread(self.jobs_store.cancel, job_id)
                self.jobs.cancel_local(job_id)
                return status
            return await asyncio.to_thread(self.jobs_store.get, job_id)
        except JobNotFound as exc:
            _grpc_set(grpc_context, grpc.StatusCode.NOT_FOUND, str(exc), "not_found")
            return None

    async def GetJob(self, request: pb.JobRequest, grpc_context=None) -> pb.JobReply:
        rid = current_request_id()
        if self._grpc_job_denied(grpc_context):
            return pb.JobReply(request_id=rid)
        status = await self._grpc_status(request.job_id, grpc_context)
        return pb.JobReply(job=status_to_proto(status), request_id=rid) if status else pb.JobReply(request_id=rid)

    async def CancelJob(self, request: pb.JobRequest, grpc_context=None) -> pb.JobReply:
        rid = current_request_id()
        if self._grpc_job_denied(grpc_context):
            return pb.JobReply(request_id=rid)
        status = await self._grpc_status(request.job_id, grpc_context, cancel=True)
        return pb.JobReply(job=status_to_proto(status), request_id=rid) if status else pb.JobReply(request_id=rid)

    async def GetJobResult(self, request: pb.JobRequest, grpc_context=None) -> pb.JobResultReply:
        rid = current_request_id()
        if self._grpc_job_denied(grpc_context):
            return pb.JobResultReply(request_id=rid)
        try:
            doc, status = await asyncio.to_thread(job_document, self.jobs_store, request.job_id)
        except JobNotFound as exc:
            _grpc_set(grpc_context, grpc.StatusCode.NOT_FOUND, str(exc), "not_found")
            return pb.JobResultReply(request_id=rid)
        reply = pb.JobResultReply(job=status_to_proto(status), partial=status.state != "done", request_id=rid)
        if doc is not None:
            reply.document.CopyFrom(await asyncio.to_thread(proto_model.document_to_proto, doc))
        return reply


def _grpc_set(grpc_context, code, details: str, error_code: str, retry_after: str | None = None) -> None:
    if grpc_context is None:
        return
    grpc_context.set_code(code)
    grpc_context.set_details(details)
    trailers = [("error-code", error_code)] + ([("retry-after", retry_after)] if retry_after else [])
    grpc_context.set_trailing_metadata(trailers)
