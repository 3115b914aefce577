"""/docs (Swagger UI) and /redoc without a CDN.

FastAPI's own pages load Swagger UI and ReDoc from cdn.jsdelivr.net (and fonts from Google),
so they are blank on a machine without internet access. Here the same pages load their assets
from this server: the files ship in the `fastapi-offline` package (Swagger UI 5, which renders
OpenAPI 3.1, and ReDoc's standalone bundle; the `serve` extra installs it; their paths are in
pagerouter.service.doc_assets). Only the page helpers of FastAPI are used, not that package's
app class. Asset URLs carry the request's root path, so an application mounted under a route
prefix (e.g. /gpu) still finds them.
"""

# No `from __future__ import annotations`: FastAPI must see the real `Request` annotation.

from pagerouter.service.doc_assets import ASSET_PREFIX, ASSETS, asset_dir


def install_docs(api) -> None:
    """Add /docs, /redoc and their assets to the FastAPI `api` (built with docs_url=None, redoc_url=None)."""
    from fastapi import Request
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
    from fastapi.responses import FileResponse, JSONResponse

    def url(request: Request, path: str) -> str:
        return request.scope.get("root_path", "").rstrip("/") + path

    @api.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request):
        return get_swagger_ui_html(
            openapi_url=url(request, api.openapi_url or "/openapi.json"),
            title=f"{api.title} - API",
            swagger_js_url=url(request, ASSET_PREFIX + "swagger-ui-bundle.js"),
            swagger_css_url=url(request, ASSET_PREFIX + "swagger-ui.css"),
            swagger_favicon_url=url(request, ASSET_PREFIX + "favicon.png"),
            # Swagger UI would otherwise send the spec to validator.swagger.io for its badge.
            swagger_ui_parameters={"validatorUrl": None},
        )

    @api.get("/redoc", include_in_schema=False)
    async def redoc(request: Request):
        return get_redoc_html(
            openapi_url=url(request, api.openapi_url or "/openapi.json"),
            title=f"{api.title} - API",
            redoc_js_url=url(request, ASSET_PREFIX + "redoc.standalone.js"),
            redoc_favicon_url=url(request, ASSET_PREFIX + "favicon.png"),
            with_google_fonts=False,
        )

    @api.get(ASSET_PREFIX + "{name}", include_in_schema=False)
    async def asset(name: str):
        if name not in ASSETS:  # a fixed list: no path from the caller reaches the filesystem
            return JSONResponse({"error": {"code": "not_found", "message": f"no such asset: {name}"}}, 404)
        return FileResponse(asset_dir() / name, media_type=ASSETS[name],
                            headers={"Cache-Control": "public, max-age=86400"})
