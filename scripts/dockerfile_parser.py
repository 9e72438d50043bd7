"""A small reader of Dockerfiles and .dockerignore files, standard library only.

No Docker engine runs where this project is built and tested, so the Dockerfile
is checked by reading it (tests/test_dockerfile.py) and by replaying it
(scripts/replay_dockerfile.py). Both need the same reading of the file: this
module. It covers the syntax this project's Dockerfile uses (instructions,
line continuations, comments, exec and shell forms, flags, ENV pairs, $VAR
substitution) and Docker's .dockerignore matching rules.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_FLAG = re.compile(r"--([a-z-]+)=(\S+)\s+")
_VARIABLE = re.compile(r"\$(?:\{(\w+)(?::-([^}]*))?\}|(\w+))")


@dataclass(frozen=True)
class Instruction:
    """One instruction: its keyword (upper case), the rest of it, and its first line number."""

    keyword: str
    value: str
    line: int


def parse(text: str) -> list[Instruction]:
    """The instructions of a Dockerfile, continuation lines joined and comments dropped."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and not stripped:
            continue
        if stripped.startswith("#"):
            continue  # comments (and parser directives) may sit even inside a continuation
        if not pending:
            start = number
        continued = stripped.endswith("\\")
        pending.append(stripped[:-1].strip() if continued else stripped)
        if not continued:
            joined = " ".join(part for part in pending if part)
            keyword, _, value = joined.partition(" ")
            instructions.append(Instruction(keyword.upper(), value.strip(), start))
            pending = []
    if pending:
        raise ValueError(f"line {start}: the Dockerfile ends inside a line continuation")
    return instructions


def exec_form(value: str) -> list[str] | None:
    """The argv of an exec-form (JSON array) value, or None for the shell form."""
    if not value.startswith("["):
        return None
    argv = json.loads(value)
    if not isinstance(argv, list) or not all(isinstance(arg, str) for arg in argv):
        raise ValueError(f"not a JSON array of strings: {value}")
    return argv


def command_argv(value: str) -> list[str]:
    """What Docker executes for a RUN/CMD value: the exec form as is, the shell form under /bin/sh -c."""
    argv = exec_form(value)
    return argv if argv is not None else ["/bin/sh", "-c", value]


def split_flags(value: str) -> tuple[list[tuple[str, str]], str]:
    """Leading `--name=value` flags (e.g. RUN --mount=..., COPY --chown=...) and the rest."""
    flags = []
    while True:
        match = _FLAG.match(value)
        if match is None:
            return flags, value
        flags.append((match.group(1), match.group(2)))
        value = value[match.end() :]


def flag_fields(flag_value: str) -> dict[str, str]:
    """`type=cache,target=/x,uid=1000` -> {"type": "cache", "target": "/x", "uid": "1000"}."""
    fields = {}
    for item in flag_value.split(","):
        key, _, val = item.partition("=")
        fields[key] = val
    return fields


def env_pairs(value: str) -> list[tuple[str, str]]:
    """The (name, value) pairs of an ENV or ARG value, quotes removed, `$VAR`s left for later."""
    words = shlex.split(value, posix=True)
    if words and "=" not in words[0]:
        return [(words[0], " ".join(words[1:]))]  # legacy `ENV NAME value`
    return [(word.partition("=")[0], word.partition("=")[2]) for word in words]


def expand(text: str, variables: Mapping[str, str]) -> str:
    """Docker's substitution of `$NAME`, `${NAME}` and `${NAME:-default}` in instruction values."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        current = variables.get(name, "")
        if match.group(2) is not None and not current:
            return match.group(2)
        return current

    return _VARIABLE.sub(replace, text)


def healthcheck(value: str) -> tuple[dict[str, str], list[str]]:
    """The options and the command argv of a HEALTHCHECK value (`NONE` gives an empty argv)."""
    options, rest = split_flags(value + " ")
    rest = rest.strip()
    if rest.upper() == "NONE":
        return dict(options), []
    keyword, _, command = rest.partition(" ")
    if keyword.upper() != "CMD":
        raise ValueError(f"HEALTHCHECK needs CMD or NONE, got {rest!r}")
    return dict(options), command_argv(command.strip())


# ----------------------------------------------------------------------------- .dockerignore


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """Docker's pattern syntax: `**` any number of directories, `*` and `?` within one name."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


class DockerIgnore:
    """The rules of a .dockerignore: a path is excluded by the last pattern that matches it or a parent."""

    def __init__(self, text: str) -> None:
        self.rules: list[tuple[re.Pattern[str], bool]] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            cleaned = os.path.normpath(line[1:].strip() if negated else line).lstrip("/")
            self.rules.append((_pattern_regex(cleaned), negated))

    @classmethod
    def of(cls, context: Path) -> DockerIgnore:
        path = context / ".dockerignore"
        return cls(path.read_text(encoding="utf-8") if path.exists() else "")

    @property
    def has_exceptions(self) -> bool:
        return any(negated for _, negated in self.rules)

    def excludes(self, relative: str) -> bool:
        parts = relative.split("/")
        prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        excluded = False
        for regex, negated in self.rules:
            if any(regex.fullmatch(prefix) for prefix in prefixes):
                excluded = not negated
        return excluded


def context_files(context: Path) -> list[str]:
    """The files of a build context that COPY can see: everything the .dockerignore leaves in."""
    ignore = DockerIgnore.of(context)
    found = []
    for directory, subdirs, files in os.walk(context):
        base = Path(directory).relative_to(context).as_posix()
        prefix = "" if base == "." else base + "/"
        if not ignore.has_exceptions:
            subdirs[:] = [d for d in subdirs if not ignore.excludes(prefix + d)]
        subdirs.sort()
        found.extend(prefix + f for f in sorted(files) if not ignore.excludes(prefix + f))
    return found
