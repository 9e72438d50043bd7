"""What OpenEnv's Gradio web interface would cost this server, against our own playground.

    .venv/bin/python -m bench.web_interface_bench --rounds 5 [--json]

Two apps, each served by one uvicorn worker on loopback (as the Dockerfile runs it),
started alternately `rounds` times:

- `ours`: the app as shipped; its playground (/web) is a few static files.
- `gradio`: the same app plus OpenEnv 0.10's web interface as `ENABLE_WEB_INTERFACE=true`
  builds it for one environment (ServiceBench): a `WebInterfaceManager` and the Gradio
  Blocks of its playground with OpenEnv's theme, mounted at /openenv-web.

`openenv.core` imports Gradio eagerly, so both processes pay for importing it; what the
interface adds is building and mounting the Blocks, and what Gradio does per page.
Per round: process start to the first 200 of /health (wall and CPU seconds), idle RSS
right then, and, with
Chromium (Debian's, as the browser test uses it), the page loaded once: its time until it
can be played (its start button shows), the bytes it fetched from the server, the requests it tried to make to
other hosts (aborted: none may leave the machine) and the server's RSS afterwards.
Nothing here is a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.servers import OURS, REPO, Target, serve

sys.path.insert(0, str(REPO / "scripts"))
PAGES = {"ours": "/web/", "gradio": "/openenv-web/"}
READY = {"ours": "#start:enabled", "gradio": "button:has-text('Reset')"}
"""What shows that a page can be played: its start button (ours), its Reset button (Gradio's)."""


TARGETS = {
    "ours": OURS,
    "gradio": Target("openenv-gradio-web", "bench.gradio_web_app:app", REPO),
}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (what a busy machine distorts least)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_page(base: str, path: str, ready: str) -> dict[str, Any]:
    import chromium
    from playwright.sync_api import sync_playwright

    guard = chromium.LoopbackOnly(base)
    with sync_playwright() as playwright:
        browser = chromium.launch(playwright)
        context, page = guard.new_page(browser)
        fetched: list[int] = []
        page.on("requestfinished", lambda r: fetched.append(r.sizes()["responseBodySize"]))
        started = time.perf_counter()
        page.goto(base + path, timeout=120_000)
        page.locator(ready).first.wait_for(timeout=120_000)
        ready_s = time.perf_counter() - started
        page.wait_for_timeout(1000)  # what the page loads once it shows
        context.close()
        browser.close()
    return {
        "ready_s": ready_s,
        "requests": len(fetched),
        "kb": sum(fetched) / 1024,
        "outside": sorted({u.split("/")[2] for u in guard.outside}),
    }


def one_round(kind: str, browser: bool) -> dict[str, Any]:
    with serve(TARGETS[kind]) as server:
        row: dict[str, Any] = {
            "healthy_s": server.seconds_to_healthy,
            "cpu_s_to_healthy": cpu_seconds(server.pid),
            "rss_idle_mb": server.rss_bytes() / 2**20,
        }
        if browser:
            row |= load_page(server.url, PAGES[kind], READY[kind])
            row["rss_after_page_mb"] = server.rss_bytes() / 2**20
    return row


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in rows[0]:
        values = [row[key] for row in rows]
        if isinstance(values[0], float | int):
            out[key] = {
                "median": round(statistics.median(values), 3),
                "min": round(min(values), 3),
                "max": round(max(values), 3),
            }
        else:
            out[key] = values[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import chromium

    browser = not args.no_browser and chromium.chromium_path() is not None
    rows: dict[str, list[dict[str, Any]]] = {"ours": [], "gradio": []}
    for _ in range(args.rounds):
        for kind in rows:
            rows[kind].append(one_round(kind, browser))
    result = {kind: summary(found) for kind, found in rows.items()}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for kind, figures in result.items():
        print(kind, json.dumps(figures))


if __name__ == "__main__":
    main()
