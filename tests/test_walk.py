"""The one walk of a document (pagerouter/convert/walk.py): open, page selection, head, triage
outcomes in page order, figures of text pages, close; what the Converter, the served graph's
triage and the batch run's Ray stages all read their documents with. No Ray here."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pymupdf
import pytest

from pagerouter.bench.synth import LOREM, add_text_page
from pagerouter.config import PagerouterConfig
from pagerouter.convert.walk import OpenedDocument, walk_document
from pagerouter.intake.inputs import InputError, PageLimitError, PageSelectionError
from pagerouter.isolation import InProcessPages, WalkAhead


class FakeRecordingPageWork(InProcessPages):
    """FAKE PageWork: MuPDF in this process, recording what was opened, with what read-ahead,
    and which opened documents were closed."""

    def __init__(self, cfg: PagerouterConfig):
        super().__init__(cfg)
        self.opened: list[tuple[str, WalkAhead | None]] = []
        self.closed: list[str] = []

    def open(self, data, name, password=None, ahead=None):
        src = super().open(data, name, password, ahead)
        self.opened.append((name, ahead))
        src.on_close = lambda: self.closed.append(name)
        return src


def _pdf(pages: int) -> bytes:
    d = pymupdf.open()
    for i in range(pages):
        add_text_page(d, [LOREM], title=f"Part {i + 1}")
    data = d.tobytes()
    d.close()
    return data


def _walk(work, data, **kw) -> list:
    async def run():
        async with aclosing(walk_document(work, data, **kw)) as walk:
            return [item async for item in walk]
    return asyncio.run(run())


def test_the_walk_opens_with_read_ahead_yields_the_head_then_pages_in_order_and_closes():
    work = FakeRecordingPageWork(PagerouterConfig())
    items = _walk(work, _pdf(4), max_pages=10, name="four.pdf", pages="2-3", ocr="auto")
    head, *outcomes = items
    assert isinstance(head, OpenedDocument) and head.numbers == [2, 3] and head.document.page_count == 4
    assert head.document.source == "four.pdf" and head.document.pages == []
    assert [o.page.number for o in outcomes] == [2, 3] and all(o.task is None for o in outcomes)
    assert work.opened == [("four.pdf", WalkAhead("2-3", "auto"))] and work.closed == ["four.pdf"]


def test_a_range_of_the_walk_opens_without_read_ahead_and_reads_only_its_pages():
    work = FakeRecordingPageWork(PagerouterConfig())
    _, *outcomes = _walk(work, _pdf(5), max_pages=10, name="five.pdf", span=(1, 3))
    assert [o.page.number for o in outcomes] == [2, 3]
    assert work.opened == [("five.pdf", None)] and work.closed == ["five.pdf"]


def test_a_walk_left_early_closes_the_file():
    work = FakeRecordingPageWork(PagerouterConfig())

    async def head_only():
        async with aclosing(walk_document(work, _pdf(3), max_pages=10, name="three.pdf")) as walk:
            return await anext(walk)

    assert asyncio.run(head_only()).numbers == [1, 2, 3] and work.closed == ["three.pdf"]


def test_selection_problems_carry_their_code_and_close_the_file():
    work = FakeRecordingPageWork(PagerouterConfig())
    with pytest.raises(PageSelectionError, match="page 7 requested but the document has 2 pages") as bad:
        _walk(work, _pdf(2), max_pages=10, name="two.pdf", pages="7")
    assert bad.value.code == "bad_pages"
    with pytest.raises(PageLimitError) as many:
        _walk(work, _pdf(3), max_pages=2, name="three.pdf")
    assert many.value.code == "too_many_pages"
    assert work.closed == ["two.pdf", "three.pdf"]
    with pytest.raises(InputError) as unopened:
        _walk(work, b"%PDF-1.7 truncated", max_pages=10, name="broken.pdf")
    assert not hasattr(unopened.value, "code")  # the served graph's `bad_input`


def test_an_open_document_is_walked_and_left_open():
    from pagerouter.intake.inputs import open_source

    work = FakeRecordingPageWork(PagerouterConfig())
    src = open_source(data=_pdf(2), name="mine.pdf")
    try:
        _, *outcomes = _walk(work, src, max_pages=10)
        assert [o.page.number for o in outcomes] == [1, 2] and work.opened == []
        assert src.doc.page_count == 2  # still open: the caller's
    finally:
        src.close()
