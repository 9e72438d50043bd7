"""No cross-site writes: a web page on another origin, in a real browser (Debian's Chromium),
sends what a browser lets any page send without asking the server first (no CORS
preflight): `fetch` in no-cors mode with a `Blob` body (no Content-Type) or a string body
(text/plain), `navigator.sendBeacon`, a text/plain form, an empty POST. Every one of them
reaches the server (the browser reports each answer) and is refused with 415, and the
episode a local user plays (the latest episode, which a step without an id reaches) is
left byte-identical: no page can step, reset or open an MCP session on a server it
merely reaches, such as one on the visitor's own machine.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import httpx
import pytest
from playground_support import require_chromium
from playwright.sync_api import Browser, Response
from robustness_support import LOOKUP

require_chromium()

ATTACK_PAGE = """<!doctype html>
<title>a page on another site</title>
<iframe name="sink"></iframe>
<script>
const target = new URL(location).searchParams.get("target");
const step = JSON.stringify(%(step)s);
const blob = () => new Blob([step]);
const sends = [];
for (const path of ["/step", "/servicebench/step"]) {
  sends.push(fetch(target + path, {method: "POST", mode: "no-cors", body: blob()}));
  sends.push(fetch(target + path, {method: "POST", mode: "no-cors", body: step}));
  navigator.sendBeacon(target + path, blob());
}
sends.push(fetch(target + "/reset", {method: "POST", mode: "no-cors"}));
sends.push(fetch(target + "/reset", {method: "POST", mode: "no-cors", body: new Blob(["{}"])}));
sends.push(fetch(target + "/mcp", {method: "POST", mode: "no-cors", body: JSON.stringify(
  {jsonrpc: "2.0", id: 1, method: "openenv/session/create", params: {}})}));
const form = document.createElement("form");
form.method = "POST";
form.action = target + "/step";
form.enctype = "text/plain";
form.target = "sink";
const field = document.createElement("input");
field.name = step.slice(0, -1) + ', "pad": "';
field.value = '"}';
form.append(field);
document.body.append(form);
form.submit();
Promise.allSettled(sends).then(() => { window.sent = true; });
</script>
"""
ATTACKS = 10  # the requests the page sends: 6 steps, 2 resets, 1 MCP message, 1 form


class AttackPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = (ATTACK_PAGE % {"step": repr(LOOKUP)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def other_site() -> Iterator[str]:
    """Another site, served from this machine too (a browser may also guard its loopback
    from public sites; a page on the machine is what every browser lets through)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), AttackPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_address[1]}"  # not 127.0.0.1: another site
    server.shutdown()
    server.server_close()


def test_a_page_on_another_site_cannot_step_or_reset_a_local_server(
    browser: Browser, live_server: str, other_site: str
) -> None:
    episode = httpx.post(f"{live_server}/reset", json={"task_id": "billing_discrepancy"}).json()
    episode_id = episode["episode_id"]
    before = httpx.get(f"{live_server}/state", params={"episode_id": episode_id}).content
    context = browser.new_context()
    answers: list[tuple[str, int]] = []

    def record(response: Response) -> None:
        if response.url.startswith(live_server):
            answers.append((urlsplit(response.url).path, response.status))

    page = context.new_page()
    page.on("response", record)
    try:
        page.goto(f"{other_site}/?target={live_server}")
        page.wait_for_function("window.sent === true", timeout=20_000)
        page.wait_for_timeout(50)
        deadline = 200
        while len(answers) < ATTACKS and deadline:  # beacons and the form answer on their own
            page.wait_for_timeout(100)
            deadline -= 1
    finally:
        context.close()
    assert len(answers) == ATTACKS, answers
    assert {status for _, status in answers} == {415}, answers
    assert {path for path, _ in answers} == {"/step", "/servicebench/step", "/reset", "/mcp"}
    after = httpx.get(f"{live_server}/state", params={"episode_id": episode_id}).content
    assert after == before
    assert httpx.get(f"{live_server}/state").json()["episode_id"] == episode_id  # still latest
    stepped = httpx.post(f"{live_server}/step", json=LOOKUP)  # the local user's own client
    assert stepped.json()["episode_id"] == episode_id
