"""Ray Serve deployments: thin shells around pagerouter's stage objects.

`pagerouter` is imported first so that a replica importing pymupdf does not build PyMuPDF's
unused layout model (see `pagerouter/__init__.py`)."""

import pagerouter  # noqa: F401
