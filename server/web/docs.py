"""GET /docs and /redoc without a CDN: Swagger UI and ReDoc served from this server.

FastAPI's own pages load both from jsdelivr and render blank offline. Here the
bundles come from the installed `fastapi-offline` distribution (its package data,
pinned by uv.lock), read once on first use and shared by every scope; each scope
(the root, /servicebench, /support_queue) has its own /docs for its own
/openapi.json. The pages name everything relative to themselves (`docs/...`,
`openapi.json`), so they are right under a prefix and behind a proxy, and start
Swagger UI from a file rather than an inline script.
"""

from __future__ import annotations

from functools import cache
from html import escape
from importlib import resources

from fastapi import FastAPI
from starlette.responses import Response

from .static import DOCS_CSP, Asset, add_asset_routes, add_page_route, html_page, own_file

BUNDLE_PACKAGE = "fastapi_offline"
BUNDLE_FILES = {
    "docs/swagger-ui-bundle.js": "static/swagger-ui-bundle.js",
    "docs/swagger-ui.css": "static/swagger-ui.css",
    "redoc/redoc.standalone.js": "static/redoc.standalone.js",
}
"""Our path (relative to the scope) -> the file inside the bundle package."""


@cache
def docs_asset(path: str) -> Asset:
    if path == "docs/swagger-init.js":
        return Asset.read(own_file("swagger-init.js"), DOCS_CSP)
    return Asset.read(resources.files(BUNDLE_PACKAGE).joinpath(BUNDLE_FILES[path]), DOCS_CSP)


def swagger_page(title: str) -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{escape(title)} - Swagger UI</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head><body>
<div id="swagger-ui" data-openapi-url="openapi.json"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/swagger-init.js"></script>
</body></html>"""


def redoc_page(title: str) -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{escape(title)} - ReDoc</title>
</head><body>
<redoc spec-url="openapi.json"></redoc>
<script src="redoc/redoc.standalone.js"></script>
</body></html>"""


def install_docs(app: FastAPI) -> None:
    """/docs and /redoc for `app`, which must be built with docs_url=None and redoc_url=None."""
    swagger, redoc = swagger_page(app.title), redoc_page(app.title)

    async def swagger_ui() -> Response:
        return html_page(swagger, DOCS_CSP)

    async def redoc_ui() -> Response:
        return html_page(redoc, DOCS_CSP)

    add_page_route(app, "/docs", swagger_ui)
    add_page_route(app, "/redoc", redoc_ui)
    add_asset_routes(app, docs_asset, (*BUNDLE_FILES, "docs/swagger-init.js"))
