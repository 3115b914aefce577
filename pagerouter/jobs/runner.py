"""Runs jobs from the store inside one server process (an ingress replica), with no Ray in sight.

`JobScheduler` scans the job directory every `poll_s` (and at once when told a job was
submitted): it deletes expired jobs, claims queued jobs and orphaned ones (lease ran out: their
replica died) up to `max_running_per_replica`, and runs each as an asyncio task. A run converts
only the pages the store's resume plan names, appends every finished page (fsynced) as it
arrives, renews its lease every `heartbeat_s` and stops when the lease is lost (cancelled by
DELETE on any replica, or taken over): the conversion is closed, which cancels its stage work
exactly as a client disconnect does.

The conversion itself is passed in (`convert(data, source, options, selection)`: an async
iterator of DocumentHead / Page / DocumentTail, or an InputProblem), so the Serve ingress and the
tests plug in their own.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from ..config.jobs import JobsConfig
from ..model import Document, Page
from ..wire.items import DocumentHead, DocumentTail, InputProblem
from .store import JobStatus, JobStore, LeaseLost, page_numbers_text

log = logging.getLogger("pagerouter.jobs")

Convert = Callable[[bytes, str, dict[str, Any], str | None], AsyncIterator[Any]]


def owner_tag() -> str:
    """host:pid:random, unique per process start (a restarted replica is a new owner)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def job_document(store: JobStore, job_id: str) -> tuple[Document | None, JobStatus]:
    """The document so far (finished pages in page order) and the job's status; None before the
    file was opened. Pages finish in page order, so a running job's document is a prefix."""
    status = store.get(job_id)
    head = store.head(job_id)
    if head is None:
        return None, status
    doc = Document.model_validate({**head, "pages": store.pages(job_id), "engines": {**head.get("engines", {}), **status.engines}})
    return doc, status


class JobScheduler:
    def __init__(self, store: JobStore, cfg: JobsConfig, convert: Convert, owner: str | None = None):
        self.store, self.cfg, self.convert = store, cfg, convert
        self.owner = owner or owner_tag()
        self.tasks: dict[str, asyncio.Task] = {}
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task | None = None
        self._stopping = False

    # ------------------------------------------------------------------ the scan loop
    def start(self) -> None:
        if self._loop_task is None:
            self._loop_task = asyncio.get_running_loop().create_task(self._loop(), name="pagerouter-jobs")

    def kick(self) -> None:
        """A job was submitted: scan now instead of at the next poll."""
        self._wake.set()

    async def stop(self) -> None:
        self._stopping = True
        for task in [self._loop_task, *self.tasks.values()]:
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in [self._loop_task, *self.tasks.values()] if t), return_exceptions=True)

    async def _loop(self) -> None:
        while not self._stopping:
            try:
                await self.scan()
            except Exception as exc:  # noqa: BLE001 - a bad folder must not stop the scheduler
                log.warning("jobs: scan of %s failed: %s", self.store.root, exc)
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancel that lands
            # as the wake event is set (a finishing run sets it), and stop() then waited forever.
            try:
                async with asyncio.timeout(self.cfg.poll_s):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()

    async def scan(self) -> list[str]:
        """One pass: expire, then claim and start what fits; the ids started."""
        await asyncio.to_thread(self.store.expire, self.cfg.ttl_s)
        started = []
        for job_id in await asyncio.to_thread(self.store.claimable):
            if len(self.tasks) >= self.cfg.max_running_per_replica:
                break
            if job_id in self.tasks:
                continue
            try:
                status = await asyncio.to_thread(
                    self.store.claim, job_id, self.owner, self.cfg.lease_s, None, self.cfg.max_runs
                )
            except Exception as exc:  # noqa: BLE001 - expired or deleted meanwhile
                log.info("jobs: %s not claimed: %s", job_id, exc)
                continue
            if status is None:
                continue  # another replica took it first
            self.tasks[job_id] = asyncio.get_running_loop().create_task(self._run(status), name=f"job-{job_id}")
            started.append(job_id)
        return started

    def cancel_local(self, job_id: str) -> bool:
        """Stop this replica's run of a job (after the store marked it cancelled)."""
        task = self.tasks.get(job_id)
        if task is None:
            return False
        task.cancel()
        return True

    # ------------------------------------------------------------------ one run
    async def _run(self, status: JobStatus) -> None:
        job_id = status.id
        me = asyncio.current_task()
        beat = asyncio.get_running_loop().create_task(self._heartbeat(job_id, me))
        try:
            await self._convert(status)
        except LeaseLost:
            log.info("jobs: %s: lease lost (cancelled or taken over); stopped", job_id)
        except asyncio.CancelledError:
            if self._stopping:  # (the loop task's cancelled() stays False until it has finished)
                raise  # the replica is shutting down: the lease runs out, another replica resumes it
            me.uncancel()
            log.info("jobs: %s: stopped (cancelled)", job_id)
        except Exception as exc:  # noqa: BLE001 - the job fails with one line, the scheduler lives on
            why = _one_line(exc)
            log.warning("jobs: %s failed: %s", job_id, why)
            try:
                await asyncio.to_thread(self.store.finish, job_id, self.owner, "failed", f"{status.source}: {why}")
            except Exception:  # noqa: BLE001 - lost or deleted meanwhile
                pass
        finally:
            beat.cancel()
            self.tasks.pop(job_id, None)
            self._wake.set()  # a slot is free: look for the next job

    async def _heartbeat(self, job_id: str, run: asyncio.Task) -> None:
        while True:
            await asyncio.sleep(self.cfg.heartbeat_s)
            try:
                await asyncio.to_thread(self.store.heartbeat, job_id, self.owner, self.cfg.lease_s)
            except Exception:  # noqa: BLE001 - LeaseLost, or the job folder is gone: stop the run
                run.cancel()
                return

    async def _convert(self, status: JobStatus) -> None:
        job_id, store = status.id, self.store
        data = await asyncio.to_thread(store.input, job_id)
        options = await asyncio.to_thread(store.options, job_id)
        remaining = await asyncio.to_thread(store.remaining, job_id)
        engines: dict[str, str] = {}
        if remaining != []:
            selection = options.get("pages") if remaining is None else page_numbers_text(remaining)
            items = self.convert(data, status.source, options, selection)
            async with aclosing(items):  # closing it cancels the stage work still running
                async for item in items:
                    if isinstance(item, InputProblem):
                        await asyncio.to_thread(store.finish, job_id, self.owner, "failed", item.message)
                        return
                    if isinstance(item, DocumentHead):
                        head = item.document.model_dump(mode="json")
                        await asyncio.to_thread(store.set_head, job_id, head, item.numbers, self.owner)
                    elif isinstance(item, Page):
                        await asyncio.to_thread(store.add_page, job_id, item.model_dump(mode="json"), self.owner)
                    elif isinstance(item, DocumentTail):
                        engines.update(item.engines)
        await asyncio.to_thread(store.finish, job_id, self.owner, "done", None, engines)


def _one_line(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        exc = cause
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200]}" if lines else type(exc).__name__
