"""`pagerouter bench`: the router against text-layer-only, OCR of every page (RapidOCR,
Tesseract) and pymupdf4llm on one corpus, with speed, error, route mix and cost per page.

corpus.py (generated pages with known text, real PDFs), systems.py (one class per system),
metrics.py (CER, percentiles, CPU time, cost), runner.py (runs and reduces), report.py
(Markdown, JSON, charts), command.py (the CLI subcommand).
"""

SYSTEM_NAMES = ("router", "text_layer", "rapidocr", "tesseract", "pymupdf4llm")
"""The systems `pagerouter bench` compares (systems.py builds them)."""
