"""Chromium for the browser tests of this folder (playground_support.py has the skip)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playground_support import TIMEOUT_MS, chromium
from playwright.sync_api import Browser, Page, sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = chromium.launch(playwright)
        yield browser
        browser.close()


@pytest.fixture
def guard(live_server: str) -> chromium.LoopbackOnly:
    return chromium.LoopbackOnly(live_server)


@pytest.fixture
def page(browser: Browser, guard: chromium.LoopbackOnly) -> Iterator[Page]:
    context, page = guard.new_page(browser, viewport={"width": 1100, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    yield page
    context.close()
