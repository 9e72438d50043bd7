"""The screenshot of the HTML report (docs/inference.md) of a real `--fallback` run: docs/report.png.

    python scripts/screenshot_report.py [--out docs/report.png]

Serves the app in this process on a free loopback port, runs `inference.py --fallback` on ten
held-out seeds, two tries each, against it (in this process), opens the report it wrote in
Debian's Chromium (scripts/chromium.py) from disk, and takes the top of the page. Any
request the page makes is aborted, and the script fails if it tried one.
"""

from __future__ import annotations

import argparse
import io
import tempfile
from pathlib import Path

import chromium
from screenshot_playground import serve_in_background

from servicebench_support_queue import inference

REPO = Path(__file__).resolve().parent.parent
RUN = ("--fallback", "--seeds", "100000-100009", "--repeats", "2", "--no-progress")
HEIGHT = 1500


def run_fallback(base: str, directory: Path) -> Path:
    """The run's HTML report (its other files beside it, in `directory`)."""
    out, err = io.StringIO(), io.StringIO()
    code = inference.main([*RUN, "--output-dir", str(directory)], {"ENV_BASE_URL": base}, out, err)
    if code != 0:
        raise SystemExit(f"inference.py exited {code}: {err.getvalue()[-2000:]}")
    return directory / "inference_report.html"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "report.png")
    args = parser.parse_args()
    server, base = serve_in_background()
    try:
        with tempfile.TemporaryDirectory() as directory:
            report = run_fallback(base, Path(directory))
            chromium.screenshot(
                "file://", args.out, (1100, HEIGHT), lambda p: p.goto(report.as_uri())
            )
    finally:
        server.should_exit = True


if __name__ == "__main__":
    main()
