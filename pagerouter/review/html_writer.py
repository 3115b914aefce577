"""Write the review: one HTML file with its stylesheet, script and the run's data inline.

The run travels as JSON in a `<script type="application/json">` data block, with `<`, `>`, `&`
and the two JavaScript line separators written as `\\uXXXX` escapes: a PDF string holding
`</script>` cannot end the block early, and the markup itself holds no string from the PDF.

`REVIEW_CSP` is the policy the page is written to satisfy: nothing from the network, only the
page's own script and stylesheet (by their SHA-256 hashes), images from the page's own origin
or data: URIs. The same policy (less `frame-ancestors`, which a meta tag cannot carry) sits in
a `<meta>` tag, so a file opened from disk or a bucket is held to it too.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..config.bench import BenchConfig
from ..config.output import OutputConfig
from ..model import Document
from .app_css import APP_CSS
from .app_js import APP_JS
from .page_data import page_record
from .run_folder import RunDocument, load_run
from .summary import run_summary

PER_VIEW = 20  # cards per list page: the DOM never holds more, however large the run


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


_POLICY = (
    f"default-src 'none'; script-src {_sha256(APP_JS)}; style-src {_sha256(APP_CSS)}; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'"
)
REVIEW_CSP = _POLICY + "; frame-ancestors 'none'"
"""The Content-Security-Policy header a server should send with `review_html`'s page."""

REVIEW_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": REVIEW_CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "private, no-store",  # a job's pages are the caller's documents
}
"""Every header a server should send with `review_html`'s page."""


def embed_json(value) -> str:
    """JSON safe inside a `<script type="application/json">` element (and as plain JSON)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def run_documents(run) -> list[RunDocument]:
    """A run folder's documents, or documents in hand named by their source's stem."""
    if isinstance(run, (str, Path)):
        return load_run(Path(run))
    return [d if isinstance(d, RunDocument) else RunDocument(rel=Path(d.source).stem or f"document-{i + 1}", doc=d)
            for i, d in enumerate(run)]


def review_data(docs: Sequence[RunDocument], page_images: Mapping[tuple[int, int], str] | None = None,
                output_cfg: OutputConfig | None = None, prices: BenchConfig | None = None, title: str = "") -> dict:
    """What the page's script reads: summary, documents and one record per page.
    `page_images` maps (document index, page number) to the picture's URL."""
    output_cfg = output_cfg or OutputConfig()
    page_images = page_images or {}
    return {
        "title": title,
        "per_view": PER_VIEW,
        "summary": run_summary([d.doc for d in docs], prices),
        "docs": [{"rel": d.rel, "source": d.doc.source, "page_count": d.doc.page_count} for d in docs],
        "pages": [page_record(i, p, output_cfg, page_images.get((i, p.number)))
                  for i, d in enumerate(docs) for p in d.doc.pages],
    }


def review_html(run: Path | str | Sequence[Document] | Sequence[RunDocument], *,
                page_images: Mapping[tuple[int, int], str] | None = None, output_cfg: OutputConfig | None = None,
                prices: BenchConfig | None = None, title: str = "") -> str:
    """The review page of a run folder, or of documents in hand (a job's results).

    `page_images`: {(document index, page number): URL}, a relative path beside the page or a
    `data:image/jpeg;base64,...` URI (page_images.embedded_images makes those). Serve the result
    as `text/html; charset=utf-8` with `Content-Security-Policy: REVIEW_CSP`."""
    docs = run_documents(run)
    data = review_data(docs, page_images, output_cfg, prices, title)
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_POLICY}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        "<link rel=\"icon\" href=\"data:,\">\n"  # no favicon request: nothing leaves the page's folder
        "<title>pagerouter review</title>\n"
        f"<style>{APP_CSS}</style>\n</head><body>\n"
        "<header class=\"top\"><h1>pagerouter review</h1><span id=\"run-name\"></span></header>\n"
        "<section id=\"summary\" aria-label=\"Run summary\"></section>\n"
        "<section id=\"controls\" aria-label=\"Filters and colouring\">"
        "<span id=\"filters\"></span>"
        "<span role=\"radiogroup\" aria-label=\"Colour boxes by\">Colour by "
        "<label><input type=\"radio\" name=\"colour\" id=\"colour-route\" value=\"route\" checked> route</label> "
        "<label><input type=\"radio\" name=\"colour\" id=\"colour-engine\" value=\"engine\"> engine</label></span>"
        "<span id=\"legend\" aria-label=\"Legend\"></span>"
        "<span class=\"pager\"><button type=\"button\" id=\"prev\">&larr; previous</button>"
        "<span id=\"position\" aria-live=\"polite\"></span>"
        "<button type=\"button\" id=\"next\">next &rarr;</button></span>"
        "<span class=\"keys\">keys: j/k next/previous flagged or failed page, [ ] list pages; "
        "dashed box: furniture, dotted purple: hidden text, dashed red: ink no block covers</span>"
        "</section>\n<main id=\"cards\" aria-label=\"Pages\"></main>\n"
        f"<script type=\"application/json\" id=\"review-data\">{embed_json(data)}</script>\n"
        f"<script>{APP_JS}</script>\n</body></html>\n"
    )


def write_review(html_path: Path, run: Path | str | Sequence[RunDocument], **kwargs) -> Path:
    """Write `review_html(run, **kwargs)` to `html_path` (atomically: temp file, then rename)."""
    html_path = Path(html_path)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = html_path.with_name(html_path.name + ".tmp")
    tmp.write_text(review_html(run, **kwargs), encoding="utf-8")
    tmp.replace(html_path)
    return html_path
