"""The ingress's own triage of small requests: one hop fewer for a page or a few.

A request that names at most `serve.ingress_triage_max_pages` pages (every `/v1/pages` and
ConvertPage call, or `/v1/convert` with `pages=1-3`), with an upload of at most
`serve.ingress_triage_max_mb`, is opened and triaged by the ingress replica itself, in its own
isolation workers (`pagerouter.isolation`: MuPDF still never runs in the replica's process),
with the very walk the Triage deployment runs (`pagerouter.deployments.triage.triage_stream`). A
born-digital page then costs the proxy hop and one isolation worker round trip, not a
streamed handle call to Triage on top. Pages that need OCR go on to Layout and SmallReader
as always. The decision is taken before the file is opened, from the request alone, so no
file is ever parsed twice; whole-document requests (any length) stay on the Triage deployment,
which spreads their work over its replicas.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from pagerouter.config.serve import ServeConfig
from pagerouter.intake.inputs import InputError, page_ranges
from pagerouter.service.walk_head import WalkHead


def bounded_page_count(selection: str | None) -> int | None:
    """The most pages `selection` can name (`3`, `1-3,7`: 1, 4), or None when it is open-ended
    (`5-`, all pages) or not a selection at all (the real parser then names the mistake)."""
    if selection is None or not selection.strip():
        return None
    try:
        parts = [(lo, hi) for _, lo, hi in page_ranges(selection)]
    except InputError:
        return None
    if any(hi is None for _, hi in parts):
        return None
    return sum(hi - lo + 1 for lo, hi in parts)


def triaged_in_ingress(s: ServeConfig, size: int, selection: str | None) -> bool:
    """True when this request is small enough for the ingress to triage itself."""
    if s.ingress_triage_max_pages <= 0 or size > s.ingress_triage_max_mb * 1024 * 1024:
        return False
    count = bounded_page_count(selection)
    return count is not None and count <= s.ingress_triage_max_pages


def warm_up_pdf() -> bytes:
    """A one-page born-digital PDF made here (trusted bytes) for warming both triage paths."""
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "pagerouter warm-up page: a line of ordinary text.")
    data = doc.tobytes()
    doc.close()
    return data


class LocalWalk(WalkHead):
    """`triage_stream` run in the ingress, with the interface of `pagerouter.service.resumable_walk.ResumableWalk`."""

    def __init__(self, stream: AsyncIterator):
        super().__init__(stream)

    async def outcomes(self):
        async for outcome in self.stream:
            yield outcome
        self.finished = True

    def cancel(self) -> None:
        """Stop the walk (its pages still queued in the isolation worker) and close the file."""
        if self.finished:
            return
        self.finished = True
        try:
            asyncio.get_running_loop().create_task(self.stream.aclose())  # type: ignore[attr-defined]
        except RuntimeError:  # no loop (never in the ingress): the generator's finaliser closes it
            pass


__all__ = ["LocalWalk", "bounded_page_count", "triaged_in_ingress", "warm_up_pdf"]
