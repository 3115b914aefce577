"""Typed HTTP clients (sync and async) of the pagerouter Serve API.

    with PagerouterHttpClient("http://127.0.0.1:8000") as c:
        doc = c.convert("paper.pdf")                 # Document
        for item in c.stream("paper.pdf"): ...       # Page ... then the Document summary
        page = c.convert_page("paper.pdf", page=3)   # Page
        doc = c.convert("scan.pdf", wait="bulk")     # flagged pages may wait for a cold escalation tier
        doc = c.convert("scan.pdf", ocr="force", languages=["eng", "deu"], images=True)  # request options

Every call has a timeout; failures raise PagerouterClientError with the server's code. A
refusal (429/503 with Retry-After: the server is busy) is sent again after the hinted wait, within
`retry=RetryPolicy(...)`'s attempts and deadline (clients/retry.py); replies are read ignoring
fields this client does not know (clients/replies.py), so a newer server does not break it.
The API key (`Authorization: Bearer KEY`) comes from `api_key=` or, by default, from
PAGEROUTER_API_KEY / PAGEROUTER_API_KEY_FILE; a server without a key ignores it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx

from pagerouter.model import Document, Page

from . import retry as _retry
from .errors import PagerouterClientError, read_input, resolve_api_key
from .jobs import JobResult, JobStatus, wait_job, wait_job_async
from .replies import parse_json, parse_obj
from .retry_policy import RetryPolicy

DEFAULT_TIMEOUT_S = 600.0
_OCTET = {"content-type": "application/octet-stream"}


def _params(name: str, **kw: Any) -> dict[str, str]:
    out = {"filename": name}
    for k, v in kw.items():
        if v is None or v is False or v == []:
            continue
        # languages travel as one field, `eng+deu` (the server also reads `eng,deu`)
        out[k] = "true" if v is True else "+".join(v) if isinstance(v, (list, tuple)) else str(v)
    return out


def _raise_for(resp: httpx.Response) -> None:
    if resp.status_code < 400:
        return
    rid = resp.headers.get("x-request-id", "")
    wait = _retry.parse_retry_after(resp.headers.get("retry-after"))
    try:
        err = resp.json()["error"]
        raise PagerouterClientError(resp.status_code, err["code"], err["message"], err.get("request_id") or rid, wait)
    except (ValueError, KeyError, TypeError):
        raise PagerouterClientError(resp.status_code, "http_error", resp.text[:300], rid, wait) from None


def _headers(headers: dict[str, str] | None, api_key: str | None) -> dict[str, str]:
    out = dict(headers or {})
    key = resolve_api_key(api_key)
    if key is not None:
        out["authorization"] = key.header_value()  # httpx hides it in reprs
    return out


def _stream_item(line: str) -> Page | Document:
    obj = json.loads(line)
    kind = obj.get("type")
    if kind == "page":
        return parse_obj(Page, obj["page"])
    if kind == "document":
        return parse_obj(Document, obj["document"])
    if kind == "error":  # the stream's last line: what went wrong and which pages were not delivered
        err = obj["error"]
        status = 504 if err.get("code") == "timeout" else 500
        raise PagerouterClientError(status, err["code"], err["message"], err.get("request_id", ""))
    raise PagerouterClientError(500, "bad_stream", f"unexpected stream line: {line[:200]}")


def _cut(exc: Exception, pages: int) -> PagerouterClientError:
    """The connection broke mid-stream (the server or a proxy cut it) without a closing line."""
    return PagerouterClientError(
        502, "stream_cut", f"the stream was cut after {pages} pages without a closing line "
        f"({type(exc).__name__}: {str(exc)[:160]})",
    )


def assemble(items: list[Page | Document]) -> Document:
    """A Document from a stream's pages and its closing summary."""
    pages = [i for i in items if isinstance(i, Page)]
    summaries = [i for i in items if isinstance(i, Document)]
    if not summaries:
        raise PagerouterClientError(
            500, "bad_stream", f"the stream ended after {len(pages)} pages without its closing document line"
        )
    doc = summaries[-1].model_copy(deep=True)
    doc.pages = pages
    return doc


class PagerouterHttpClient:
    def __init__(self, base_url: str, timeout: float = DEFAULT_TIMEOUT_S, headers: dict[str, str] | None = None,
                 api_key: str | None = None, retry: RetryPolicy | None = None):
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=httpx.Timeout(timeout),
                                  headers=_headers(headers, api_key))
        self.retry = retry or RetryPolicy()
        self.last_request_id = ""

    def __enter__(self) -> PagerouterHttpClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _once(self, method: str, path: str, **kw) -> httpx.Response:
        resp = self._http.request(method, path, **kw)
        self.last_request_id = resp.headers.get("x-request-id", "")
        _raise_for(resp)
        return resp

    def _send(self, method: str, path: str, **kw) -> httpx.Response:
        """One request, sent again while the server refuses it (self.retry); raises its error."""
        return _retry.call(self.retry, self._once, method, path, **kw)

    def _post(self, path: str, file, filename, **params) -> httpx.Response:
        data, name = read_input(file, filename)
        return self._send("POST", path, content=data, params=_params(name, **params), headers=_OCTET)

    def _open_stream(self, data: bytes, params: dict[str, str]) -> httpx.Response:
        """The streaming reply, once its status says the pages will come (else its error)."""
        resp = self._http.send(self._http.build_request("POST", "/v1/convert", content=data, params=params,
                                                        headers=_OCTET), stream=True)
        self.last_request_id = resp.headers.get("x-request-id", "")
        if resp.status_code >= 400:
            try:
                resp.read()
            finally:
                resp.close()
            _raise_for(resp)
        return resp

    def convert(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                password: str | None = None, wait: str | None = None,
                escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Document:
        resp = self._post("/v1/convert", file, filename, pages=pages, password=password, wait=wait,
                          escalation_wait_s=escalation_wait_s, ocr=ocr,
                          languages=languages, images=images)
        return parse_json(Document, resp.content)

    def convert_markdown(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                         password: str | None = None, wait: str | None = None,
                         escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> str:
        return self._post("/v1/convert", file, filename, pages=pages, password=password, format="md",
                          wait=wait, escalation_wait_s=escalation_wait_s, ocr=ocr,
                          languages=languages, images=images).text

    def stream(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
               password: str | None = None, wait: str | None = None,
               escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Iterator[Page | Document]:
        """Pages in page order as they finish, then the Document summary (without pages)."""
        data, name = read_input(file, filename)
        params = _params(name, pages=pages, password=password, stream=True, wait=wait,
                         escalation_wait_s=escalation_wait_s, ocr=ocr,
                          languages=languages, images=images)
        # Only the opening is retried: once pages flow, the server has accepted the work.
        resp = _retry.call(self.retry, self._open_stream, data, params)
        got = 0
        try:
            for line in resp.iter_lines():
                if line.strip():
                    item = _stream_item(line)
                    got += isinstance(item, Page)
                    yield item
        except httpx.TransportError as exc:
            raise _cut(exc, got) from None
        finally:
            resp.close()

    def convert_streamed(self, file, **kw) -> Document:
        return assemble(list(self.stream(file, **kw)))

    def convert_page(self, file: str | Path | bytes, page: int = 1, *, filename: str | None = None,
                     password: str | None = None, wait: str | None = None,
                     escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Page:
        resp = self._post("/v1/pages", file, filename, page=page, password=password, wait=wait,
                          escalation_wait_s=escalation_wait_s, ocr=ocr,
                          languages=languages, images=images)
        return parse_json(Page, resp.content)

    def health(self) -> dict:
        # Not retried: a health probe reports the server's state now, 503 included.
        resp = self._http.get("/healthz")
        _raise_for(resp)
        return resp.json()

    # ------------------------------------------------------------------ jobs (clients/jobs.py)
    def submit_job(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                   password: str | None = None, wait: str | None = None, escalation_wait_s: float | None = None,
                   ocr: str | None = None, languages: list[str] | None = None, images: bool = False,
                   format: str | None = None) -> JobStatus:
        """Hand a (long) document to the server as a job; returns at once with its queued status."""
        resp = self._post("/v1/jobs", file, filename, pages=pages, password=password, wait=wait,
                          escalation_wait_s=escalation_wait_s, ocr=ocr, languages=languages, images=images,
                          format=format)
        return parse_json(JobStatus, resp.content)

    def job(self, job_id: str) -> JobStatus:
        resp = self._send("GET", f"/v1/jobs/{job_id}")
        return parse_json(JobStatus, resp.content)

    def job_result(self, job_id: str) -> JobResult:
        """The document so far (finished pages in page order), partial until the job is done."""
        resp = self._send("GET", f"/v1/jobs/{job_id}/result", params={"format": "json"})
        if resp.status_code == 202:  # not opened yet: the body is the status
            return JobResult(None, True, parse_json(JobStatus, resp.content))
        doc = parse_json(Document, resp.content)
        return JobResult(doc, resp.headers.get("x-job-partial") != "false", self.job(job_id))

    def job_markdown(self, job_id: str) -> str:
        return self._send("GET", f"/v1/jobs/{job_id}/result", params={"format": "md"}).text

    def cancel_job(self, job_id: str) -> JobStatus:
        return parse_json(JobStatus, self._send("DELETE", f"/v1/jobs/{job_id}").content)

    def wait_job(self, job_id: str, poll_s: float = 1.0, timeout: float | None = None, on_progress=None) -> JobStatus:
        return wait_job(self.job, job_id, poll_s, timeout, on_progress)

    def config(self) -> dict:
        return self._send("GET", "/v1/config").json()


class AsyncPagerouterHttpClient:
    def __init__(self, base_url: str, timeout: float = DEFAULT_TIMEOUT_S, headers: dict[str, str] | None = None,
                 api_key: str | None = None, retry: RetryPolicy | None = None):
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=httpx.Timeout(timeout),
                                       headers=_headers(headers, api_key))
        self.retry = retry or RetryPolicy()
        self.last_request_id = ""

    async def __aenter__(self) -> AsyncPagerouterHttpClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def _once(self, method: str, path: str, **kw) -> httpx.Response:
        resp = await self._http.request(method, path, **kw)
        self.last_request_id = resp.headers.get("x-request-id", "")
        _raise_for(resp)
        return resp

    async def _send(self, method: str, path: str, **kw) -> httpx.Response:
        """One request, sent again while the server refuses it (self.retry); raises its error."""
        return await _retry.acall(self.retry, self._once, method, path, **kw)

    async def _post(self, path: str, file, filename, **params) -> httpx.Response:
        data, name = read_input(file, filename)
        return await self._send("POST", path, content=data, params=_params(name, **params), headers=_OCTET)

    async def _open_stream(self, data: bytes, params: dict[str, str]) -> httpx.Response:
        resp = await self._http.send(self._http.build_request("POST", "/v1/convert", content=data, params=params,
                                                              headers=_OCTET), stream=True)
        self.last_request_id = resp.headers.get("x-request-id", "")
        if resp.status_code >= 400:
            try:
                await resp.aread()
            finally:
                await resp.aclose()
            _raise_for(resp)
        return resp

    async def convert(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                      password: str | None = None, wait: str | None = None,
                      escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Document:
        resp = await self._post("/v1/convert", file, filename, pages=pages, password=password, wait=wait,
                                escalation_wait_s=escalation_wait_s, ocr=ocr,
                          languages=languages, images=images)
        return parse_json(Document, resp.content)

    async def stream(self, file: str | Path | bytes, *, filename: str | None = None, pages: str | None = None,
                     password: str | None = None, wait: str | None = None,
                     escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> AsyncIterator[Page | Document]:
        data, name = read_input(file, filename)
        params = _params(name, pages=pages, password=password, stream=True, wait=wait,
                         escalation_wait_s=escalation_wait_s, ocr=ocr,
                          languages=languages, images=images)
        resp = await _retry.acall(self.retry, self._open_stream, data, params)
        got = 0
        try:
            async for line in resp.aiter_lines():
                if line.strip():
                    item = _stream_item(line)
                    got += isinstance(item, Page)
                    yield item
        except httpx.TransportError as exc:
            raise _cut(exc, got) from None
        finally:
            await resp.aclose()

    async def convert_streamed(self, file, **kw) -> Document:
        return assemble([item async for item in self.stream(file, **kw)])

    async def convert_page(self, file: str | Path | bytes, page: int = 1, *, filename: str | None = None,
                           password: str | None = None, wait: str | None = None,
                           escalation_wait_s: float | None = None, ocr: str | None = None,
                languages: list[str] | None = None, images: bool = False) -> Page:
        resp = await self._post("/v1/pages", file, filename, page=page, password=password, wait=wait,
                                escalation_wait_s=escalation_wait_s, ocr=ocr,
                          languages=languages, images=images)
        return parse_json(Page, resp.content)

    async def health(self) -> dict:
        resp = await self._http.get("/healthz")
        _raise_for(resp)
        return resp.json()

    # ------------------------------------------------------------------ jobs (clients/jobs.py)
    async def submit_job(self, file: str | Path | bytes, *, filename: str | None = None, **options: Any) -> JobStatus:
        """As PagerouterHttpClient.submit_job (same keyword options)."""
        resp = await self._post("/v1/jobs", file, filename, **options)
        return parse_json(JobStatus, resp.content)

    async def job(self, job_id: str) -> JobStatus:
        resp = await self._send("GET", f"/v1/jobs/{job_id}")
        return parse_json(JobStatus, resp.content)

    async def job_result(self, job_id: str) -> JobResult:
        resp = await self._send("GET", f"/v1/jobs/{job_id}/result", params={"format": "json"})
        if resp.status_code == 202:
            return JobResult(None, True, parse_json(JobStatus, resp.content))
        doc = parse_json(Document, resp.content)
        return JobResult(doc, resp.headers.get("x-job-partial") != "false", await self.job(job_id))

    async def cancel_job(self, job_id: str) -> JobStatus:
        return parse_json(JobStatus, (await self._send("DELETE", f"/v1/jobs/{job_id}")).content)

    async def wait_job(self, job_id: str, poll_s: float = 1.0, timeout: float | None = None,
                       on_progress=None) -> JobStatus:
        return await wait_job_async(self.job, job_id, poll_s, timeout, on_progress)
