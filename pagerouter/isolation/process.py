"""One isolation worker process: how it is started and how the pool talks to it.

A single-threaded caller (the CLI) forks its workers directly, with the page code already
imported; a caller with other threads (a Serve replica, an asyncio converter) starts them from a
fork server (`worker_context`), so no held lock of another thread is forked. `WorkerProcess` is the pool's
handle on one: a pipe, the shared `marker` saying what it is doing, and how it died.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import signal
import threading
from multiprocessing import context, forkserver, popen_forkserver, reduction, spawn, util

from ..config import PagerouterConfig
from ..triage.layer_proof import proof_may_run


class WorkerLost(Exception):
    """The worker died or stopped answering; `reason` says which, for the page's error."""

    def __init__(self, reason: str, timed_out: bool = False):
        super().__init__(reason)
        self.reason, self.timed_out = reason, timed_out


def worker_context(cfg: PagerouterConfig):
    ctx = multiprocessing.get_context("forkserver")
    # the server's own start first (it skips PyMuPDF's layout model), then the page code
    preload = ["pagerouter.common.skip_pymupdf_layout_on_import", "pagerouter.isolation.worker"]
    if proof_may_run(cfg.triage, cfg.ocr):
        # the hidden-layer proof's recogniser: importing RapidOCR (0.8 s: it parses its model
        # table) once in the server, not in every worker; the model itself loads in the worker
        preload.append("rapidocr.main")
    ctx.set_forkserver_preload(preload)  # effective until the server starts (once a process)
    return ctx


class _NoMainPopen(popen_forkserver.Popen):
    """Forkserver's Popen (CPython 3.11), minus re-importing the caller's `__main__` in the
    worker: a worker needs only `pagerouter.isolation.worker`, and the caller's main may be a
    script without a `__name__` guard or Ray's worker entry point (which would import Ray)."""

    def _launch(self, process_obj):
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_path", None)
        prep_data.pop("init_main_from_name", None)
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _Process(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj):
        return _NoMainPopen(process_obj)


class WorkerProcess:
    def __init__(self, ctx, cfg_json: str):
        from .worker import serve

        self.marker = ctx.Value("i", 0, lock=False)
        parent, child = ctx.Pipe()
        # A single-threaded caller (the CLI) forks the worker directly: no fork server to start,
        # the page code already imported (about 1.5 s saved on a one-page convert). With other
        # threads about (a Serve replica, an asyncio converter) fork could copy a held lock:
        # the fork server starts workers from a clean process instead.
        proc_cls = multiprocessing.get_context("fork").Process if threading.active_count() == 1 else _Process
        self.proc = proc_cls(target=serve, args=(child, cfg_json, self.marker), daemon=True, name="pagerouter-isolation")
        self.proc.start()
        child.close()
        self.conn = parent
        self.pages = 0  # pages read, for recycling
        self.rss_mb = 0.0
        self.docs: set[str] = set()  # digests it probably holds (a hint: it answers "missing" otherwise)
        self.stale: set[str] = set()  # documents closed while it was busy: forgotten when it is released
        self.walk: tuple | None = None  # (digest, walk key, next index) of its live walk

    def send(self, msg: dict, data: bytes | None = None) -> None:
        try:
            self.conn.send(msg)
            if data is not None:
                self.conn.send_bytes(data)
        except OSError:
            raise WorkerLost(self.death()) from None

    def recv(self, timeout: float):
        if not self.conn.poll(timeout):
            raise WorkerLost(f"took longer than {timeout:g} s", timed_out=True)
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            raise WorkerLost(self.death()) from None

    def death(self) -> str:
        self.proc.join(2)
        code = self.proc.exitcode
        if code is None:
            return "worker stopped answering"
        if code < 0:
            try:
                return f"worker crashed ({signal.Signals(-code).name})"
            except ValueError:
                return f"worker crashed (signal {-code})"
        return f"worker exited with code {code}"

    def stop(self, kill: bool) -> None:
        if not kill and self.proc.is_alive():
            try:
                self.conn.send({"op": "quit"})
            except OSError:
                kill = True
            self.proc.join(1)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.conn.close()


def stop_all(workers: set[WorkerProcess]) -> None:
    for w in list(workers):
        w.stop(kill=True)
    workers.clear()


__all__ = ["WorkerLost", "WorkerProcess", "stop_all", "worker_context"]
