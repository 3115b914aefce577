"""Job types shared by the HTTP and gRPC clients (`submit_job`, `job`, `job_result`, `cancel_job`,
`wait_job`): the job's status is `pagerouter.jobs.JobStatus` (the same fields as
`GET /v1/jobs/{id}`), a result is the document so far and whether it is partial."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pagerouter.jobs import JobStatus
from pagerouter.model import Document

from .errors import PagerouterClientError

__all__ = ["JobResult", "JobStatus", "wait_job", "wait_job_async"]


@dataclass
class JobResult:
    """The job's document so far (None before the file was opened), in page order; `partial`
    until the job is done; `status` as it was when the result was read."""

    document: Document | None
    partial: bool
    status: JobStatus


def status_from_proto(msg) -> JobStatus:
    return JobStatus(
        id=msg.id, source=msg.source, state=msg.state, pages_done=msg.pages_done, errors=list(msg.errors),
        pages_total=msg.pages_total if msg.HasField("pages_total") else None,
        pages_by_route=dict(msg.pages_by_route), pages_by_status=dict(msg.pages_by_status),
        created_at=msg.created_at, updated_at=msg.updated_at, runs=msg.runs, owner=msg.owner or None,
        started_at=msg.started_at if msg.HasField("started_at") else None,
        finished_at=msg.finished_at if msg.HasField("finished_at") else None,
    )


def _timeout_error(job_id: str, status: JobStatus, timeout: float) -> PagerouterClientError:
    return PagerouterClientError(
        "local", "timeout", f"job {job_id} still {status.state} after {timeout:g} s "
        f"({status.pages_done}/{status.pages_total or '?'} pages); it keeps running on the server",
    )


def wait_job(get: Callable[[str], JobStatus], job_id: str, poll_s: float, timeout: float | None,
             on_progress: Callable[[JobStatus], None] | None = None) -> JobStatus:
    """Poll `get(job_id)` until the job is done, failed or cancelled; PagerouterClientError
    `timeout` past `timeout` seconds (the job keeps running on the server). A poll the server
    refuses as busy (429/503) is repeated inside `get` (the client's RetryPolicy), so a busy
    moment does not end the wait."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        status = get(job_id)
        if on_progress is not None:
            on_progress(status)
        if status.finished:
            return status
        if deadline is not None and time.monotonic() > deadline:
            raise _timeout_error(job_id, status, timeout)
        time.sleep(poll_s)


async def wait_job_async(get: Callable[[str], Awaitable[JobStatus]], job_id: str, poll_s: float,
                         timeout: float | None, on_progress: Callable[[JobStatus], None] | None = None) -> JobStatus:
    """As `wait_job`, for an async client: polls without blocking the event loop."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        status = await get(job_id)
        if on_progress is not None:
            on_progress(status)
        if status.finished:
            return status
        if deadline is not None and time.monotonic() > deadline:
            raise _timeout_error(job_id, status, timeout)
        await asyncio.sleep(poll_s)
