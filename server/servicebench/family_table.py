"""The tables of ServiceBench families in docs/servicebench.md, measured from the code so they cannot drift.

`measure(seeds)` plays every family on every seed with the oracle and with each negative
control (controls.py); `families_markdown` renders the catalogue (workflow, difficulty,
oracle score, reads-only ceiling, best negative control) and `rows_markdown` the reward
rows of the request families. tests/server/servicebench/test_negative_controls.py checks
that docs/servicebench.md shows exactly these tables; `python scripts/servicebench_families.py`
prints them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...models import ServiceBenchObservation
from .catalogue import FAMILIES, FAMILY_DATA, FamilyInfo
from .controls import CONTROLS, run_control
from .environment import ServiceBenchEnvironment
from .grading.reward_table import FAMILY_BONUSES, FAMILY_PENALTIES, FAMILY_TABLES, reads_ceiling
from .oracle import next_action

TABLE_SEEDS: tuple[int, ...] = (*range(1, 11), *range(100_000, 100_005))
"""Ten training and five held-out seeds of every family (the family named at reset)."""


@dataclass(frozen=True)
class Measured:
    """One family over the seeds: the oracle's worst score and end states, each control's best."""

    info: FamilyInfo
    oracle_min: float
    end_states_matched: int
    episodes: int
    controls: dict[str, float]
    """Control -> its highest score over the seeds."""
    completed_by_reads: int

    @property
    def best_control(self) -> tuple[str, float]:
        return max(self.controls.items(), key=lambda item: (item[1], item[0]))


def oracle_episode(info: FamilyInfo, seed: int) -> ServiceBenchEnvironment:
    env = ServiceBenchEnvironment()
    history: list[ServiceBenchObservation] = [
        env.reset(task_id=info.task_id, seed=seed, family=info.name)
    ]
    while not history[-1].done and (action := next_action(history)) is not None:
        history.append(env.step(action))
    return env


def measure(
    seeds: Sequence[int] = TABLE_SEEDS, families: Iterable[FamilyInfo] = FAMILIES
) -> list[Measured]:
    found = []
    for info in families:
        oracles = [oracle_episode(info, seed) for seed in seeds]
        controls = {name: 0.0 for name in CONTROLS}
        by_reads = 0
        for name in CONTROLS:
            for seed in seeds:
                play = run_control(name, info.task_id, seed, info.name)
                controls[name] = max(controls[name], play.env.score)
                if name == "read_everything":
                    by_reads += play.env.state.task_completed
        found.append(
            Measured(
                info=info,
                oracle_min=min(env.score for env in oracles),
                end_states_matched=sum(env.state.outcome.end_state_matches for env in oracles),
                episodes=len(seeds),
                controls=controls,
                completed_by_reads=by_reads,
            )
        )
    return found


def _reads(info: FamilyInfo) -> str:
    if info.workflow == "lookup":
        return "1.00 (reads are the answer)"
    return f"{reads_ceiling(info.name if info.name in FAMILY_TABLES else info.task_id):.2f}"


def families_markdown(measured: Sequence[Measured]) -> str:
    lines = [
        "| Family | Task | Workflow | Difficulty | Held out | Oracle | Reads-only ceiling | Best negative control |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in measured:
        info = row.info
        name, best = row.best_control
        lines.append(
            f"| `{info.name}` | `{info.task_id}` | {info.workflow} | {info.difficulty} | "
            f"{'yes' if info.held_out else ''} | {row.oracle_min:.2f} "
            f"({row.end_states_matched}/{row.episodes} end states) | {_reads(info)} | "
            f"{best:.2f} ({name}) |"
        )
    return "\n".join(lines)


def rows_markdown() -> str:
    """The request families' reward rows: the shared ones, then each family's own."""
    values = FAMILY_DATA["rows"]
    shared = ", ".join(
        f"`{name}` {values[name]:+.2f}" for name in FAMILY_PENALTIES + FAMILY_BONUSES
    )
    lines = [
        f"Every request family: {shared}.",
        "",
        "| Family | Reads (milestones) | Writes (outcome rows; each taken back if undone) |",
        "|---|---|---|",
    ]
    for row in FAMILY_DATA["families"]:
        if "writes" not in row:
            continue
        reads = ", ".join(f"`{name}` {values[name]:.2f}" for name in row["evidence"])
        writes = ", ".join(f"`{name}` {value:.2f}" for name, value in row["writes"].items())
        lines.append(f"| `{row['name']}` | {reads} | {writes} |")
    return "\n".join(lines)
