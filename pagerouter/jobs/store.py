"""The job store: one folder per job in a configured directory, shared by every ingress replica.

    DIR/<id>/input         the uploaded document (written once, before the job is visible)
    DIR/<id>/options.json  the validated request options (mode 0600: may hold a PDF password)
    DIR/<id>/status.json   state, progress, timestamps, the lease; replaced atomically (temp + rename)
    DIR/<id>/head.json     the opened document without pages (written by the first run)
    DIR/<id>/pages.jsonl   one finished page per line, appended and fsynced before it counts
    DIR/<id>/lock          flock'd around every read-modify-write of status.json

Why files and not Ray's own storage: a job must outlive the replica (and the Ray session) that
ran it; files in one directory are visible to a restarted replica, to every node of a cluster
when the directory is shared, and to an operator with `ls`. A job is `status.json`'s folder:
readers never see a half-written status (rename is atomic) and a torn last line of pages.jsonl
(the writer was killed) is cut off by the next claim, so a resumed run never appends after it.

A running job has an owner (one replica) and a lease (`lease_until`) renewed by heartbeats. A
job whose lease ran out is claimable: whichever replica scans first takes it under the lock and
resumes it, converting only the pages not yet in pages.jsonl (`remaining`). Reading pages keeps
the first line per page number, so even a late write of a replica that lost its lease never
duplicates a page.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..intake.inputs import pages_text as page_numbers_text  # noqa: F401 - the resume plan's page selection

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled"})
_ID = re.compile(r"^[0-9a-f]{32}$")
STATUS_EVERY_S = 0.5  # status.json rewrites while pages arrive (pages.jsonl is fsynced per page)


class JobNotFound(KeyError):
    """No job with that id (never existed, expired, or not a job id at all)."""

    def __init__(self, job_id: str):
        super().__init__(job_id)
        self.job_id = job_id

    def __str__(self) -> str:
        return f"no job {self.job_id!r} (unknown or expired)"


class JobStatus(BaseModel):
    """What `GET /v1/jobs/{id}` answers (plus the private bookkeeping below `owner`)."""

    id: str = Field(description="The job id (32 hex digits).")
    source: str = Field(description="The uploaded file's name.")
    state: JobState = Field(description="queued, running, done, failed or cancelled.")
    pages_total: int | None = Field(default=None, description="Pages to convert; null until the file was opened.")
    pages_done: int = Field(default=0, description="Pages finished (any status).")
    pages_by_route: dict[str, int] = Field(default_factory=dict, description="Finished pages per triage route.")
    pages_by_status: dict[str, int] = Field(default_factory=dict, description="Finished pages per status.")
    errors: list[str] = Field(default_factory=list, description="The job's error, then failed pages' errors.")
    created_at: float = Field(description="Unix time the job was accepted.")
    started_at: float | None = Field(default=None, description="Unix time its first run started.")
    finished_at: float | None = Field(default=None, description="Unix time it reached done, failed or cancelled.")
    updated_at: float = Field(description="Unix time of the last change.")
    runs: int = Field(default=0, description="Runs started: more than 1 when a run was interrupted and resumed.")
    owner: str | None = Field(default=None, description="The replica running it (host:pid:tag), while running.")
    lease_until: float | None = Field(default=None, description="Unix time the owner's claim runs out.")
    numbers: list[int] = Field(default_factory=list, description="The page numbers to convert, once known.")
    engines: dict[str, str] = Field(default_factory=dict, description="Engine name -> version used.")

    def public(self) -> dict[str, Any]:
        return self.model_dump(exclude={"numbers", "lease_until", "engines"})

    @property
    def finished(self) -> bool:
        return self.state in FINISHED


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to a temp file beside `path`, fsync, rename over `path`, fsync the folder."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


class JobStore:
    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser()
        self.root.mkdir(parents=True, exist_ok=True)
        # page counters of the jobs this process runs, between status writes (see add_page)
        self._progress: dict[str, JobStatus] = {}
        self._written: dict[str, float] = {}

    # ------------------------------------------------------------------ paths and locking
    def folder(self, job_id: str) -> Path:
        if not isinstance(job_id, str) or not _ID.match(job_id):  # also keeps ids from naming other paths
            raise JobNotFound(str(job_id))
        return self.root / job_id

    @contextmanager
    def _locked(self, job_id: str) -> Iterator[Path]:
        d = self.folder(job_id)
        if not (d / "status.json").exists():
            raise JobNotFound(job_id)
        fd = os.open(d / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the kernel drops it if the holder dies
            yield d
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ create / read
    def create(self, data: bytes, source: str, options: dict[str, Any], now: float | None = None) -> JobStatus:
        """A queued job; its folder becomes visible (status.json) only once input and options are on disk."""
        now = time.time() if now is None else now
        job_id = uuid.uuid4().hex
        d = self.root / job_id
        d.mkdir()
        write_atomic(d / "input", data)
        write_atomic(d / "options.json", json.dumps(options).encode(), mode=0o600)
        status = JobStatus(id=job_id, source=source, state="queued", created_at=now, updated_at=now)
        self._save(d, status)
        return status

    def get(self, job_id: str) -> JobStatus:
        try:
            raw = (self.folder(job_id) / "status.json").read_bytes()
        except FileNotFoundError:
            raise JobNotFound(job_id) from None
        return JobStatus.model_validate_json(raw)

    def input(self, job_id: str) -> bytes:
        return (self.folder(job_id) / "input").read_bytes()

    def options(self, job_id: str) -> dict[str, Any]:
        return json.loads((self.folder(job_id) / "options.json").read_text())

    def ids(self) -> list[str]:
        """Every job id in the directory, oldest first (by folder time; ties by id)."""
        out = []
        for p in self.root.iterdir():
            if _ID.match(p.name) and (p / "status.json").exists():
                try:
                    out.append((p.stat().st_mtime, p.name))
                except FileNotFoundError:
                    continue  # deleted meanwhile
        return [i for _, i in sorted(out)]

    def statuses(self) -> list[JobStatus]:
        out = []
        for i in self.ids():
            try:
                out.append(self.get(i))
            except (JobNotFound, ValueError):
                continue  # deleted meanwhile
        return out

    def pending(self) -> int:
        """Jobs queued or running, over every replica."""
        return sum(1 for s in self.statuses() if not s.finished)

    @staticmethod
    def _save(d: Path, status: JobStatus) -> None:
        write_atomic(d / "status.json", status.model_dump_json().encode())

    # ------------------------------------------------------------------ head and pages
    def set_head(self, job_id: str, head: dict[str, Any], numbers: list[int], owner: str) -> JobStatus:
        """Record the opened document (first run only) and the pages to convert."""
        with self._locked(job_id) as d:
            status = self.get(job_id)
            if status.owner != owner:
                raise LeaseLost(job_id)
            if not (d / "head.json").exists():
                write_atomic(d / "head.json", json.dumps(head).encode())
            if not status.numbers:
                status.numbers, status.pages_total = list(numbers), len(numbers)
                status.updated_at = time.time()
                self._save(d, status)
            return status

    def head(self, job_id: str) -> dict[str, Any] | None:
        try:
            return json.loads((self.folder(job_id) / "head.json").read_text())
        except FileNotFoundError:
            return None

    def pages(self, job_id: str) -> list[dict[str, Any]]:
        """Finished pages in page order, the first line per page number only; a torn line is skipped."""
        path = self.folder(job_id) / "pages.jsonl"
        seen: dict[int, dict[str, Any]] = {}
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return []
        for line in raw.split(b"\n"):
            try:
                page = json.loads(line)
            except ValueError:
                continue
            if isinstance(page, dict) and isinstance(page.get("number"), int):
                seen.setdefault(page["number"], page)
        return [seen[n] for n in sorted(seen)]

    def add_page(self, job_id: str, page: dict[str, Any], owner: str) -> JobStatus:
        """Append one finished page (fsync: the page counts from here) and count it; LeaseLost when
        another replica owns the job now, or it was cancelled or finished.

        The counters live in this process between status writes: status.json is rewritten at
        most every STATUS_EVERY_S (and at every heartbeat and at the end), so a page costs one
        fsync, not three; a status read may lag the pages by that much, the result never does."""
        line = (json.dumps(page, ensure_ascii=False) + "\n").encode()
        with self._locked(job_id) as d:
            on_disk = self.get(job_id)
            if on_disk.owner != owner or on_disk.finished:
                raise LeaseLost(job_id)
            fd = os.open(d / "pages.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            counts = self._progress.get(job_id)
            if counts is None or counts.runs != on_disk.runs:  # the first page of this run: from the claim's count
                counts = on_disk.model_copy(deep=True)
            self._count(counts, page)
            self._progress[job_id] = counts
            merged = self._merge(on_disk, counts)
            now = time.time()
            if now - self._written.get(job_id, 0.0) >= STATUS_EVERY_S:
                self._save(d, merged)
                self._written[job_id] = now
            return merged

    def _merge(self, on_disk: JobStatus, counts: JobStatus | None = None) -> JobStatus:
        """The status file's state and lease with this process's page counters (if it has newer ones)."""
        counts = counts or self._progress.get(on_disk.id)
        if counts is None or counts.runs != on_disk.runs:
            return on_disk
        return on_disk.model_copy(update={
            "pages_done": counts.pages_done, "pages_by_route": dict(counts.pages_by_route),
            "pages_by_status": dict(counts.pages_by_status), "errors": list(counts.errors), "updated_at": time.time(),
        })

    @staticmethod
    def _count(status: JobStatus, page: dict[str, Any]) -> None:
        status.pages_done += 1
        route = page.get("route") or "none"
        status.pages_by_route[route] = status.pages_by_route.get(route, 0) + 1
        st = page.get("status") or "unknown"
        status.pages_by_status[st] = status.pages_by_status.get(st, 0) + 1
        if page.get("error"):
            status.errors.append(page["error"])

    def remaining(self, job_id: str) -> list[int] | None:
        """The resume plan: pages still to convert (None = all, the document was never opened)."""
        status = self.get(job_id)
        if not status.numbers:
            return None
        done = {p["number"] for p in self.pages(job_id)}
        return [n for n in status.numbers if n not in done]

    # ------------------------------------------------------------------ lifecycle
    def claim(self, job_id: str, owner: str, lease_s: float, now: float | None = None,
              max_runs: int | None = None) -> JobStatus | None:
        """Take a queued job, or a running one whose lease ran out; None when it is not claimable.
        A job that already started `max_runs` runs is failed instead (its runs keep dying).

        The progress counters are rebuilt from pages.jsonl (the last status may predate the last
        page appended), and a torn last line is cut so the next append starts a line of its own."""
        now = time.time() if now is None else now
        with self._locked(job_id) as d:
            status = self.get(job_id)
            if status.finished or (status.state == "running" and (status.lease_until or 0) > now):
                return None
            _cut_torn_tail(d / "pages.jsonl")
            self._progress.pop(job_id, None)
            pages = self.pages(job_id)
            status.pages_done, status.pages_by_route, status.pages_by_status = 0, {}, {}
            status.errors = [e for e in status.errors if e.startswith("run ")]  # keep interruption notes
            for page in pages:
                self._count(status, page)
            if status.state == "running":
                status.errors.append(f"run {status.runs} by {status.owner} stopped (lease ran out); resumed")
                if max_runs is not None and status.runs >= max_runs:
                    status.errors.insert(0, f"{status.source}: {status.runs} runs of this job stopped without "
                                            "finishing (its replica died each time); not resumed again")
                    status.state, status.finished_at, status.updated_at = "failed", now, now
                    status.owner, status.lease_until = None, None
                    self._save(d, status)
                    return None
            status.state, status.owner, status.lease_until = "running", owner, now + lease_s
            status.runs += 1
            status.started_at = status.started_at or now
            status.updated_at = now
            self._save(d, status)
            return status

    def heartbeat(self, job_id: str, owner: str, lease_s: float, now: float | None = None) -> JobStatus:
        """Renew the lease; LeaseLost when the job was cancelled, finished or taken over."""
        now = time.time() if now is None else now
        with self._locked(job_id) as d:
            status = self.get(job_id)
            if status.owner != owner or status.finished:
                raise LeaseLost(job_id)
            status = self._merge(status)
            status.lease_until, status.updated_at = now + lease_s, now
            self._save(d, status)
            self._written[job_id] = now
            return status

    def finish(self, job_id: str, owner: str, state: JobState, error: str | None = None,
               engines: dict[str, str] | None = None) -> JobStatus:
        with self._locked(job_id) as d:
            status = self.get(job_id)
            if status.owner != owner or status.finished:
                raise LeaseLost(job_id)
            status = self._merge(status)
            self._progress.pop(job_id, None)
            self._written.pop(job_id, None)
            now = time.time()
            if error:
                status.errors.insert(0, error)
            status.engines.update(engines or {})
            status.state, status.finished_at, status.updated_at = state, now, now
            status.owner, status.lease_until = None, None
            self._save(d, status)
            return status

    def cancel(self, job_id: str) -> JobStatus:
        """Mark a job cancelled (its owner sees it at its next heartbeat or page and stops); a finished job is left as is."""
        with self._locked(job_id) as d:
            status = self.get(job_id)
            if status.finished:
                return status
            # exact counters from the pages on disk (the owner's last status write may lag them;
            # under the lock no more page can be appended once this is saved)
            status.pages_done, status.pages_by_route, status.pages_by_status = 0, {}, {}
            status.errors = [e for e in status.errors if e.startswith("run ")]
            for page in self.pages(job_id):
                self._count(status, page)
            self._progress.pop(job_id, None)
            now = time.time()
            status.state, status.finished_at, status.updated_at = "cancelled", now, now
            status.owner, status.lease_until = None, None
            self._save(d, status)
            return status

    def expire(self, ttl_s: float, now: float | None = None) -> list[str]:
        """Delete finished jobs older than `ttl_s` since they finished; their ids."""
        now = time.time() if now is None else now
        gone = []
        for status in self.statuses():
            if status.finished and (status.finished_at or status.updated_at) + ttl_s < now:
                shutil.rmtree(self.root / status.id, ignore_errors=True)
                gone.append(status.id)
        return gone

    def claimable(self, now: float | None = None) -> list[str]:
        """Queued jobs and running ones with a lapsed lease, oldest first."""
        now = time.time() if now is None else now
        ready = [s for s in self.statuses()
                 if s.state == "queued" or (s.state == "running" and (s.lease_until or 0) <= now)]
        return [s.id for s in sorted(ready, key=lambda s: (s.created_at, s.id))]


class LeaseLost(Exception):
    """This replica no longer owns the job (cancelled, finished, or resumed elsewhere)."""


def _cut_torn_tail(path: Path) -> None:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if not size:
        return
    with open(path, "r+b") as f:
        data = f.read()
        if data.endswith(b"\n"):
            return
        f.truncate(data.rfind(b"\n") + 1)  # drop the partial line (0 when there is no full line)
        f.flush()
        os.fsync(f.fileno())
