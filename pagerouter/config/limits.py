"""Limits on what one request (or one client) may ask of the converter and the server.

Each is enforced before the work it guards: the page count right after the file is opened
(before any page is triaged), a page's box size and decoded content size before it is read or rendered, a page's text
layer size right after extraction (before layout analysis), concurrency before the upload is
read. Related limits that live with their stage: `serve.max_upload_mb` (upload size),
`triage.max_render_pixels` and `ocr.render.*.max_pixels` (pixels per rendered page: the zoom is
lowered before rendering), `isolation.page_timeout_s` (seconds per page for triage, text layer
and render) and `serve.page_timeout_s` (seconds per page for OCR).
"""

from __future__ import annotations

from pydantic import Field

from .base import StrictModel


class LimitsConfig(StrictModel):
    max_pages: int = Field(
        default=2000,
        ge=1,
        description="Pages one request (one CLI input) may convert; more is refused before any page is read "
        "(HTTP 413 `too_many_pages`, gRPC RESOURCE_EXHAUSTED, a one-line CLI error). Select fewer with `pages`.",
    )
    max_page_side_pt: float = Field(
        default=14400.0,
        gt=0,
        description="Longest page side in points (72 per inch; 14400 = 200 inches); a bigger page is reported "
        "`failed` (`page too large`) before it is read or rendered, the other pages are converted.",
    )
    max_content_stream_mb: float = Field(
        default=100.0,
        gt=0,
        description="Megabytes a page's content streams (its /Contents and the form XObjects it names) may "
        "decode to; a page past it (a decompression bomb: a few KB of nested deflate) is reported `failed` "
        "before MuPDF parses it. Measured with a capped inflate; only Flate-encoded streams are measured.",
    )
    max_page_chars: int = Field(
        default=200_000,
        ge=1,
        description="Characters one page's text layer may hold; a page with more is reported `failed` "
        "(`too much text`) before its text is laid out.",
    )
    max_requests_per_client: int = Field(
        default=4,
        ge=1,
        description="Conversions one client may have in flight per ingress replica (a client is its address: the "
        "one API key is shared by every caller); more get HTTP 429 `too_many_requests` with Retry-After, gRPC "
        "RESOURCE_EXHAUSTED.",
    )
    max_in_flight_requests: int = Field(
        default=32,
        ge=1,
        description="Conversions one ingress replica runs at once; more get HTTP 503 `overloaded` with "
        "Retry-After, gRPC UNAVAILABLE (Serve's own queue in front is bounded by serve.max_queued_requests).",
    )
    retry_after_s: int = Field(
        default=5, ge=0, description="Seconds a refused caller is told to wait (`Retry-After`)."
    )
