"""Measure ServiceBench under faults: the oracle and the two fault-handling controls at every level.

    python scripts/servicebench_faults.py            # the tables, as markdown
    python scripts/servicebench_faults.py --write    # the tables into the docs, the raw result
                                                     # into bench/results/servicebench_faults.json

The docs hold exactly this output between `<!-- faults table -->` and
`<!-- /faults table -->` (a test checks it against a fresh measurement, and the raw result
too). Everything is deterministic: the same code gives the same numbers on any machine.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from servicebench_support_queue.server.servicebench.faults.table import (
    faults_markdown,
    measure_faults,
)

REPO = Path(__file__).resolve().parents[1]
RAW = REPO / "bench" / "results" / "servicebench_faults.json"
START, END = "<!-- faults table -->", "<!-- /faults table -->"


def docs_with_table() -> Path:
    """The one docs page (or the README) that holds the faults table's markers."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    found = [page for page in pages if page.exists() and START in page.read_text("utf-8")]
    if len(found) != 1:
        raise SystemExit(f"exactly one page needs a {START} ... {END} block, found {found}")
    return found[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--write", action="store_true", help="replace the tables in the docs, keep the raw result"
    )
    measured = measure_faults()
    table = faults_markdown(measured)
    if not parser.parse_args().write:
        print(table)
        return
    RAW.write_text(json.dumps(measured, indent=2) + "\n", encoding="utf-8")
    page = docs_with_table()
    block = f"{START}\n{table}\n{END}"
    text, count = re.subn(
        rf"{re.escape(START)}.*?{re.escape(END)}",
        lambda _: block,
        page.read_text("utf-8"),
        flags=re.S,
    )
    if count != 1:
        raise SystemExit(f"{page.name} needs exactly one {START} ... {END} block")
    page.write_text(text, encoding="utf-8")
    print(f"wrote {page.relative_to(REPO)} and {RAW.relative_to(REPO)}")


if __name__ == "__main__":
    main()
