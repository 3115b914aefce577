"""The jobs of one serving process: submit, status, cancel, result, over the shared job files.

The state lives in files (pagerouter/jobs/store.py, directory `serve.jobs.dir`), never in the
process: any ingress replica answers any job, and a job whose replica died is resumed by the
next replica's scan (pagerouter/jobs/runner.py). A job's conversion is the caller's own
`convert(data, source, options, selection)`, run in the background with no request deadline.
The jobs waiting or running in all are bounded by serve.jobs.max_queued (`JobsFull`).
Lookups of an unknown job raise `pagerouter.jobs.JobNotFound`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from pagerouter.config.jobs import JobsConfig
from pagerouter.flow.options import RequestOptions
from pagerouter.jobs import JobScheduler, JobStatus, JobStore, job_document
from pagerouter.model import Document

Convert = Callable[[bytes, str, RequestOptions, "str | None"], AsyncIterator]
RESULT_FORMATS = ("json", "md")


class JobsFull(Exception):
    """serve.jobs.max_queued jobs are already waiting or running (503 / RESOURCE_EXHAUSTED `jobs_full`)."""


def job_options(opts: RequestOptions) -> dict[str, Any]:
    """What a job keeps of its request options: everything but `stream` (a job's result is fetched,
    not streamed). Jobs are bulk work: `wait` defaults to `bulk` (serve.escalation_timeout_bulk_s)."""
    out = opts.model_dump(mode="json", exclude_none=True, exclude={"stream"})
    out.setdefault("wait", "bulk")
    return out


class JobDesk:
    def __init__(self, jc: JobsConfig, convert: Convert):
        self.jc = jc
        self.store = JobStore(jc.dir)

        def items(data: bytes, source: str, options: dict, selection: str | None) -> AsyncIterator:
            return convert(data, source, RequestOptions.model_validate(options), selection)

        self.scheduler = JobScheduler(self.store, jc, items)

    def start(self) -> JobDesk:
        """Start the scheduler on the running event loop (once): a restarted replica then resumes
        orphaned jobs without waiting for a request. Off a loop it starts at the first call."""
        try:
            self.scheduler.start()
        except RuntimeError:  # no running loop (a direct construction)
            pass
        return self

    async def submit(self, data: bytes, name: str, opts: RequestOptions) -> JobStatus:
        if await asyncio.to_thread(self.store.pending) >= self.jc.max_queued:
            raise JobsFull(f"{self.jc.max_queued} jobs are already waiting or running (serve.jobs.max_queued); "
                           "retry later")
        status = await asyncio.to_thread(self.store.create, data, name, job_options(opts))
        self.scheduler.kick()
        return status

    async def status(self, job_id: str) -> JobStatus:
        return await asyncio.to_thread(self.store.get, job_id)

    async def cancel(self, job_id: str) -> JobStatus:
        status = await asyncio.to_thread(self.store.cancel, job_id)
        self.scheduler.cancel_local(job_id)  # another replica's run sees the mark at its next page or heartbeat
        return status

    async def result(self, job_id: str) -> tuple[Document | None, JobStatus]:
        """The document so far (None before the file was opened) and the job's status."""
        return await asyncio.to_thread(job_document, self.store, job_id)

    async def result_format(self, job_id: str, asked: str | None) -> str:
        """The result's format: the one asked for, else the job's own (default json); ValueError
        naming any other."""
        fmt = (asked or (await asyncio.to_thread(self.store.options, job_id)).get("format") or "json").lower()
        if fmt not in RESULT_FORMATS:
            raise ValueError(f"format: {fmt!r} is not one of {', '.join(RESULT_FORMATS)}")
        return fmt
