"""The playground and the API docs in a real browser: Debian's Chromium, driven by Playwright.

Every action is a click, a choice or typed text, as a visitor would do it; the assertions
read what the page shows and compare it with the server's own /state. Every page runs
behind a guard that aborts (and records) any request for another origin than the server
under test: the pages must work on a machine without internet. Skipped only when there
is no Chromium binary (`apt-get install chromium`), and never in CI, where .ci/run installs it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import httpx
import pytest
from playground_support import call, chromium, require_chromium, server_state, start
from playwright.sync_api import Browser, Page, expect

from servicebench_support_queue.server.support_queue.proof import gold_action
from servicebench_support_queue.server.support_queue.tasks import TASKS

require_chromium()

EASY_INBOX = next(task for task in TASKS if task.card.id == "easy_inbox_cleanup")
MARKUP = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script><b>bold</b>'


def unlabelled_controls(page: Page) -> list[str]:
    return page.evaluate(
        """() => [...document.querySelectorAll('input, select, textarea')]
              .filter((c) => !c.disabled && c.type !== 'hidden' && c.labels.length === 0)
              .map((c) => c.id || c.name)"""
    )


def test_servicebench_task_1_played_by_clicks_to_completion(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    start(page, live_server, "servicebench", "order_status_lookup")
    expect(page.locator("#steps")).to_have_text("0 of 8")
    expect(page.locator("#policy summary")).to_contain_text("Support policy")
    page.locator("#policy summary").click()
    expect(page.locator("#policy")).to_contain_text("at most $200.00 per request")
    page.select_option("#endpoint", label="GET /users/lookup")
    expect(page.locator("#endpoint-hint, .route")).to_contain_text("method GET")
    assert unlabelled_controls(page) == []

    call(page, "GET /users/lookup", email="jane.doe@example.com")
    expect(page.locator("#last-reward")).to_have_text("+0.450")
    expect(page.locator("#last-signals")).to_contain_text("user_id_retrieved")
    expect(page.locator("#api-response")).to_contain_text('"user_id": "USR-001"')
    expect(page.locator("#score")).to_have_text("0.450")

    call(page, "GET /orders/lookup", order_id="ORD-1005")
    expect(page.locator("#score")).to_have_text("1.000")
    expect(page.locator("#episode-status")).to_have_text("task completed")
    expect(page.locator("#final-score")).to_have_text("1.000")
    expect(page.locator("#task-completed")).to_have_text("yes")
    expect(page.locator("#end-state-matches")).to_have_text("yes")
    expect(page.locator("#collateral")).to_contain_text("None")
    expect(page.locator("#send-call")).to_be_disabled()
    expect(page.locator("#outcome-title")).to_be_focused()

    state = server_state(live_server, page)
    assert state["done"] and state["cumulative_reward"] == 1.0
    shown = page.locator("#history tbody tr").all_inner_texts()
    assert [call["endpoint"] for call in state["call_history"]] == [
        "/users/lookup",
        "/orders/lookup",
    ]
    assert all(c["endpoint"] in row for c, row in zip(state["call_history"], shown, strict=True))
    assert guard.outside == [] and guard.errors == []


def test_no_split_can_be_chosen_from_the_previous_environments_list_while_the_new_one_loads(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    """Before the fix a split chosen in that window was wiped when the new list landed."""
    held: list[Any] = []
    page.route("**/support_queue/splits", lambda route: held.append(route))  # released below
    page.goto(f"{live_server}/web")
    expect(page.locator("#start")).to_be_enabled()
    page.select_option("#env", "support_queue")
    expect(page.locator("#split")).to_be_disabled()
    expect(page.locator("#split option")).to_have_count(1)
    assert len(held) == 1
    held[0].continue_()
    splits = httpx.get(f"{live_server}/support_queue/splits", timeout=10).json()
    page.select_option("#split", splits[-1]["name"])
    expect(page.locator("#split-hint")).to_contain_text(", ".join(splits[-1]["families"]))
    assert guard.outside == [] and guard.errors == []


def test_splits_and_their_families_are_listed_and_a_split_task_starts_by_its_index(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    page.goto(f"{live_server}/web")
    expect(page.locator("#start")).to_be_enabled()
    for env in ("servicebench", "support_queue"):
        page.select_option("#env", env)
        splits = httpx.get(f"{live_server}/{env}/splits", timeout=10).json()
        expect(page.locator("#split option")).to_have_count(1 + len(splits))
        for split in splits:
            page.select_option("#split", split["name"])
            expect(page.locator("#split-hint")).to_contain_text(", ".join(split["families"]))
        expect(page.locator("#task")).to_be_disabled()
        expect(page.locator("#index")).to_be_enabled()
    page.fill("#index", "4")
    page.press("#index", "Tab")  # the change event: the page shows the task's spec
    spec = httpx.post(
        f"{live_server}/support_queue/task", json={"split": "test_families", "index": 4}, timeout=10
    ).json()["task"]
    expect(page.locator("#split-task")).to_contain_text(f"Task 4: {spec['id']}, family")
    assert unlabelled_controls(page) == []
    page.click("#start")
    expect(page.locator("#episode-status")).to_have_text("in progress")
    state = server_state(live_server, page)
    assert (state["split"], state["index"], state["seed"]) == ("test_families", 4, spec["seed"])
    expect(page.locator("#seed-shown")).to_have_text(str(spec["seed"]))
    expect(page.locator("#episode-title")).to_contain_text("test_families task 4")
    expect(page.locator("#curl")).to_contain_text('"split":"test_families","index":4')
    page.fill("#index", "999999")
    page.press("#index", "Tab")
    expect(page.locator("#split-task")).to_contain_text("out of range")
    page.select_option("#split", "")
    expect(page.locator("#task")).to_be_enabled()
    assert guard.outside == [] and guard.errors == []


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_pages_curl_lines_replay_the_episode_on_this_server(
    page: Page, live_server: str
) -> None:
    start(page, live_server, "servicebench", "return_and_refund", seed="17")
    task = page.locator(".task").inner_text()
    email = next(word for word in task.split() if "@" in word).rstrip(".")
    call(page, "GET /users/lookup", email=email)
    script = page.locator("#curl").inner_text()
    assert f"{live_server}/reset" in script and f"{live_server}/step" in script
    assert "localhost:8000" not in script

    replay = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert replay.returncode == 0, replay.stderr
    replayed = json_documents(replay.stdout)[-1]  # the last request: GET /state
    assert replayed["episode_id"] != page.locator("#episode-id").inner_text()
    ours = server_state(live_server, page)
    for key in ("seed", "task", "call_history", "cumulative_reward"):
        assert replayed[key] == ours[key], key


def json_documents(text: str) -> list[Any]:
    """The JSON answers curl printed back to back."""
    decoder, documents, at = json.JSONDecoder(), [], 0
    while at < len(text.rstrip()):
        document, at = decoder.raw_decode(text, at)
        documents.append(document)
        while at < len(text) and text[at].isspace():
            at += 1
    return documents


def test_a_support_queue_ticket_triaged_by_clicks(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    start(page, live_server, "support_queue", "easy_inbox_cleanup")
    first, second = EASY_INBOX.tickets
    expect(page.locator("#ticket-id")).to_have_text(first.ticket_id)
    expect(page.locator("#ticket-subject")).to_have_text(first.subject)
    assert unlabelled_controls(page) == []

    triage(page, gold_action(first).model_dump())
    expect(page.locator("#last-reward")).to_have_text("+1.000")
    feedback = page.locator("#feedback")
    for component in ("priority", "queue", "disposition"):
        expect(feedback.locator("tr", has_text=component).first).to_contain_text("correct")
    expect(feedback.locator("tr", has_text="summary")).to_contain_text("coverage 100%")
    expect(page.locator("#score")).to_have_text("1.000")
    expect(page.locator("#ticket-id")).to_have_text(second.ticket_id)  # on to the next ticket
    expect(page.locator("#ticket-title")).to_be_focused()

    wrong = {
        **gold_action(second).model_dump(),
        "priority": "P1" if second.gold.priority != "P1" else "P4",
        "confidence": 0.33,  # any value in [0, 1], not only a multiple of the spinner's step
    }
    triage(page, wrong)
    expect(feedback.locator("tr", has_text="priority")).to_contain_text("wrong")
    state = server_state(live_server, page)
    assert state["done"] and state["processed_ticket_ids"] == [first.ticket_id, second.ticket_id]
    assert [a["confidence"] for a in state["action_history"]] == [0.5, 0.33]
    expect(page.locator("#final-score")).to_have_text(f"{state['average_reward']:.3f}")
    expect(page.locator("#score")).to_have_text(f"{state['average_reward']:.3f}")
    assert state["average_reward"] < 1.0
    expect(page.locator("#history tbody tr")).to_have_count(2)
    expect(page.locator("#episode-status")).to_have_text("all 2 tickets triaged")
    assert guard.outside == [] and guard.errors == []


def triage(page: Page, action: dict[str, Any]) -> None:
    for name in ("priority", "queue", "disposition"):
        page.select_option(f"#triage-{name}", action[name])
    page.fill("#triage-summary", action["summary"])
    page.fill("#triage-response", action["response"])
    page.fill("#triage-confidence", str(action["confidence"]))
    graded = page.locator("#history tbody tr").count()
    page.click("#submit-triage")
    expect(page.locator("#history tbody tr")).to_have_count(graded + 1)


def fill_updates(page: Page, updates: dict[str, str]) -> None:
    """`updates` of /users/update: a field per named field when the catalogue names them,
    else the JSON box."""
    if page.locator("#param-updates").count():
        page.fill("#param-updates", json.dumps(updates))
    else:
        for name, value in updates.items():
            page.fill(f"#param-updates-{name}", value)


def no_markup_ran(page: Page) -> None:
    assert page.evaluate("window.pwned") is None
    assert page.locator("#episode img, #episode script, #episode b").count() == 0


def test_markup_a_player_writes_into_a_record_is_shown_as_text(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    """/users/update lets a player put HTML into a name; the page shows it as written, and the
    outcome lists it as collateral damage."""
    start(page, live_server, "servicebench", "order_status_lookup")
    page.select_option("#endpoint", label="POST /users/update")
    page.fill("#param-user_id", "USR-001")
    fill_updates(page, {"name": MARKUP})
    page.click("#send-call")
    expect(page.locator("#history tbody tr")).to_have_count(1)
    call(page, "GET /users/lookup", user_id="USR-001")
    expect(page.locator("#api-response")).to_contain_text(json.dumps(MARKUP))  # as JSON text
    call(page, "GET /orders/lookup", order_id="ORD-1005")
    expect(page.locator("#end-state-matches")).to_have_text("no")
    damage = page.locator("#collateral tbody tr")
    expect(damage).to_have_count(1)
    expect(damage).to_contain_text("USR-001")
    expect(damage).to_contain_text("window.pwned=2")
    no_markup_ran(page)
    assert guard.outside == [] and guard.errors == []


def test_markup_in_a_ticket_is_shown_as_text(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    """Ticket texts are customer input: a ticket carrying markup (planted in the server's
    answer on its way to the page) is shown as written."""

    def plant(route: Any) -> None:
        answer = route.fetch()
        body = answer.json()
        ticket = body["observation"]["ticket"]
        ticket.update(subject=MARKUP, body=MARKUP, customer_tier=MARKUP, recent_events=[MARKUP])
        body["observation"]["instructions"] = MARKUP
        route.fulfill(response=answer, json=body)

    page.route("**/reset", plant)
    start(page, live_server, "support_queue", "easy_inbox_cleanup")
    expect(page.locator("#ticket-subject")).to_have_text(MARKUP)
    expect(page.locator("#ticket-body")).to_have_text(MARKUP)
    expect(page.locator("#ticket-events li")).to_have_text(MARKUP)
    no_markup_ran(page)
    assert guard.outside == [] and guard.errors == []


def test_the_call_form_follows_what_the_catalogue_declares(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    """A closed value set is a choice, an object's named fields are fields, an object without
    them a JSON box that refuses what is not JSON; what is sent is what the server records.
    (The catalogue is extended on its way to the page, so every form the page can build is tried.)"""

    def catalogue(declared: bool) -> Any:
        """Rewrite /reset's catalogue: closed sets and named fields declared, or neither."""

        def rewrite(route: Any) -> None:
            answer = route.fetch()
            body = answer.json()
            for spec in body["observation"]["available_endpoints"]:
                if spec["endpoint"] == "/orders/update-status":
                    status = spec["params"]["new_status"]
                    status.pop("enum", None)
                    if declared:
                        status["enum"] = ["delivered", "returned", "cancelled"]
                if spec["endpoint"] == "/users/update":
                    updates = spec["params"]["updates"]
                    updates.pop("fields", None)
                    updates.pop("properties", None)
                    if declared:
                        updates["fields"] = ["name", "notes"]
            route.fulfill(response=answer, json=body)

        return rewrite

    page.route("**/reset", catalogue(declared=False))
    start(page, live_server, "servicebench", "billing_discrepancy")
    page.select_option("#endpoint", label="POST /users/update")
    page.fill("#param-user_id", "USR-003")
    page.fill("#param-updates", "{not json")
    page.click("#send-call")
    assert page.evaluate("document.getElementById('param-updates').validity.valid") is False
    assert page.locator("#history tbody tr").count() == 0  # nothing was sent

    page.unroute("**/reset")
    page.route("**/reset", catalogue(declared=True))
    start(page, live_server, "servicebench", "billing_discrepancy")
    page.select_option("#endpoint", label="POST /orders/update-status")
    page.fill("#param-order_id", "ORD-1009")
    assert page.locator("#param-new_status option").all_inner_texts()[1:] == [
        "delivered",
        "returned",
        "cancelled",
    ]
    page.select_option("#param-new_status", "cancelled")
    page.click("#send-call")
    expect(page.locator("#history tbody tr")).to_have_count(1)
    page.select_option("#endpoint", label="POST /users/update")
    page.fill("#param-user_id", "USR-003")
    page.fill("#param-updates-notes", "Coupon added instead of deducted")
    page.click("#send-call")
    expect(page.locator("#history tbody tr")).to_have_count(2)
    sent = [call["params"] for call in server_state(live_server, page)["call_history"]]
    assert sent == [
        {"order_id": "ORD-1009", "new_status": "cancelled"},
        {"user_id": "USR-003", "updates": {"notes": "Coupon added instead of deducted"}},
    ]
    assert guard.outside == [] and guard.errors == []


def test_a_long_value_wraps_inside_the_history_and_words_stay_whole(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    """A parameter's JSON is one long word: it wraps in its cell, so the history fits the page;
    the words of other cells (endpoints, signals) are never split."""
    start(page, live_server, "servicebench", "order_status_lookup")
    page.select_option("#endpoint", label="POST /users/update")
    page.fill("#param-user_id", "USR-001")
    fill_updates(page, {"notes": "n" * 300})
    page.click("#send-call")
    expect(page.locator("#history tbody tr")).to_have_count(1)
    wrap = page.evaluate(
        "(() => { const w = document.querySelector('#history .table-wrap');"
        " return [w.scrollWidth, w.clientWidth]; })()"
    )
    assert wrap[0] <= wrap[1], wrap
    lines = page.evaluate(
        """() => [...document.querySelectorAll('#history td:nth-child(2) code')]
              .map((c) => [c.getClientRects().length, c.textContent.split(' ').length])"""
    )
    assert lines and all(rects <= words for rects, words in lines), lines  # no word split
    assert guard.outside == [] and guard.errors == []


def test_the_playground_fits_a_narrow_screen_and_works_from_the_keyboard(
    browser: Browser, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    context, page = guard.new_page(browser, viewport={"width": 360, "height": 740})
    try:
        page.goto(f"{live_server}/web")
        expect(page.locator("#start")).to_be_enabled()
        page.focus("#start")
        page.keyboard.press("Enter")
        expect(page.locator("#episode-title")).to_be_focused()
        page.keyboard.press("Tab")  # the support policy's fold first, then the call form
        expect(page.locator("#policy summary")).to_be_focused()
        page.keyboard.press("Tab")
        expect(page.locator("#endpoint")).to_be_focused()
        page.keyboard.press("Tab")
        expect(page.locator("#param-email")).to_be_focused()
        page.keyboard.type("jane.doe@example.com")
        page.keyboard.press("Enter")
        expect(page.locator("#last-reward")).to_have_text("+0.450")
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        assert guard.outside == [] and guard.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("prefix", ["", "/servicebench", "/support_queue"])
def test_the_api_docs_render_offline(
    page: Page, guard: chromium.LoopbackOnly, live_server: str, prefix: str
) -> None:
    page.goto(f"{live_server}{prefix}/docs")
    operations = page.locator(".opblock-summary-path")
    expect(operations.first).to_be_visible()
    paths = set(operations.all_inner_texts())
    assert {"/reset", "/step", "/state", "/tasks"} <= {
        p.strip().replace("\u200b", "") for p in paths
    }
    assert guard.outside == [] and guard.errors == []


def test_redoc_renders_offline(page: Page, guard: chromium.LoopbackOnly, live_server: str) -> None:
    """ReDoc asks for its own logo from its CDN; the page's policy refuses it before any
    request is made (a console error, not a request)."""
    page.goto(f"{live_server}/servicebench/redoc")
    expect(page.get_by_role("heading", name="Start an episode")).to_be_visible()
    assert guard.outside == []
    assert all("Content Security Policy" in error for error in guard.errors), guard.errors
