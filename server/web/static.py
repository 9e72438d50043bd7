"""Files served to the browser: bytes held in memory, an ETag, and the security headers.

A page's policy allows only this server: scripts and styles from files (no inline
script, no eval), requests to the API of the same origin, no plugins, no <base>.
Hugging Face shows a Space in an iframe of huggingface.co, so that origin may frame
the pages; no other may.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from importlib.resources.abc import Traversable

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response

FRAME_ANCESTORS = "'self' https://huggingface.co https://*.huggingface.co"
"""Who may show the pages in a frame: this server and the Space page on huggingface.co."""


def content_security_policy(*, inline_styles: bool = False) -> str:
    """The one policy of every page; the API docs' renderers set style attributes from script."""
    style = "'self' 'unsafe-inline'" if inline_styles else "'self'"
    return "; ".join(
        (
            "default-src 'none'",
            "script-src 'self'",
            f"style-src {style}",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "worker-src 'self' blob:",
            "base-uri 'none'",
            "form-action 'self'",
            "object-src 'none'",
            f"frame-ancestors {FRAME_ANCESTORS}",
        )
    )


PAGE_CSP = content_security_policy()
DOCS_CSP = content_security_policy(inline_styles=True)

MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}


def security_headers(policy: str) -> dict[str, str]:
    return {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Resource-Policy": "same-origin",
        "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
    }


@dataclass(frozen=True)
class Asset:
    """One file as the browser gets it; revalidated by ETag (a deploy changes the bytes)."""

    body: bytes
    media_type: str
    policy: str = PAGE_CSP

    @classmethod
    def read(cls, file: Traversable, policy: str = PAGE_CSP) -> Asset:
        suffix = "." + file.name.rsplit(".", 1)[-1]
        return cls(file.read_bytes(), MEDIA_TYPES[suffix], policy)

    @cached_property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'

    def response(self, request: Request) -> Response:
        headers = {**security_headers(self.policy), "ETag": self.etag, "Cache-Control": "no-cache"}
        if self.etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(self.body, media_type=self.media_type, headers=headers)


def own_file(name: str) -> Traversable:
    """A file of this folder, wherever the package is installed (a checkout, a wheel)."""
    return resources.files(__package__).joinpath(name)


def html_page(html: str, policy: str = PAGE_CSP) -> Response:
    return Response(
        html,
        media_type=MEDIA_TYPES[".html"],
        headers={**security_headers(policy), "Cache-Control": "no-cache"},
    )


def add_page_route(app: FastAPI, path: str, endpoint: Callable[..., Awaitable[Response]]) -> None:
    """A GET (and HEAD) route for a browser: kept out of the OpenAPI schema, which is the API's."""
    app.add_api_route(path, endpoint, methods=["GET", "HEAD"], include_in_schema=False)


def add_asset_routes(app: FastAPI, assets: Callable[[str], Asset], paths: Iterable[str]) -> None:
    """GET /<path> for each path, answered by `assets(path)` (called per request: lazy loading)."""

    def serve(path: str) -> None:
        async def asset(request: Request) -> Response:
            return assets(path).response(request)

        add_page_route(app, f"/{path}", asset)

    for path in paths:
        serve(path)
