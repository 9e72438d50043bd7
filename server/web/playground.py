"""GET / and GET /web: the page with the tasks, and the playground that plays them.

The playground is static (index.html, its scripts and stylesheet, from this folder); the
script reads the tasks from /tasks and plays with /reset, /step and /state, so it
shows exactly what an agent would get. `/web` redirects to `/web/` with a relative
Location (and the same query), which stays right behind a proxy or under a path prefix.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...models import TaskCard
from .home import render_home, task_table
from .static import Asset, add_asset_routes, add_page_route, html_page, own_file

FILES = (
    "playground.js",
    "dom.js",
    "servicebench.js",
    "support-queue.js",
    "site.css",  # also the stylesheet of the page at /
    "home.js",  # the script of the page at / (home.py)
    "replay.js",  # the playground's replay of a results file
)


def install_pages(app: FastAPI, cards: list[TaskCard]) -> None:
    """/ (the tasks, curl to copy), /web (the playground) and the files both pages load."""
    table = task_table(cards)
    page = Asset.read(own_file("index.html"))
    assets = {f"web/{name}": Asset.read(own_file(name)) for name in FILES}

    async def playground_redirect(request: Request) -> Response:
        query = request.url.query  # what the Space's frame adds (a theme, a signature) stays
        return RedirectResponse(f"web/?{query}" if query else "web/", status_code=307)

    async def playground(request: Request) -> Response:
        return page.response(request)

    async def home(request: Request) -> Response:
        return html_page(render_home(table, str(request.base_url).rstrip("/")))

    add_page_route(app, "/", home)
    add_page_route(app, "/web", playground_redirect)
    add_page_route(app, "/web/", playground)
    add_asset_routes(app, assets.__getitem__, assets)
