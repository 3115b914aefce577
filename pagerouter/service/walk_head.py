"""The head of a document's triage stream, read before its pages.

A triage stream (the Triage deployment's, or the ingress's own walk of a small request) yields
DocumentHead or InputProblem, then one TriageOutcome per page. The head is awaited first: bad
input must become a 4xx before any page, and the page numbers it announces name the pages
not delivered when the stream breaks off.
"""

from __future__ import annotations


class WalkHead:
    """A document's triage stream (DocumentHead or InputProblem, then one TriageOutcome per
    page): its first item, and the page numbers it announces."""

    def __init__(self, stream):
        self.stream = stream
        self.numbers: list[int] = []
        self.finished = False

    async def head(self):
        first = await self.stream.__anext__()
        self.numbers = list(getattr(first, "numbers", []))
        self.finished = not hasattr(first, "numbers")  # an InputProblem ends the walk
        return first
