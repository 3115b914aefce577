"""Stream items of one conversion: what the Triage deployment streams to the ingress, and the
shape of a conversion for any caller (head, pages, tail; or one problem)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Document


@dataclass
class DocumentHead:
    """First item of a conversion: the opened document (no pages yet) and the pages to convert."""

    document: Document
    numbers: list[int]


@dataclass
class InputProblem:
    """The input could not be converted at all (bad file, bad page selection, wrong password)."""

    code: str  # stable machine-readable code, e.g. `bad_input`
    message: str  # one line, names the file (and page)
    source: str = "-"
    page: int | None = None
    detail: str = ""  # the message without the `source: page N:` prefix


@dataclass
class DocumentTail:
    """Last item: what the document needs beyond its pages (engines actually used)."""

    engines: dict[str, str] = field(default_factory=dict)
