"""Typed gRPC clients (sync and async) of the pagerouter Serve API.

    with PagerouterGrpcClient("127.0.0.1:9000") as c:
        doc = c.convert("paper.pdf")
        for item in c.stream("paper.pdf"): ...       # Page ... then the Document summary
        page = c.convert_page("paper.pdf", page=3)
        doc = c.convert("scan.pdf", wait="bulk")     # flagged pages may wait for a cold escalation tier

Calls carry the `application` metadata (Serve routes by it when several apps run), the API key
as `authorization: Bearer KEY` (from `api_key=` or PAGEROUTER_API_KEY / PAGEROUTER_API_KEY_FILE)
and a deadline; failures raise PagerouterClientError (code from the `error-code` trailer). A
refusal the server asks to repeat (UNAVAILABLE / RESOURCE_EXHAUSTED with a `retry-after` trailer)
is sent again after the hinted wait, within `retry=RetryPolicy(...)` (clients/retry.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc

from pagerouter.model import Document, Page
from pagerouter.wire import proto_model
from pagerouter.wire.protos import pagerouter_pb2 as pb
from pagerouter.wire.protos import pagerouter_pb2_grpc as pb_grpc

from . import retry as _retry
from .errors import PagerouterClientError, read_input, resolve_api_key
from .http_client import assemble
from .jobs import JobResult, JobStatus, status_from_proto, wait_job, wait_job_async
from .retry_policy import RetryPolicy

DEFAULT_TIMEOUT_S = 600.0
_CHANNEL_OPTIONS = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]


def _error(exc: grpc.RpcError) -> PagerouterClientError:
    """Sync and aio rpc errors both offer code(), details() and trailing_metadata()."""
    code, rid, wait = "grpc_error", "", None
    trailers = exc.trailing_metadata() if hasattr(exc, "trailing_metadata") else None
    for key, value in trailers or ():
        if key == "error-code":
            code = value
        elif key == "request_id":
            rid = value
        elif key == "retry-after":  # the server's refusals say when to come back (service/error_status.py)
            wait = _retry.parse_retry_after(value)
    status = exc.code() if hasattr(exc, "code") else None
    details = exc.details() if hasattr(exc, "details") else str(exc)
    return PagerouterClientError(status.name if status else "UNKNOWN", code, details or "", rid, wait)


def _wait(wait: str | None, escalation_wait_s: float | None, ocr: str | None = None,
          languages: list[str] | None = None, images: bool = False) -> dict:
    """The request's option fields; an unset escalation_wait_s stays unset (proto3 `optional`)."""
    out: dict = {"wait": wait or "", "ocr": ocr or "", "languages": list(languages or ()), "images": bool(images)}
    if escalation_wait_s is not None:
        out["escalation_wait_s"] = escalation_wait_s
    return out


def _request(file, filename, pages, password, wait=None, escalation_wait_s=None, ocr=None, languages=None,
             images=False) -> pb.ConvertRequest:
    data, name = read_input(file, filename)
    return pb.ConvertRequest(data=data, filename=name, pages=pages or "", password=password or "",
                             **_wait(wait, escalation_wait_s, ocr, languages, images))


def _page_request(file, filename, page, password, wait=None, escalation_wait_s=None, ocr=None, languages=None,
                  images=False) -> pb.PageRequest:
    data, name = read_input(file, filename)
    return pb.PageRequest(data=data, filename=name, page=page, password=password or "",
                          **_wait(wait, escalation_wait_s, ocr, languages, images))


def _metadata(application: str, api_key: str | None) -> tuple[tuple[str, str], ...]:
    key = resolve_api_key(api_key)
    md = (("application", application),)
    return md + ((("authorization", key.header_value()),) if key is not None else ())


def _item(reply: pb.StreamReply) -> Page | Document:
    if reply.WhichOneof("item") == "page":
        return proto_model.page_from_proto(reply.page)
    return proto_model.document_from_proto(reply.summary)


class PagerouterGrpcClient:
    def __init__(self, target: str, timeout: float = DEFAULT_TIMEOUT_S, application: str = "pagerouter",
                 api_key: str | None = None, retry: RetryPolicy | None = None):
        self._metadata = _metadata(application, api_key)  # before the channel: a bad key source raises
        self._channel = grpc.insecure_channel(target, options=_CHANNEL_OPTIONS)
        self._stub = pb_grpc.PageRouterStub(self._channel)
        self.timeout = timeout
        self.application = application
        self.retry = retry or RetryPolicy()
        self.last_request_id = ""

    def _once(self, method: str, request):
        try:
            reply = getattr(self._stub, method)(request, timeout=self.timeout, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise _error(exc) from None
        self.last_request_id = reply.request_id
        return reply

    def _call(self, method: str, request):
        """One unary call, sent again while the server refuses it (self.retry); raises its error."""
        return _retry.call(self.retry, self._once, method, request)

    def _open_stream(self, request):
        """(call, its first item reply or None): a refusal comes before any item, so only this part is retried."""
        call = self._stub.StreamDocument(request, timeout=self.timeout, metadata=self._metadata)
        try:
            for reply in call:
                self.last_request_id = reply.request_id
                if reply.WhichOneof("item") is not None:  # an empty reply precedes an error status
                    return call, reply
        except grpc.RpcError as exc:
            raise _error(exc) from None
        return call, None

    def __enter__(self) -> PagerouterGrpcClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def convert(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                password: str | None = None, wait: str | None = None,
                escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Document:
        reply = self._call("ConvertDocument",
                           _request(file, filename, pages, password, wait, escalation_wait_s, ocr, languages, images))
        return proto_model.document_from_proto(reply.document)

    def stream(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
               password: str | None = None, wait: str | None = None,
               escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Iterator[Page | Document]:
        request = _request(file, filename, pages, password, wait, escalation_wait_s, ocr, languages, images)
        call, first = _retry.call(self.retry, self._open_stream, request)
        if first is None:
            return
        yield _item(first)
        try:
            for reply in call:
                self.last_request_id = reply.request_id
                if reply.WhichOneof("item") is not None:  # an empty reply precedes an error status
                    yield _item(reply)
        except grpc.RpcError as exc:
            raise _error(exc) from None

    def convert_streamed(self, file, **kw) -> Document:
        return assemble(list(self.stream(file, **kw)))

    def convert_page(self, file: str | Path | bytes, page: int = 1, *, filename: str | None = None,
                     password: str | None = None, wait: str | None = None,
                     escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Page:
        reply = self._call("ConvertPage", _page_request(file, filename, page, password, wait, escalation_wait_s,
                                                        ocr, languages, images))
        return proto_model.page_from_proto(reply.page)

    # ------------------------------------------------------------------ jobs (clients/jobs.py)

    def submit_job(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                   password: str | None = None, wait: str | None = None, escalation_wait_s: float | None = None,
                   ocr: str | None = None, languages: list[str] | None = None, images: bool = False) -> JobStatus:
        """Hand a (long) document to the server as a job; returns at once with its queued status."""
        request = _request(file, filename, pages, password, wait, escalation_wait_s, ocr, languages, images)
        return status_from_proto(self._call("SubmitJob", request).job)

    def job(self, job_id: str) -> JobStatus:
        return status_from_proto(self._call("GetJob", pb.JobRequest(job_id=job_id)).job)

    def job_result(self, job_id: str) -> JobResult:
        reply = self._call("GetJobResult", pb.JobRequest(job_id=job_id))
        doc = proto_model.document_from_proto(reply.document) if reply.HasField("document") else None
        return JobResult(doc, reply.partial, status_from_proto(reply.job))

    def cancel_job(self, job_id: str) -> JobStatus:
        return status_from_proto(self._call("CancelJob", pb.JobRequest(job_id=job_id)).job)

    def wait_job(self, job_id: str, poll_s: float = 1.0, timeout: float | None = None, on_progress=None) -> JobStatus:
        return wait_job(self.job, job_id, poll_s, timeout, on_progress)


class AsyncPagerouterGrpcClient:
    def __init__(self, target: str, timeout: float = DEFAULT_TIMEOUT_S, application: str = "pagerouter",
                 api_key: str | None = None, retry: RetryPolicy | None = None):
        self._metadata = _metadata(application, api_key)  # before the channel: a bad key source raises
        self._channel = grpc.aio.insecure_channel(target, options=_CHANNEL_OPTIONS)
        self._stub = pb_grpc.PageRouterStub(self._channel)
        self.timeout = timeout
        self.application = application
        self.retry = retry or RetryPolicy()
        self.last_request_id = ""

    async def _once(self, method: str, request):
        try:
            reply = await getattr(self._stub, method)(request, timeout=self.timeout, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise _error(exc) from None
        self.last_request_id = reply.request_id
        return reply

    async def _call(self, method: str, request):
        return await _retry.acall(self.retry, self._once, method, request)

    async def _open_stream(self, request):
        call = self._stub.StreamDocument(request, timeout=self.timeout, metadata=self._metadata)
        try:
            async for reply in call:
                self.last_request_id = reply.request_id
                if reply.WhichOneof("item") is not None:
                    return call, reply
        except grpc.RpcError as exc:
            raise _error(exc) from None
        return call, None

    async def __aenter__(self) -> AsyncPagerouterGrpcClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def convert(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                      password: str | None = None, wait: str | None = None,
                      escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Document:
        reply = await self._call("ConvertDocument", _request(file, filename, pages, password, wait,
                                                             escalation_wait_s, ocr, languages, images))
        return proto_model.document_from_proto(reply.document)

    async def stream(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                     password: str | None = None, wait: str | None = None,
                     escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> AsyncIterator[Page | Document]:
        request = _request(file, filename, pages, password, wait, escalation_wait_s, ocr, languages, images)
        call, first = await _retry.acall(self.retry, self._open_stream, request)
        if first is None:
            return
        yield _item(first)
        try:
            async for reply in call:
                self.last_request_id = reply.request_id
                if reply.WhichOneof("item") is not None:
                    yield _item(reply)
        except grpc.RpcError as exc:
            raise _error(exc) from None

    async def convert_streamed(self, file, **kw) -> Document:
        return assemble([item async for item in self.stream(file, **kw)])

    async def convert_page(self, file: str | Path | bytes, page: int = 1, *, filename: str | None = None,
                           password: str | None = None, wait: str | None = None,
                           escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Page:
        reply = await self._call("ConvertPage", _page_request(file, filename, page, password, wait,
                                                              escalation_wait_s, ocr, languages, images))
        return proto_model.page_from_proto(reply.page)

    # ------------------------------------------------------------------ jobs (clients/jobs.py)
    async def submit_job(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                         password: str | None = None, wait: str | None = None,
                         escalation_wait_s: float | None = None, ocr: str | None = None,
                         languages: list[str] | None = None, images: bool = False) -> JobStatus:
        """As PagerouterGrpcClient.submit_job."""
        request = _request(file, filename, pages, password, wait, escalation_wait_s, ocr, languages, images)
        return status_from_proto((await self._call("SubmitJob", request)).job)

    async def job(self, job_id: str) -> JobStatus:
        return status_from_proto((await self._call("GetJob", pb.JobRequest(job_id=job_id))).job)

    async def job_result(self, job_id: str) -> JobResult:
        reply = await self._call("GetJobResult", pb.JobRequest(job_id=job_id))
        doc = proto_model.document_from_proto(reply.document) if reply.HasField("document") else None
        return JobResult(doc, reply.partial, status_from_proto(reply.job))

    async def cancel_job(self, job_id: str) -> JobStatus:
        return status_from_proto((await self._call("CancelJob", pb.JobRequest(job_id=job_id))).job)

    async def wait_job(self, job_id: str, poll_s: float = 1.0, timeout: float | None = None,
                       on_progress=None) -> JobStatus:
        return await wait_job_async(self.job, job_id, poll_s, timeout, on_progress)
