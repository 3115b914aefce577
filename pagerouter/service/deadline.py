"""A request's own deadline (serve.request_timeout_s - serve.deadline_margin_s).

`until_deadline` ends a conversion with `RequestTimeout` a little before the proxy would cut
it, so the caller always learns what happened: a 504 JSON error, a gRPC DEADLINE_EXCEEDED, or
a stream's closing error line that names the pages not delivered.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TypeVar

T = TypeVar("T")


class RequestTimeout(Exception):
    """The request's own deadline (serve.request_timeout_s - serve.deadline_margin_s) passed."""

    def __init__(self, seconds: float):
        super().__init__(
            f"the request did not finish within {seconds:g} s (serve.request_timeout_s minus "
            "serve.deadline_margin_s)"
        )
        self.seconds = seconds


def deadline_in(seconds: float | None) -> float | None:
    """The `time.monotonic()` deadline `seconds` from now (None = never)."""
    return None if seconds is None else time.monotonic() + seconds


async def until_deadline(items: AsyncIterator[T], deadline: float | None, seconds: float | None) -> AsyncIterator[T]:
    """`items`, raising RequestTimeout when `time.monotonic()` passes `deadline` (None = never).
    `items` is not closed here: its owner closes it (which cancels the work still running)."""
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise RequestTimeout(seconds or 0)
        try:
            async with asyncio.timeout(left):
                item = await items.__anext__()
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise RequestTimeout(seconds or 0) from None
        yield item
