"""The playground in Chromium (Playwright) for the browser tests: the skip when there is no
Chromium, and what a visitor does (start an episode, send a call) and reads back."""

from __future__ import annotations

import os
import sys
from typing import Any

import httpx
import pytest
from checkout import REPO
from playwright.sync_api import Page, expect

sys.path.insert(0, str(REPO / "scripts"))
import chromium  # noqa: E402

TIMEOUT_MS = 20_000
"""How long a page's action (`page.set_default_timeout`) or an `expect` waits. Playwright's own
5 s for `expect` failed a fresh-clone run near the end of the suite, where the playground's
reply to Start waited for a core."""
expect.set_options(timeout=TIMEOUT_MS)


def require_chromium() -> None:
    """Skip the calling test module without a Chromium binary; in CI that is an error."""
    if chromium.chromium_path() is None:
        if os.environ.get("CI"):  # .ci/run installs it: a CI run without it must not pass silently
            raise RuntimeError("no Chromium binary in CI: .ci/run should have installed it")
        pytest.skip(
            "no Chromium binary (apt-get install chromium; .ci/run installs it)",
            allow_module_level=True,
        )


def start(page: Page, base: str, env: str, task_id: str, seed: str = "") -> None:
    page.goto(f"{base}/web")
    expect(page.locator("#start")).to_be_enabled()
    page.select_option("#env", env)
    page.select_option("#task", task_id)
    if seed:
        page.fill("#seed", seed)
    page.click("#start")
    expect(page.locator("#episode-status")).to_have_text("in progress")


def call(page: Page, endpoint: str, **params: str) -> None:
    """Choose an endpoint, fill its form, send it, and wait for the page to show the answer."""
    steps_before = page.locator("#history tbody tr").count()
    page.select_option("#endpoint", label=endpoint)
    for name, value in params.items():
        page.fill(f"#param-{name}", value)
    page.click("#send-call")
    expect(page.locator("#history tbody tr")).to_have_count(steps_before + 1)


def server_state(base: str, page: Page) -> dict[str, Any]:
    episode_id = page.locator("#episode-id").inner_text()
    return httpx.get(f"{base}/state", params={"episode_id": episode_id}, timeout=10).json()
