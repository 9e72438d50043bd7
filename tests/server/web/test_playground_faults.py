"""The playground's fault level, in Chromium: offered for ServiceBench only, sent on reset,
and the faults shown as the API answered them (see test_browser.py for the style)."""

from __future__ import annotations

import re

from playground_support import call, chromium, require_chromium, server_state
from playwright.sync_api import Page, expect

from servicebench_support_queue.server.servicebench.faults.controls import run_fault_control

require_chromium()

FAULT_STATUS = (503, 429, 504)
TASK = "order_status_lookup"


def seed_with_a_fault() -> int:
    """A seed whose heavy schedule faults the oracle's calls (found, not hard-coded: the
    schedule is data, and may be retuned)."""
    for seed in range(1, 100):
        play = run_fault_control("oracle", TASK, seed, faults="heavy")
        if play.env.state.faults:
            return seed
    raise AssertionError("no seed of 1-99 meets a fault at heavy")


def test_the_fault_level_is_servicebenchs_and_reaches_the_reset(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    page.goto(f"{live_server}/web")
    expect(page.locator("#start")).to_be_enabled()
    page.select_option("#env", "servicebench")
    expect(page.locator("#faults")).to_be_visible()
    assert page.locator("#faults option").all_inner_texts() == ["off", "light", "heavy"]
    expect(page.locator("#faults")).to_have_value("off")
    page.select_option("#faults", "heavy")
    page.select_option("#env", "support_queue")
    expect(page.locator("#faults")).to_be_hidden()
    page.click("#start")  # Support Queue has no faults: none is sent, whatever was chosen
    expect(page.locator("#episode-status")).to_have_text("in progress")
    assert "fault_level" not in server_state(live_server, page)
    expect(page.locator("#curl")).not_to_contain_text("faults")
    expect(page.locator("#faults-shown-row")).to_be_hidden()

    support_episode = page.locator("#episode-id").inner_text()
    page.select_option("#env", "servicebench")
    expect(page.locator("#faults")).to_have_value("heavy")
    page.select_option("#task", TASK)
    page.fill("#seed", str(seed_with_a_fault()))
    page.click("#start")
    # the status already read "in progress" (the Support Queue episode): wait for the new id
    expect(page.locator("#episode-id")).not_to_have_text(support_episode)
    expect(page.locator("#episode-status")).to_have_text("in progress")
    state = server_state(live_server, page)
    assert state["fault_level"] == "heavy" and state["faults"] == []
    expect(page.locator("#faults-shown")).to_have_text("heavy")
    expect(page.locator("#curl")).to_contain_text('"faults":"heavy"')

    task = page.locator(".task").inner_text()
    email = re.search(r"[\w.]+@[\w.]+\w", task).group(0)
    order_id = re.search(r"ORD-\d+", task).group(0)
    call(page, "GET /users/lookup", email=email)
    shown_faults = 0
    while not server_state(live_server, page)["done"]:
        call(page, "GET /orders/lookup", order_id=order_id)  # retried through its faults
        last = server_state(live_server, page)["call_history"][-1]
        expect(page.locator("#api-response")).to_contain_text(
            f'"status_code": {last["status_code"]}'
        )
        if last["status_code"] in FAULT_STATUS:
            shown_faults += 1
            if last["status_code"] == 429:
                expect(page.locator("#api-response")).to_contain_text('"retry_after_steps"')
        assert len(server_state(live_server, page)["call_history"]) < 8, "retries get through"
    state = server_state(live_server, page)
    assert state["task_completed"] and shown_faults == len(state["faults"]) > 0
    assert guard.outside == [] and guard.errors == []
