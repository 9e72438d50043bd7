"""An episode as data: a header and the log of its validated actions.

The environments are deterministic, so the header (environment, task, seed, episode
id, and the version of the code and data that play them) plus the actions in order
rebuild an episode exactly, in any process: tests/server/store/test_replay.py checks
that replaying any prefix of a log gives byte-identical observations and state. This
is what the durable stores keep, and how a process that never saw an episode serves
its next step.

A log is only as good as the code that replays it: a log written by another version
(the package version, or any module or data file that can change what an action does)
is refused with `EpisodeVersionError`, never replayed into a different episode.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from ... import __version__
from ...error_messages import shown
from ...models import EpisodeObservation
from ...openenv_types import Action
from ..lifecycle.episode import NO_FAULTS, EpisodeEnvironment, EpisodeError, action_entry

FORMAT = 2
"""The layout of a header and its entries, and of what the stores keep beside them (2: an
owner and a client per episode); a change of layout changes this number."""
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
REPLAY_NEUTRAL = (
    "agents",
    "client.py",
    "inference.py",
    "server/app.py",
    "server/lifecycle/episodes.py",
    "server/lifecycle/owners.py",
    "server/lifecycle/sessions.py",
    "server/mcp",
    "server/protocols",
    "server/settings.py",
    "server/strict_json.py",
    "server/store",
    "server/transport/body_limit.py",
    "server/transport/encoding.py",
    "server/transport/fast_path.py",
    "server/transport/http_api.py",
    "server/transport/log_redaction.py",
    "server/transport/mcp_http.py",
    "server/transport/origins.py",
    "server/transport/ws.py",
    "server/web",
)
"""What cannot change what a log replays to: the agents, the clients, the transports and
the stores. Everything else of the package (environments, services, models, data, and any
module added later) is part of the replay version."""


class EpisodeVersionError(EpisodeError):
    """The episode was recorded by other code or data: replaying it could give another episode."""

    status = 409


class CorruptLogError(EpisodeError):
    """A stored header or entry that this server cannot read (written by something else)."""

    status = 409


NOT_THE_PACKAGE = ("bench", "examples", "scripts", "tests", "validation")
"""Folders of a checkout beside the package's modules, absent from an installed wheel."""


def _replay_files(root: Path) -> list[Path]:
    """The package's modules and data files that are part of the replay version (the same
    list in a checkout as in the installed wheel: only folders that are packages count)."""
    neutral = {root / name for name in REPLAY_NEUTRAL}
    files = list((root / "data").glob("*.json"))
    folders = [root]
    while folders:
        folder = folders.pop()
        if folder in neutral:
            continue
        files += (path for path in folder.glob("*.py") if path not in neutral)
        folders += (
            sub
            for sub in folder.iterdir()
            if (sub / "__init__.py").is_file()
            and not (folder == root and sub.name in NOT_THE_PACKAGE)
        )
    return sorted(files)


def code_digest(root: Path = PACKAGE_ROOT) -> str:
    """A digest of every module and data file that can change what a log replays to."""
    digest = hashlib.sha256()
    for path in _replay_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@cache
def replay_version() -> str:
    """This server's replay version: the package version plus the code and data digest."""
    return f"{__version__}+{code_digest()[:16]}"


@dataclass(frozen=True)
class Header:
    """What starts an episode: replaying its log from here rebuilds it."""

    env: str
    task_id: str
    seed: int | None
    episode_id: str
    version: str
    incarnation: str = ""
    """Random, so that two episodes that had the same id one after the other never match."""
    format: int = FORMAT
    family: str | None = None
    """The family the reset named (None: the seed's own)."""
    split: str | None = None
    index: int | None = None
    """The Task API split and index the episode was reset with (None: by task and seed)."""
    faults: str = NO_FAULTS
    """The reset's fault level: the services' faults are a function of it, the variant and
    the actions, so a replay with it meets the very same faults."""

    @classmethod
    def of(cls, env: EpisodeEnvironment, incarnation: str = "") -> Header:
        assert env.task is not None, "a header is written after reset"
        return cls(
            env.env_name,
            env.task.id,
            env.seed,
            env.episode_id,
            replay_version(),
            incarnation,
            family=env.family,
            split=env.split,
            index=env.index,
            faults=env.fault_level,
        )

    def to_json(self) -> str:
        fields = asdict(self)
        if fields["family"] is None:  # a header without a family reads as before
            del fields["family"]
        if fields["faults"] == NO_FAULTS:  # nor one without faults
            del fields["faults"]
        return json.dumps(fields, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes, episode_id: str) -> Header:
        try:
            fields = json.loads(raw)
            header = cls(**fields)
        except (ValueError, TypeError) as exc:
            raise CorruptLogError(
                f"episode {shown(episode_id)} has a header this server cannot read ({exc})"
            ) from None
        if header.format != FORMAT or header.version != replay_version():
            raise EpisodeVersionError(
                f"episode {shown(episode_id)} was recorded by version {header.version} "
                f"(log format {header.format}); this server runs {replay_version()} "
                f"(log format {FORMAT}), whose environments' code or data differ: its log "
                "cannot be replayed here. Start a new episode with /reset"
            )
        return header


def entry_of(action: Action) -> str:
    """The log entry of a validated action: the entry its episode keeps (server/lifecycle/episode.py)."""
    return action_entry(action).decode()


def same_action(entry: str, other: str) -> bool:
    """Whether two entries are the same action, however their keys are ordered."""
    if entry == other:
        return True
    return _canonical(entry) == _canonical(other)


def _canonical(entry: str) -> str:
    return json.dumps(json.loads(entry), sort_keys=True, separators=(",", ":"))


def replay(
    env_cls: type[EpisodeEnvironment], header: Header, actions: Iterable[Action]
) -> tuple[EpisodeEnvironment, EpisodeObservation]:
    """A new episode of `header` after `actions`, and its last observation."""
    env = env_cls()
    if header.split is not None:
        observation = env.reset(
            episode_id=header.episode_id,
            split=header.split,
            index=header.index,
            faults=header.faults,
        )
    else:
        observation = env.reset(
            seed=header.seed,
            episode_id=header.episode_id,
            task_id=header.task_id,
            family=header.family,
            faults=header.faults,
        )
    for action in actions:
        observation = env.step(action)
    return env, observation


class Replayer:
    """Rebuilds episodes of a set of environments from their headers and logged entries."""

    def __init__(self, envs: Iterable[type[EpisodeEnvironment]]) -> None:
        self._envs = {env.env_name: env for env in envs}

    def env_class(self, header: Header) -> type[EpisodeEnvironment]:
        env_cls = self._envs.get(header.env)
        if env_cls is None:
            raise CorruptLogError(
                f"episode {shown(header.episode_id)} is of env {shown(header.env)}, "
                "which this server does not serve"
            )
        return env_cls

    async def prepare(self, header: Header) -> None:
        """Have the episode's variant built, off the event loop, before `replay` needs it."""
        env_cls = self.env_class(header)
        if header.split is not None:
            await env_cls.prepared_split_task(header.split, header.index, None)
        else:
            await env_cls.prepared_variant(header.task_id, header.seed, header.family)

    def replay(
        self, header: Header, entries: Sequence[str | bytes]
    ) -> tuple[EpisodeEnvironment, EpisodeObservation]:
        """The episode after `entries`, and its last observation."""
        env_cls = self.env_class(header)
        return replay(env_cls, header, (decode(env_cls, header, entry) for entry in entries))


def catch_up(env: EpisodeEnvironment, entries: Iterable[str | bytes]) -> None:
    """Apply logged `entries` to `env` in order (they were recorded on this very state)."""
    header = Header.of(env)
    for entry in entries:
        env.step(decode(type(env), header, entry))


def decode(env_cls: type[EpisodeEnvironment], header: Header, entry: str | bytes) -> Action:
    try:
        return env_cls.action_cls.model_validate_json(entry)
    except ValueError as exc:
        raise CorruptLogError(
            f"episode {shown(header.episode_id)} has a logged action this server cannot read: {exc}"
        ) from None
