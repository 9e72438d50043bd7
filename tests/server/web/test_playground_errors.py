"""The playground when a request goes wrong, in Chromium: the server's refusal is shown below the
action that caused it and scrolled into view; a lost episode ends the page's episode; a server
that cannot be reached is named in words. The playground is driven by clicks, as a visitor."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playground_support import TIMEOUT_MS, chromium, require_chromium, start
from playwright.sync_api import Browser, Page, expect
from uvicorn_process import started_server

require_chromium()

SHORT_SCREEN = {"width": 1100, "height": 560}  # the call form's button is below the fold
LOST = "lost: the server no longer has this episode"


def browser_noise_only(guard: chromium.LoopbackOnly) -> None:
    """A refused or failed request is logged by Chromium itself; nothing else may be."""
    assert guard.outside == []
    assert all(error.startswith("Failed to load resource") for error in guard.errors), guard.errors


def short_page(browser: Browser, guard: chromium.LoopbackOnly) -> tuple[Any, Page]:
    context, page = guard.new_page(browser, viewport=SHORT_SCREEN)
    page.set_default_timeout(TIMEOUT_MS)
    return context, page


def call_alert(page: Page) -> Any:
    """The alert right after the call form, where the page says what its request got."""
    return page.locator("#call-form + .error[role=alert]")


def test_a_refused_call_is_explained_below_it_and_in_view(
    browser: Browser, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    context, page = short_page(browser, guard)
    try:
        start(page, live_server, "servicebench", "order_status_lookup")
        page.select_option("#endpoint", label="GET /users/lookup")
        page.fill("#param-email", "x" * 70_000)  # a body over the server's MAX_BODY_BYTES
        page.click("#send-call")
        alert = call_alert(page)
        expect(alert).to_contain_text("POST /step answered 413")
        expect(alert).to_be_in_viewport()
        expect(page.locator("#episode-status")).to_have_text("in progress")
        expect(page.locator("#send-call")).to_be_enabled()  # fix the call and send it again

        page.fill("#param-email", "jane.doe@example.com")
        page.click("#send-call")
        expect(page.locator("#last-reward")).to_have_text("+0.450")
        expect(alert).to_be_empty()  # the next answer clears it
        browser_noise_only(guard)
    finally:
        context.close()


@pytest.fixture(scope="module")
def one_episode_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server that holds one live episode: a second reset evicts the first, as the cap does."""
    log = tmp_path_factory.mktemp("one-episode") / "server.log"
    with started_server({"MAX_LIVE_EPISODES": "1"}, log) as (_, url):
        yield url


def evict(base: str) -> None:
    """Lose the page's episode behind its back, as the cap or an expiry would: another reset
    from the same client takes the only place (an episode's owner alone may end it)."""
    answer = httpx.post(f"{base}/reset", json={}, timeout=30)
    assert answer.status_code == 200, answer.text


def test_a_lost_episode_ends_the_pages_episode(browser: Browser, one_episode_server: str) -> None:
    guard = chromium.LoopbackOnly(one_episode_server)
    context, page = guard.new_page(browser, viewport={"width": 1100, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    try:
        play_a_lost_episode(page, one_episode_server)
        browser_noise_only(guard)
    finally:
        context.close()


def play_a_lost_episode(page: Page, base: str) -> None:
    start(page, base, "support_queue", "easy_inbox_cleanup")
    evict(base)
    for name in ("priority", "queue", "disposition"):
        page.select_option(f"#triage-{name}", index=1)
    page.click("#submit-triage")

    alert = page.locator("#triage-form + .error[role=alert]")
    expect(alert).to_contain_text("POST /step answered 404")
    expect(alert).to_contain_text("start a new one")
    expect(alert).to_be_in_viewport()
    expect(page.locator("#episode-status")).to_have_text(LOST)
    for control in page.locator("#action").locator("button, select, textarea, input").all():
        expect(control).to_be_disabled()
    expect(page.locator("#start")).to_be_enabled()

    page.click("#start")  # a new episode plays again
    expect(page.locator("#episode-status")).to_have_text("in progress")
    expect(page.locator("#submit-triage")).to_be_enabled()


def test_a_server_that_cannot_be_reached_is_named(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    """The connection is refused under the page (as when the server is stopped)."""
    words = f"The server could not be reached at {live_server}; is it running?"
    start(page, live_server, "servicebench", "order_status_lookup")
    page.route(re.compile(r".*/step$"), lambda route: route.abort("connectionrefused"))
    page.select_option("#endpoint", label="GET /users/lookup")
    page.fill("#param-email", "jane.doe@example.com")
    page.click("#send-call")
    expect(call_alert(page)).to_have_text(words)
    expect(page.locator("body")).not_to_contain_text("Failed to fetch")
    expect(page.locator("#episode-status")).to_have_text("in progress")
    expect(page.locator("#send-call")).to_be_enabled()  # the server may be back: try again

    page.unroute(re.compile(r".*/step$"))
    page.route(re.compile(r".*/tasks$"), lambda route: route.abort("connectionrefused"))
    page.goto(f"{live_server}/web")
    alert = page.locator("#start + .error[role=alert]")
    expect(alert).to_contain_text(words)
    expect(alert).to_contain_text("Reload the page")
    expect(page.locator("#start")).to_be_disabled()
    browser_noise_only(guard)
