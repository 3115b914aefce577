"""Ray Serve deployments: thin shells around pagerouter's stage objects.

A replica's process is ours: this package is imported before any deployment module, so it skips
PyMuPDF's unused layout model (pagerouter/common/pymupdf_setup.py) before a replica imports pymupdf."""

from pagerouter.common.pymupdf_setup import skip_pymupdf_layout

skip_pymupdf_layout()
