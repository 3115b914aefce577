"""A triage stream that survives the death of the process serving it, once.

When the stream breaks off with an error that `resumable` accepts (in the served graph: the
Triage replica died), the pages it had not sent yet are asked for once more with
`walk(selection)` (Serve routes that call to a live replica); a second death fails the request.
"""

from __future__ import annotations

from collections.abc import Callable

from pagerouter.intake.inputs import pages_text

from .walk_head import WalkHead


class ResumableWalk(WalkHead):
    """`stream`: the walk of one document, started with `walk(selection)`; `name` names it in errors."""

    def __init__(self, stream, walk: Callable[[str | None], object], name: str,
                 resumable: Callable[[BaseException], bool]):
        super().__init__(stream)
        self.walk, self.name, self.resumable = walk, name, resumable

    async def outcomes(self):
        seen: set[int] = set()
        for attempt in (0, 1):
            try:
                async for outcome in self.stream:
                    seen.add(outcome.page.number)
                    yield outcome
                self.finished = True
                return
            except Exception as exc:
                if attempt or not self.resumable(exc):
                    raise
            self.stream = self.walk(pages_text([n for n in self.numbers if n not in seen]))
            if not hasattr(await self.stream.__anext__(), "numbers"):  # its DocumentHead, else a problem
                raise RuntimeError(f"{self.name}: the document could not be reopened after its Triage replica died")

    def cancel(self) -> None:
        if not self.finished:
            self.stream.cancel()
