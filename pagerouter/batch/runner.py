"""Runs a planned batch: a bounded pool of worker threads, each with its own backend.

A backend turns (bytes, name) into a `Document`: `LocalBackend` is an in-process `Converter`
(one per worker thread, so no converter state is shared between threads; MuPDF already runs in
the converter's isolation worker processes), `HttpBackend` / `GrpcBackend` are the typed clients
(the API key comes from PAGEROUTER_API_KEY / PAGEROUTER_API_KEY_FILE, as for `pagerouter client`).

Per item: read the bytes once (fsio.read_input: a local path or a filesystem URI), hash them,
skip it when the journal says a rerun skips it (journal.skip_statuses, the rule `--ray` keeps
too), else judge it with the filter when that is on (a rejected file gets a `skipped` record
with the reasons and scores and no outputs), else convert, write .md and .json
(fsio.Output.write_document), then append and fsync the record.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from pagerouter.intake.inputs import InputError

from .failures import file_error
from .fsio import Output, read_input
from .inputs import BatchItem
from .journal import Journal, Outcome, document_fields, journal_record, latest, read_records, skip_statuses, tmp_tag


class LocalBackend:
    def __init__(self, cfg, opts: dict):
        from pagerouter.convert.converter import Converter

        self.conv, self.opts = Converter(cfg), opts

    def convert(self, data: bytes, name: str):
        return self.conv.convert(data, name=name, **self.opts)

    def close(self) -> None:
        self.conv.close()


DEFAULT_JOB_MB = 10.0  # files this large go to the server as jobs (--job-mb; 0 = never)


class HttpBackend:
    """A server over HTTP. Files of `job_mb` MB or more go as jobs (POST /v1/jobs, polled), so a
    long document survives a dropped connection and a killed batch re-attaches to its job (the
    runner journals the job id as soon as the server accepted it) instead of submitting it again."""

    def __init__(self, url: str, opts: dict, timeout: float, job_mb: float = DEFAULT_JOB_MB, poll_s: float = 2.0,
                 retry=None):
        from pagerouter.clients.http_client import PagerouterHttpClient

        self.client, self.opts = PagerouterHttpClient(url, timeout=timeout, retry=retry), opts
        self.timeout, self.job_mb, self.poll_s = timeout, job_mb, poll_s

    def convert(self, data: bytes, name: str):
        return self.client.convert(data, filename=name, **self.opts)

    def uses_job(self, size: int) -> bool:
        return self.job_mb > 0 and size >= self.job_mb * 1024 * 1024

    def convert_job(self, data: bytes, name: str, known_id: str | None, submitted: Callable[[str], None]):
        """(document, job id) of a job: the journaled one if the server still has it (not cancelled), else a new one."""
        from pagerouter.clients.errors import PagerouterClientError

        status = None
        if known_id:
            try:
                status = self.client.job(known_id)
            except PagerouterClientError as exc:
                if exc.code != "not_found" and exc.status not in (404, "NOT_FOUND"):
                    raise
            if status is not None and status.state == "cancelled":
                status = None  # cancelled by someone: this run wants the file, so it asks again
        if status is None:
            status = self.client.submit_job(data, filename=name, **self.opts)
            submitted(status.id)
        final = self.client.wait_job(status.id, poll_s=self.poll_s, timeout=self.timeout)
        if final.state != "done":
            why = final.errors[0] if final.errors else "no reason given"
            raise RuntimeError(f"{name}: job {final.id} {final.state}: {why}")
        return self.client.job_result(final.id).document, final.id

    def close(self) -> None:
        self.client.close()


class GrpcBackend(HttpBackend):
    def __init__(self, address: str, opts: dict, timeout: float, application: str = "pagerouter",
                 job_mb: float = DEFAULT_JOB_MB, poll_s: float = 2.0, retry=None):
        from pagerouter.clients.grpc_client import PagerouterGrpcClient

        self.client, self.opts = PagerouterGrpcClient(address, timeout=timeout, application=application,
                                                      retry=retry), opts
        self.timeout, self.job_mb, self.poll_s = timeout, job_mb, poll_s


class BatchRunner:
    def __init__(self, output: Output, journal_dir: Path, make_backend: Callable[[], object], render: Callable,
                 config_hash: str, shard: tuple[int, int], jobs: int, retry_failed: bool, mode: str,
                 on_done: Callable[[Outcome], None] | None = None, judge: Callable[[bytes], object] | None = None):
        self.output, self.make_backend, self.render = output, make_backend, render
        self.config_hash, self.shard, self.jobs = config_hash, shard, max(1, jobs)
        self.retry_failed, self.mode, self.on_done = retry_failed, mode, on_done
        self.judge = judge  # the document filter (pagerouter/intake/docfilter.py), None when it is off
        self.tag = tmp_tag(shard)
        self.previous = latest(read_records(journal_dir))
        self._local = threading.local()
        self._backends: list = []
        self._lock = threading.Lock()

    def _backend(self):
        b = getattr(self._local, "backend", None)
        if b is None:
            b = self._local.backend = self.make_backend()
            with self._lock:
                self._backends.append(b)
        return b

    def _record(self, item: BatchItem, sha: str | None, t0: float, **fields) -> dict:
        return journal_record(item, sha, self.config_hash, self.mode, time.perf_counter() - t0, **fields)

    def _process(self, item: BatchItem, skip: dict, journal: Journal) -> Outcome:
        """`skip`: the item's entry of journal.skip_statuses."""
        t0 = time.perf_counter()
        try:
            data = read_input(item.scheme, item.path, item.shown)
        except InputError as exc:
            if None in skip:  # still unreadable: its failed record stands
                return Outcome(item, self.previous[(item.uri, None, self.config_hash)], converted=False)
            return self._finish(journal, item, self._record(item, None, t0, status="failed", error=file_error(item.shown, exc)))
        sha = hashlib.sha256(data).hexdigest()
        prev = self.previous.get((item.uri, sha, self.config_hash))
        if sha in skip:
            return Outcome(item, prev, converted=False)
        if self.judge is not None:
            decision = self.judge(data)
            if not decision.keep:  # a record like any other, so a re-run does not judge it again
                return self._finish(journal, item, self._record(item, sha, t0, status="skipped", error=None,
                                                                reasons=decision.reasons, scores=decision.scores))
        try:
            backend, job_id = self._backend(), None
            if getattr(backend, "uses_job", None) and backend.uses_job(len(data)):
                known = prev.get("job_id") if prev is not None and prev.get("status") == "job" else None

                def submitted(new_id: str) -> None:  # journaled at once: a killed run re-attaches to it
                    journal.append(self._record(item, sha, t0, status="job", error=None, job_id=new_id))

                doc, job_id = backend.convert_job(data, item.shown, known, submitted)
            else:
                doc = backend.convert(data, item.shown)
        except Exception as exc:  # noqa: BLE001 - any problem with one file is that file's failed record
            return self._finish(journal, item, self._record(item, sha, t0, status="failed", error=file_error(item.shown, exc)))
        try:
            md, js = self.render(doc)
            outs = self.output.write_document(item, md, js, self.tag)
        except Exception as exc:  # noqa: BLE001 - e.g. a page text JSON cannot encode: this file fails, the run goes on
            return self._finish(journal, item, self._record(item, sha, t0, status="failed",
                                                            error=file_error(item.shown, exc, "cannot write its outputs")))
        rec = self._record(item, sha, t0, status="done", error=None, outputs=outs,
                           **document_fields(doc), **({"job_id": job_id} if job_id else {}))
        return self._finish(journal, item, rec)

    def _finish(self, journal: Journal, item: BatchItem, rec: dict) -> Outcome:
        journal.append(rec)  # after the renames: the record is the commit point
        return Outcome(item, rec, converted=True)

    def run(self, items: list[BatchItem], journal: Journal) -> list[Outcome]:
        """Convert `items`, appending to `journal` (opened, and so locked, by the caller before it
        cleaned stray temp files); closes the journal and the backends."""
        outcomes: list[Outcome] = []
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="batch")
        try:
            skips = skip_statuses(items, self.previous, self.config_hash, self.output, self.retry_failed)
            futures = [pool.submit(self._process, item, skip, journal) for item, skip in zip(items, skips)]
            for fut in as_completed(futures):
                out = fut.result()
                outcomes.append(out)
                if self.on_done is not None:
                    self.on_done(out)
        except KeyboardInterrupt:
            # files not started are dropped; those in flight finish and are recorded (a second
            # Ctrl-C or a kill is safe too: they then simply have no record and run next time)
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            journal.close()
            for b in self._backends:
                try:
                    b.close()
                except Exception:  # noqa: BLE001 - closing is best effort
                    pass
        return outcomes
