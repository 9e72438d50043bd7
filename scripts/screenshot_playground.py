"""The screenshot of the playground (docs/playground.md), mid-episode: docs/playground.png.

    python scripts/screenshot_playground.py [--out docs/playground.png]

Serves the app in this process on a free loopback port, plays three calls of
ServiceBench's `return_and_refund` in Debian's Chromium (scripts/chromium.py) by clicks,
picks the refund endpoint for the next call, and takes the top of the page. Any request
for another host is aborted, and the script fails if the page tried one.
"""

from __future__ import annotations

import argparse
import socket
import threading
import time
from pathlib import Path

import chromium
import uvicorn
from playwright.sync_api import Page, expect

from servicebench_support_queue.server.app import create_app

REPO = Path(__file__).resolve().parent.parent
CALLS = (
    ("GET /users/lookup", {"email": "jane.doe@example.com"}),
    ("GET /orders/lookup", {"order_id": "ORD-1005"}),
    ("GET /inventory/lookup", {"sku": "SKU-445"}),
)


def serve_in_background() -> tuple[uvicorn.Server, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not start")
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def play(page: Page, base: str) -> None:
    page.goto(f"{base}/web")
    expect(page.locator("#start")).to_be_enabled()
    page.select_option("#task", "return_and_refund")
    page.click("#start")
    for step, (endpoint, params) in enumerate(CALLS, 1):
        page.select_option("#endpoint", label=endpoint)
        for name, value in params.items():
            page.fill(f"#param-{name}", value)
        page.click("#send-call")
        expect(page.locator("#history tbody tr")).to_have_count(step)
    page.select_option("#endpoint", label="POST /orders/process-refund")
    page.fill("#param-order_id", "ORD-1005")
    page.fill("#param-amount", "49.99")
    page.fill("#param-reason", "Item SKU-445 arrived damaged")
    page.evaluate("window.scrollTo(0, 0)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "playground.png")
    args = parser.parse_args()
    server, base = serve_in_background()
    try:
        chromium.screenshot(base, args.out, (1024, 1500), lambda page: play(page, base))
    finally:
        server.should_exit = True


if __name__ == "__main__":
    main()
