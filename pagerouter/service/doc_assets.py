"""The local assets of /docs (Swagger UI) and /redoc, and the paths that serve them.

FastAPI's own pages load their assets from a CDN, blank on a machine without internet access;
deployments/docs.py serves these files from the `fastapi-offline` package instead. The paths are
here (not with the routes) because they answer without the API key (`api_key.OPEN_PATHS`).
"""

from __future__ import annotations

from pathlib import Path

ASSET_PREFIX = "/docs/assets/"
ASSETS = {
    "swagger-ui-bundle.js": "application/javascript",
    "swagger-ui.css": "text/css",
    "redoc.standalone.js": "application/javascript",
    "favicon.png": "image/png",
}
DOC_PATHS = frozenset({"/docs", "/redoc", *(ASSET_PREFIX + name for name in ASSETS)})
"""Paths that answer without the API key (the API description holds no data)."""


def asset_dir() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).resolve().parent / "static"
