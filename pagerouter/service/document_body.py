"""A converted document as an HTTP body: JSON (the Document model) or Markdown."""

from __future__ import annotations

import asyncio

from pagerouter.config import OutputConfig
from pagerouter.model import Document
from pagerouter.render.output import to_markdown


async def document_body(doc: Document, fmt: str, output: OutputConfig) -> tuple[str, str]:
    """(text, media type) of `doc` as `md` or `json`, rendered in a thread: a large document takes
    a while, and the serving event loop must keep answering meanwhile."""
    if fmt == "md":
        return await asyncio.to_thread(to_markdown, doc, output), "text/markdown"
    return await asyncio.to_thread(doc.model_dump_json), "application/json"
