"""The playground's replay of a results file, in Chromium: a real `inference.py --fallback` run's
file, chosen with the file input as a visitor would, read by the browser (nothing is sent to the
server), and stepped through with Next and Previous."""

from __future__ import annotations

import json
from pathlib import Path

from inference_support import run_in_process
from playground_support import chromium, require_chromium
from playwright.sync_api import Page, Request, expect

require_chromium()


def fallback_results(live_server: str, directory: Path) -> Path:
    """A real run: ServiceBench's return_and_refund and Support Queue's first task, no model."""
    path = directory / "results.json"
    for task, name in (("return_and_refund", "sb.json"), ("easy_inbox_cleanup", "sq.json")):
        files = ("--output", str(directory / name), "--trajectories", str(directory / "t.jsonl"))
        code, _, err = run_in_process(
            {"ENV_BASE_URL": live_server},
            ["--fallback", "--task", task, "--no-progress", "--output-dir", str(directory), *files],
        )
        assert code == 0, err
    documents = [json.loads((directory / name).read_text()) for name in ("sb.json", "sq.json")]
    path.write_text(
        json.dumps({**documents[0], "tasks": [*documents[0]["tasks"], *documents[1]["tasks"]]})
    )
    return path


def test_a_results_file_replays_step_by_step_without_a_request(
    page: Page, guard: chromium.LoopbackOnly, live_server: str, tmp_path: Path
) -> None:
    results = fallback_results(live_server, tmp_path)
    [refund, inbox] = json.loads(results.read_text())["tasks"]
    page.goto(f"{live_server}/web")
    expect(page.locator("#start")).to_be_enabled()
    requests: list[Request] = []
    page.on("request", lambda request: requests.append(request))
    page.set_input_files("#replay-file", str(results))
    expect(page.locator("#replay-episode option")).to_have_count(2)
    expect(page.locator("#replay-position")).to_have_text(f"Step 1 of {len(refund['trajectory'])}")
    expect(page.locator("#replay-prev")).to_be_disabled()
    for index, step in enumerate(refund["trajectory"]):
        expect(page.locator("#replay-position")).to_have_text(f"Step {index + 1} of 5")
        expect(page.locator("#replay-action")).to_contain_text(step["action"]["endpoint"])
        expect(page.locator("#replay-facts")).to_contain_text(f"+{step['reward']:.3f}")
        if index < 4:
            page.click("#replay-next")
    expect(page.locator("#replay-next")).to_be_disabled()
    expect(page.locator("#replay-outcome")).to_contain_text("End state matches: yes")
    page.click("#replay-prev")
    expect(page.locator("#replay-position")).to_have_text("Step 4 of 5")
    expect(page.locator("#replay-outcome")).to_have_count(0)

    page.select_option("#replay-episode", "1")
    expect(page.locator("#replay-summary")).to_contain_text("easy_inbox_cleanup")
    first_ticket = inbox["trajectory"][0]["observation"]["last_feedback"]["ticket_id"]
    expect(page.locator("#replay-step table")).to_contain_text(f"Grading of ticket {first_ticket}")
    assert requests == [], "the file is read in the browser, nothing is sent"
    assert guard.outside == [] and guard.errors == []


def test_a_file_that_is_not_results_is_named(
    page: Page, guard: chromium.LoopbackOnly, live_server: str, tmp_path: Path
) -> None:
    page.goto(f"{live_server}/web")
    for name, content, message in (
        ("notes.txt", "hello", "notes.txt is not JSON"),
        ("other.json", '{"a": 1}', "not an inference.py results file"),
    ):
        (tmp_path / name).write_text(content)
        page.set_input_files("#replay-file", str(tmp_path / name))
        expect(page.locator("#replay-error")).to_contain_text(message)
        expect(page.locator("#replay-view")).to_be_hidden()
    assert guard.outside == [] and guard.errors == []
