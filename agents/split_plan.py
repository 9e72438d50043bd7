"""The tasks of a `--split` run, read from the server's Task API.

Each selected environment plays the first `--limit` tasks of the split (of `--family`,
if given; by default one task per family of the split), in the split's own index
order, which interleaves its families. The specs come from `/{env}/splits` and
`/{env}/task_range`, so the run plays exactly the tasks a trainer would get by index,
and a split or family the server does not have is a usage error naming the ones it has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..client import EnvHttpClient
from ..models import TaskCard
from .config import Config, ConfigError

PAGE = 1_000
"""Specs per task_range request (the server's most)."""

Spec = Mapping[str, Any]


def card_of(spec: Spec) -> TaskCard:
    """The task card a split task plays under, as its spec states it."""
    return TaskCard(
        id=spec["task_id"],
        env=spec["env"],
        title=spec["title"],
        difficulty=spec["difficulty"],
        description="",
        max_steps=spec["max_steps"],
    )


def first_tasks(
    client: EnvHttpClient, env: str, split: Mapping[str, Any], family: str | None, wanted: int
) -> list[Spec]:
    """The first `wanted` specs of `split` (of `family`), paging through task_range."""
    found: list[Spec] = []
    for start in range(0, split["num_tasks"], PAGE):
        if len(found) >= wanted:
            break
        page = client.task_range(env, split["name"], start, start + PAGE)
        found += [spec for spec in page if family in (None, spec["family"])]
    return found[:wanted]


def split_tasks(
    client: EnvHttpClient, envs: Sequence[str], config: Config
) -> dict[str, list[Spec]]:
    """Per environment, the specs the run plays (an environment without `--family` is skipped)."""
    assert config.split is not None
    chosen: dict[str, list[Spec]] = {}
    families_seen: dict[str, list[str]] = {}
    for env in envs:
        splits = {split["name"]: split for split in client.splits(env)}
        split = splits.get(config.split)
        if split is None:
            raise ConfigError(
                f"--split {config.split!r}: {env} has no such split; its splits: "
                + ", ".join(splits)
            )
        families_seen[env] = list(split["families"])
        if config.family is not None and config.family not in split["families"]:
            continue
        wanted = config.limit or (1 if config.family else len(split["families"]))
        chosen[env] = first_tasks(client, env, split, config.family, wanted)
    if not chosen:
        known = "; ".join(f"{env}: {', '.join(names)}" for env, names in families_seen.items())
        raise ConfigError(
            f"--family {config.family!r} is not a family of split {config.split!r} ({known})"
        )
    return chosen
