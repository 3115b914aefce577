"""An asyncio event loop in a daemon thread, for engines whose client is async (vLLM's
AsyncLLM, an httpx client) but whose callers are synchronous stage methods in worker threads.
All of an engine's requests share the one loop, so requests from many threads are in flight
together (that is what lets the engine batch them)."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


class BackgroundLoop:
    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def call(self, coro: Awaitable[T], timeout: float | None = None) -> T:
        """Run `coro` on the loop and wait for its result from this (other) thread."""
        self._check_caller(coro)
        fut: Future = asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]
        try:
            return fut.result(timeout=timeout)
        except BaseException:
            fut.cancel()
            raise

    def iterate(self, agen_factory: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
        """Items of an async iterator made on the loop, handed over one by one through a queue;
        stopping early cancels it (so the engine aborts the request)."""
        self._check_caller()
        q: queue.Queue = queue.Queue()
        done = object()

        async def pump():
            try:
                async for item in agen_factory():
                    q.put(item)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer's thread
                q.put(exc)
            finally:
                q.put(done)

        fut = asyncio.run_coroutine_threadsafe(pump(), self.loop)
        try:
            while True:
                item = q.get()
                if item is done:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            fut.cancel()

    def _check_caller(self, coro=None) -> None:
        """Waiting on the loop from its own thread would block it forever; a stopped loop never answers."""
        problem = None
        if threading.current_thread() is self._thread:
            problem = "an engine call from the engine's own event loop thread would deadlock"
        elif not self.loop.is_running():
            problem = "the engine is closed"
        if problem:
            if coro is not None and hasattr(coro, "close"):
                coro.close()
            raise RuntimeError(problem)

    def stop(self, timeout: float = 2.0) -> None:
        """Cancel what still runs on the loop (an engine's output handler), let the cancellations
        land, then stop the loop and its thread: a loop dropped with pending tasks prints "Task was
        destroyed but it is pending!" at exit."""
        if not self.loop.is_running() or threading.current_thread() is self._thread:
            return

        async def cancel_rest():
            me = asyncio.current_task()
            rest = [t for t in asyncio.all_tasks() if t is not me]
            for t in rest:
                t.cancel()
            await asyncio.wait(rest, timeout=timeout) if rest else None

        try:
            asyncio.run_coroutine_threadsafe(cancel_rest(), self.loop).result(timeout=timeout + 0.5)
        except Exception:  # noqa: BLE001 - stopping anyway
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=timeout)
        if not self._thread.is_alive():
            self.loop.close()
