"""`batch --ray`'s early channel: finished pages reach the driver without waiting for the pools.

Why: a born-digital file's pages need no model, yet as rows of the dataset they reached the
driver only once the CPU pool had passed them, queued there behind OCR blocks (a scan's
32-page range, one pool task) and held until the whole block of the task that carried them
was done: the first output came 27-32 s into a run whose `--local` writes its first file at
2 s (graph/README.md, "Why the first output is late"). Ray Data's queues are first in, first
out, with no priority to give them.

So the open and triage tasks also post each row of finished pages to a mailbox, an actor of
no CPU on the driver's node, and the driver drains it while the dataset streams. The dataset
still carries every row, so the mailbox is a shortcut and never the only copy: a post lost
with a process, or the mailbox itself lost, changes only when those pages arrive. The
assembler takes each page once, whichever copy comes first (`Assembler.take`), so the later
copy, and a retried task's second post, change nothing; what is staged, journaled and
written is what it was.

No Ray import here: the driver makes the actor (`EarlyPages`, given its `ray`), and the
stages post through the handle they are given (`ray_stages.post_early`).
"""

from __future__ import annotations

import asyncio
import threading

from .ray_stages import Row


class Mailbox:
    """The actor's class: rows posted by the stages, kept until the driver takes them."""

    def __init__(self):
        self.rows: list[tuple] = []
        self.posted = asyncio.Event()

    async def post(self, rows: list[tuple]) -> None:
        self.rows += rows
        self.posted.set()

    async def take(self, wait_s: float) -> list[tuple]:
        """What has been posted, waiting up to `wait_s` for a first post (the driver's thread
        asks again at once, so a post is taken within one actor call, not a polling period)."""
        if not self.rows:
            try:
                await asyncio.wait_for(self.posted.wait(), wait_s)
            except TimeoutError:
                pass
        self.posted.clear()
        rows, self.rows = self.rows, []
        return rows


class EarlyPages:
    """Driver side: the mailbox actor and a thread that hands what is posted to `take` (the
    assembler's, called under `lock`, which the dataset's loop holds for its own rows)."""

    # `wait_s` is how long one call waits for a post, not a delay: a post ends the wait at once.
    # Longer calls are fewer calls (0.5 s cost both processes an actor call twice a second for the
    # whole run); `close` still ends the thread within its 1 s steps.
    def __init__(self, ray, take, lock: threading.Lock, wait_s: float = 10.0):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.ray, self.take, self.lock, self.wait_s = ray, take, lock, wait_s
        self.error: BaseException | None = None
        node = ray.get_runtime_context().get_node_id()
        # no CPU: it must fit a node whose CPUs the plan gives to pools and tasks (plan_problem);
        # on the driver's node (soft: a driver without a node of its own still gets one)
        self.actor = ray.remote(num_cpus=0, max_restarts=0)(Mailbox).options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=True)).remote()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pagerouter-early-pages", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        ref = None
        while not self._stop.is_set():
            # one call at a time, waited for in steps: an actor still starting (or never) must not
            # keep `close` waiting, nor pile up calls
            ref = ref or self.actor.take.remote(self.wait_s)
            ready, _ = self.ray.wait([ref], timeout=1.0)
            if not ready:
                continue
            try:
                got = self.ray.get(ready[0])
            except Exception:  # noqa: BLE001 - the mailbox is gone: the dataset still brings every page
                return
            ref = None
            if not got:
                continue
            try:
                with self.lock:
                    self.take([Row(*t) for t in got])
            except BaseException as exc:  # noqa: BLE001 - the driver's loop raises it (`check`)
                self.error = exc
                return

    def check(self) -> None:
        """Raise in the driver's thread what taking the posted rows raised in this one."""
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        """Stop the thread (within one `wait_s`) and the actor. Rows still posted are not taken:
        the dataset delivered them as well."""
        self._stop.set()
        self._thread.join()
        try:
            self.ray.kill(self.actor)
        except Exception:  # noqa: BLE001, S110 - best effort: it dies with the job anyway
            pass
