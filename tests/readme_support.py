"""Reading the README and the docs/ pages as tests do: their sections, code blocks and commands."""

from __future__ import annotations

import re
from pathlib import Path

from checkout import REPO

DOCS = REPO / "docs"
README = (REPO / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^ *```")
HEADING = re.compile(r"^(#+) (.+)$")
COMMAND_LANGUAGES = ("bash", "sh", "console")
"""The languages of the blocks a reader runs in a shell: tests/test_docs.py checks each is run."""


def documentation() -> list[Path]:
    """The README and every page of docs/: the user's manual."""
    return [REPO / "README.md", *sorted(DOCS.glob("*.md"))]


def page(name: str = "README.md") -> str:
    """A page's text, by its path in the repo (`README.md`, `docs/api.md`)."""
    return (REPO / name).read_text(encoding="utf-8")


def headings(text: str) -> list[tuple[int, int, str]]:
    """(line number, level, title) of every heading outside code blocks."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines()):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            found.append((number, len(match[1]), match[2].strip()))
    return found


def section(title: str, name: str = "README.md") -> str:
    """The section of `name` headed `title` (at any level), with its subsections, up to the next
    heading of the same or a higher level."""
    text = page(name)
    lines = text.splitlines(True)
    marks = headings(text)
    starts = [(number, level) for number, level, heading in marks if heading == title]
    assert len(starts) == 1, f"{name} needs exactly one section {title!r}"
    start, level = starts[0]
    end = next((n for n, lvl, _ in marks if n > start and lvl <= level), len(lines))
    return "".join(lines[start:end])


def slug(title: str) -> str:
    """The anchor GitHub (and the Hub) gives a heading."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def code_blocks(text: str, language: str) -> list[str]:
    """The bodies of the text's fenced blocks in `language` (their indentation removed)."""
    blocks = []
    for indent, body in re.findall(rf"^( *)```{language}\n(.*?)^\1```", text, re.S | re.M):
        blocks.append("".join(line.removeprefix(indent) for line in body.splitlines(True)))
    return blocks


def normalized(command: str) -> str:
    """A command with its line continuations joined and its whitespace collapsed."""
    return " ".join(command.replace("\\\n", " ").split())


def commands(block: str, language: str) -> list[str]:
    """The commands of a block, normalized: a console block's `$ ` lines, or a script's lines
    (continuations joined; blank and comment lines left out; a trailing comment kept)."""
    joined = block.replace("\\\n", " ")
    if language == "console":
        lines = [line[2:] for line in joined.splitlines() if line.startswith("$ ")]
    else:
        lines = [line for line in joined.splitlines() if line.strip() and line[:1] != "#"]
    return [normalized(line) for line in lines]
