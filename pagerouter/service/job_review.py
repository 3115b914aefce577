"""A job's review page (`GET /v1/jobs/{id}/review`): the document so far, its page images
rendered from the stored upload, as one self-contained HTML page (`pagerouter.review`).

The images are rendered by the ingress's isolation workers, never in the replica's own process:
the upload is untrusted and MuPDF's crash or hang must cost a worker, not the server. Only
`MAX_SERVED_IMAGES` pages get a picture, flagged and failed pages first (those a reviewer opens):
every image rides in the page as a data: URI, and a 1,000-page job's pictures would make the
page tens of MB. The other pages still list their blocks, text and decisions.
"""

from __future__ import annotations

import asyncio

from ..config import PagerouterConfig
from ..isolation import PageWork
from ..jobs.store import JobStatus
from ..model import Document
from ..review import embedded_images, review_html
from .job_desk import JobDesk

MAX_SERVED_IMAGES = 200
IMAGE_DPI = 60


def _pictured_pages(doc: Document) -> list[int]:
    """Page numbers to render, flagged and failed first, at most MAX_SERVED_IMAGES."""
    order = {"flagged": 0, "failed": 1}
    pages = sorted(doc.pages, key=lambda p: (order.get(p.status, 2), p.number))
    return [p.number for p in pages[:MAX_SERVED_IMAGES]]


async def page_images(work: PageWork, data: bytes, doc: Document, password: str | None) -> dict[tuple[int, int], str]:
    """{(0, page number): JPEG data URI} for the pages `_pictured_pages` picks; a page (or a
    document) that does not render is left without a picture, never an error."""
    try:
        images = await asyncio.to_thread(embedded_images, work, data, doc, IMAGE_DPI, password, _pictured_pages(doc))
    except Exception:  # noqa: BLE001 - the conversion already reported why the file does not open
        return {}
    return {(0, n): uri for n, uri in images.items()}


async def job_review_page(desk: JobDesk, job_id: str, work: PageWork, cfg: PagerouterConfig) -> tuple[str | None, JobStatus]:
    """The review page of job `job_id` (None while its file is not opened yet) and its status;
    raises JobNotFound like the other job calls."""
    doc, status = await desk.result(job_id)
    if doc is None:
        return None, status
    data = await asyncio.to_thread(desk.store.input, job_id)
    password = (await asyncio.to_thread(desk.store.options, job_id)).get("password")
    images = await page_images(work, data, doc, password)
    html = review_html([doc], page_images=images, output_cfg=cfg.output, prices=cfg.bench, title=f"job {job_id}")
    return html, status


__all__ = ["MAX_SERVED_IMAGES", "job_review_page", "page_images"]
