"""Limits on what one request (or one client) may ask of the converter and the server.

Each is enforced before the work it guards: the page count right after the file is opened
(before any page is triaged), a page's box size and decoded content size before it is read or rendered, a page's text
layer size right after extraction (before layout analysis), concurrency before the upload is
read (and the expected finish again once the file is opened and its page count known). Related limits that live with their stage: `serve.max_upload_mb` (upload size),
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
        default=5, ge=0, description="Seconds a refused caller is told to wait (`Retry-After`) by the fixed caps "
        "above (the service-rate check computes its own)."
    )
    admission_by_rate: bool = Field(
        default=True,
        description="Refuse a conversion early (HTTP 503 `overloaded`, gRPC UNAVAILABLE) when the pages already "
        "admitted ahead of it on this ingress replica, plus its own, would not finish within "
        "admission_deadline_share of its deadline (serve.request_timeout_s - serve.deadline_margin_s) at the rate "
        "the replica has been finishing pages, nor the pages in OCR (and the recent OCR share of those not yet "
        "triaged) at its rate of OCR pages; Retry-After is the expected excess. A replica with nothing in "
        "flight admits anything, and the fixed caps above still bound it. Until its file is opened a whole-document "
        "request counts as one page for its own check (as the replica's typical request ahead of others), then is "
        "checked again with its real page count. No effect without a request timeout.",
    )
    admission_deadline_share: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="Share of a request's deadline its expected finish may take and still be admitted "
        "(admission_by_rate); the rest is headroom for the estimate's error.",
    )
    admission_prior_page_s: float = Field(
        default=1.0,
        gt=0,
        description="Seconds a page is assumed to take before this replica has finished any (about a scan's OCR "
        "on one CPU core); the measured rate replaces it as pages finish (admission_by_rate).",
    )
    admission_horizon_s: float = Field(
        default=30.0,
        gt=0,
        description="Busy seconds the page rate remembers: older finished pages fade with this time constant, "
        "so the rate follows a change of load or mix within about that long (admission_by_rate).",
    )
