"""Print (or write into docs/servicebench.md) the tables of ServiceBench families, measured from the code.

    python scripts/servicebench_families.py            # both tables, as markdown
    python scripts/servicebench_families.py --write    # replace them in docs/servicebench.md

The section "Task families" of docs/servicebench.md holds exactly this output, between the markers
`<!-- families table -->` and `<!-- /families table -->` (a test checks it).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from servicebench_support_queue.server.servicebench.family_table import (
    families_markdown,
    measure,
    rows_markdown,
)

PAGE = Path(__file__).resolve().parents[1] / "docs" / "servicebench.md"
START, END = "<!-- families table -->", "<!-- /families table -->"


def tables() -> str:
    return f"{families_markdown(measure())}\n\n{rows_markdown()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--write", action="store_true", help="replace the tables in docs/servicebench.md"
    )
    if not parser.parse_args().write:
        print(tables())
        return
    text = PAGE.read_text(encoding="utf-8")
    block = f"{START}\n{tables()}\n{END}"
    updated, found = re.subn(
        rf"{re.escape(START)}.*?{re.escape(END)}", lambda _: block, text, flags=re.S
    )
    if found != 1:
        raise SystemExit(f"docs/servicebench.md needs exactly one {START} ... {END} block")
    PAGE.write_text(updated, encoding="utf-8")


if __name__ == "__main__":
    main()
