"""pagerouter: PDFs and page images to Markdown and JSON, each page by the cheapest reader
that reads it well.

Importing the package (or any of its modules) changes nothing in the host process: PyMuPDF is
left as PyMuPDF sets itself up. The processes pagerouter owns (the CLI, the isolation workers,
the Serve replicas, the Ray workers of `pagerouter batch --ray`) skip PyMuPDF's unused layout
model themselves (common/pymupdf_setup.py).
"""
