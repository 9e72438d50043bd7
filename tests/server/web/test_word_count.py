"""The triage form's live word count in Chromium: typed tricky text is counted by the grader's
own rule (POST /support_queue/word_count, checked against `count_words` and the caps the
grader applies), a text over its cap is warned about before anything is submitted, and a
count the server cannot give is said to be unavailable, never guessed."""

from __future__ import annotations

from playground_support import chromium, require_chromium, server_state, start
from playwright.sync_api import Page, expect

from servicebench_support_queue.server.support_queue.text import WORD_CAPS, count_words

require_chromium()

TASK = "easy_inbox_cleanup"
# every piece counts differently by a plain [\p{L}\p{N}]+ count (a page's own) than by the grader
TRICKY = (
    "Never share your p a s s w o r d: the pass\u200bword reset e-mail for sign-in "
    "and 4,000 seats goes to j.kim@fernway.example (see https://status.example.com/x), "
    "\uff21\uff30\uff29 key in p\u0430ssw\u043erd"
)


def hint(page: Page, name: str):  # noqa: ANN201 - a Playwright locator
    return page.locator(f"#triage-{name}-hint")


def warning(page: Page, name: str):  # noqa: ANN201
    return page.locator(f"#triage-{name}-warning")


def test_typed_tricky_text_shows_the_graders_count_and_the_cap_is_warned_before_submission(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    start(page, live_server, "support_queue", TASK)
    for name in ("summary", "response"):
        expect(hint(page, name)).to_have_text(f"0 / {WORD_CAPS[name]} words")
        expect(warning(page, name)).to_be_empty()

    page.locator("#triage-summary").press_sequentially("sign-in, e-mail ", delay=20)
    page.locator("#triage-summary").press_sequentially("p a s s", delay=20)
    expect(hint(page, "summary")).to_have_text(
        f"{count_words('sign-in, e-mail p a s s')} / 60 words"
    )

    page.fill("#triage-response", TRICKY)
    expected = count_words(TRICKY)
    assert expected != len(TRICKY.split())  # the text is one on which naive counts go wrong
    expect(hint(page, "response")).to_have_text(f"{expected} / 150 words")
    expect(warning(page, "response")).to_be_empty()

    over = " ".join([TRICKY] * (150 // expected + 1))
    assert count_words(over) > WORD_CAPS["response"]
    page.fill("#triage-response", over)
    expect(hint(page, "response")).to_have_text(f"{count_words(over)} / 150 words")
    expect(warning(page, "response")).to_contain_text("Over the cap")
    expect(warning(page, "response")).to_contain_text("will earn 0")
    assert warning(page, "response").get_attribute("aria-live") == "assertive"
    described = page.locator("#triage-response").get_attribute("aria-describedby") or ""
    assert "triage-response-warning" in described.split()
    assert server_state(live_server, page)["step_count"] == 0  # warned before any submission

    page.fill("#triage-response", TRICKY)  # back under the cap: the warning goes
    expect(hint(page, "response")).to_have_text(f"{expected} / 150 words")
    expect(warning(page, "response")).to_be_empty()
    assert guard.outside == [] and guard.errors == []


def test_a_count_the_server_cannot_give_is_unavailable_not_guessed(
    page: Page, guard: chromium.LoopbackOnly, live_server: str
) -> None:
    start(page, live_server, "support_queue", TASK)
    expect(hint(page, "summary")).to_have_text("0 / 60 words")
    page.route("**/support_queue/word_count", lambda route: route.abort("connectionrefused"))
    page.fill("#triage-summary", "x " * 80)
    expect(hint(page, "summary")).to_contain_text("Word count unavailable")
    expect(warning(page, "summary")).to_be_empty()
    page.unroute("**/support_queue/word_count")
    page.route(
        "**/support_queue/word_count",
        lambda route: route.fulfill(status=500, json={"detail": "broken"}),
    )
    page.fill("#triage-summary", "one two")
    expect(hint(page, "summary")).to_contain_text("Word count unavailable")
    assert "2 /" not in (hint(page, "summary").inner_text())
    assert guard.outside == []
