"""`pagerouter review`: a self-contained HTML page showing a run's routing decisions beside the pages.

Pure logic, no Ray: load a `convert -o`/`batch` output folder (run_folder.py), turn each page into
the compact record the page shows (page_data.py), sum the run (summary.py), render page images
(page_images.py), and write one HTML file with its CSS and script inline (html_writer.py, with
app_css.py and app_js.py). A served endpoint calls `review_html(...)` (page images from
`embedded_images`) and sends `REVIEW_HEADERS`, whose Content-Security-Policy the page satisfies.
"""

from .html_writer import REVIEW_CSP, REVIEW_HEADERS, review_html, write_review
from .page_images import embedded_images

__all__ = ["REVIEW_CSP", "REVIEW_HEADERS", "embedded_images", "review_html", "write_review"]
