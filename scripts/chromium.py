"""Debian's Chromium driven by Playwright, for the browser test and the docs' screenshots.

Playwright's own browser download cannot run here, so it drives the system browser
(`apt-get install chromium`; .ci/run installs it). As root Chromium needs
--no-sandbox; the other flags stop the background traffic (updates, sync, field
trials, QUIC) that a machine without internet would refuse.

`LoopbackOnly` is the guard the pages are held to: every request for another origin
than the server under test is recorded and aborted, never sent.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    Route,
    WebSocket,
    sync_playwright,
)

ARGS = (
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
)


def chromium_path() -> str | None:
    """$CHROMIUM, else Debian's /usr/bin/chromium, else a chromium on PATH; None if none."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def launch(playwright: Playwright) -> Browser:
    path = chromium_path()
    if path is None:
        raise FileNotFoundError("no Chromium: apt-get install -y --no-install-recommends chromium")
    return playwright.chromium.launch(executable_path=path, args=list(ARGS))


@dataclass
class LoopbackOnly:
    """A page that may load from `origin` only; what it tried elsewhere, and what went wrong."""

    origin: str
    outside: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def allows(self, url: str) -> bool:
        parts, own = urlsplit(url), urlsplit(self.origin)
        return (parts.scheme, parts.netloc) == (own.scheme, own.netloc)

    def route(self, route: Route) -> None:
        url = route.request.url
        if self.allows(url):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort("blockedbyclient")

    def websocket(self, socket: WebSocket) -> None:
        if not self.allows(socket.url.replace("ws", "http", 1)):
            self.outside.append(socket.url)

    def new_page(self, browser: Browser, **options: object) -> tuple[BrowserContext, Page]:
        context = browser.new_context(**options)
        context.route("**/*", self.route)
        page = context.new_page()
        page.on("websocket", self.websocket)
        page.on(
            "console", lambda message: message.type == "error" and self.errors.append(message.text)
        )
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        return context, page


def screenshot(
    origin: str, out: Path, size: tuple[int, int], prepare: Callable[[Page], None]
) -> None:
    """A picture for the docs: a page held to `origin`, brought to the view by `prepare`, saved
    to `out` at `size` (width, height); SystemExit if the page reached outside or failed."""
    with sync_playwright() as playwright:
        browser = launch(playwright)
        guard = LoopbackOnly(origin)
        context, page = guard.new_page(browser, viewport={"width": size[0], "height": size[1]})
        prepare(page)
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
        context.close()
        browser.close()
    if guard.outside or guard.errors:
        raise SystemExit(f"the page reached outside or failed: {guard.outside} {guard.errors}")
    print(f"{out} ({out.stat().st_size // 1024} KB)")
