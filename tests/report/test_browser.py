"""The HTML report in Chromium, opened from disk as a reader opens it: it draws its charts,
fetches nothing, runs no script, and folds an episode out on a click."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playground_support import TIMEOUT_MS, chromium, require_chromium
from playwright.sync_api import Page, expect, sync_playwright
from report_results import results_document

from servicebench_support_queue.agents.output import Redactor
from servicebench_support_queue.report import write_html_report

require_chromium()


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[tuple[Page, chromium.LoopbackOnly]]:
    path = write_html_report(tmp_path / "report.html", results_document(True), Redactor())
    with sync_playwright() as playwright:
        browser = chromium.launch(playwright)
        guard = chromium.LoopbackOnly("file://")
        context, page = guard.new_page(browser, viewport={"width": 1100, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(path.as_uri())
        yield page, guard
        context.close()
        browser.close()


def test_the_report_draws_its_charts_and_fetches_nothing(
    opened: tuple[Page, chromium.LoopbackOnly],
) -> None:
    page, guard = opened
    charts = page.locator("figure.chart svg")
    expect(charts).to_have_count(6)
    for index in range(6):
        box = charts.nth(index).bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 100
    expect(page.locator("#table-0 tbody tr")).to_have_count(2)
    expect(page.locator("#table-0 tbody tr").first).to_contain_text("0.467")
    assert page.evaluate("document.scripts.length") == 0
    assert guard.outside == [] and guard.errors == []


def test_an_episode_folds_out_on_a_click_with_its_calls_and_outcome(
    opened: tuple[Page, chromium.LoopbackOnly],
) -> None:
    page, guard = opened
    episode = page.locator("details.episode").first
    steps = episode.locator("table.steps")
    expect(steps).to_be_hidden()
    episode.locator("summary").click()
    expect(steps).to_be_visible()
    expect(steps).to_contain_text("GET /orders/lookup")
    expect(steps).to_contain_text("<b>ORD-1</b>")  # shown as the text it is
    expect(episode.locator(".outcome")).to_contain_text("Collateral damage")
    ticket = page.locator("details.episode[data-env='support_queue']").first
    ticket.locator("summary").click()
    expect(ticket.locator("table.grading")).to_contain_text("invoice number")
    assert guard.outside == [] and guard.errors == []
