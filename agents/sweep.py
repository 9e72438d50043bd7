"""Playing a run's episodes: every selected task on every seed (or the tasks of a split),
`repeats` times.

The plan is fixed up front (seed, then repeat, then task, so each round is one
pass over the tasks) and its order is the order of everything the run writes:
stdout blocks, trajectory lines, results. With `--concurrency N` up to N
episodes play at once, each on its own HTTP client with its [START]/[STEP]/
[END] lines buffered; a finished episode is printed once every episode planned
before it has been, so stdout never interleaves and never depends on timing.
One at a time, lines go straight to stdout as they happen.

`play` may decline an episode (return None) once the run has decided to stop: a
declined episode prints nothing and leaves no record.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from ..client import EnvHttpClient
from ..models import TaskCard
from .output import StructuredLog
from .split_plan import card_of

Record = dict[str, Any]


@dataclass(frozen=True)
class PlannedEpisode:
    index: int
    card: TaskCard
    seed: int | None
    repeat: int
    split_task: Mapping[str, Any] | None = None
    """The Task API spec the episode plays (a `--split` run), reset by its split and index."""


def plan_episodes(
    cards: Sequence[TaskCard], seeds: Sequence[int | None], repeats: int
) -> list[PlannedEpisode]:
    """Every (seed, repeat, task) of the run, in the order its output is written."""
    combos = [(seed, repeat, card) for seed in seeds for repeat in range(repeats) for card in cards]
    return [
        PlannedEpisode(index, card, seed, repeat)
        for index, (seed, repeat, card) in enumerate(combos)
    ]


def plan_split_episodes(
    tasks: Mapping[str, Sequence[Mapping[str, Any]]], repeats: int
) -> list[PlannedEpisode]:
    """Every (split task, repeat) of a `--split` run: the k-th task of each environment, then
    the next, so each round (one task of each environment, one repeat) is a pass."""
    combos = [
        (specs[k], repeat)
        for k in range(max(map(len, tasks.values()), default=0))
        for repeat in range(repeats)
        for specs in tasks.values()
        if k < len(specs)
    ]
    return [
        PlannedEpisode(index, card_of(spec), spec["seed"], repeat, spec)
        for index, (spec, repeat) in enumerate(combos)
    ]


class TimeBudget:
    """Shares the run's wall-time budget out among the episodes still to start.

    Each episode gets the time left divided by the number of rounds of
    `concurrency` episodes still to come, so time a fast episode saves goes to
    the later ones, and a dead endpoint costs bounded time.
    """

    def __init__(
        self,
        total_s: float,
        episodes: int,
        concurrency: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.deadline = clock() + total_s
        self.left, self.concurrency = episodes, concurrency
        self._lock = threading.Lock()

    def next_deadline(self) -> float:
        """The deadline of the episode starting now."""
        with self._lock:
            now = self.clock()
            rounds = max(1, math.ceil(self.left / self.concurrency))
            self.left = max(0, self.left - 1)
            return now + max(0.0, self.deadline - now) / rounds


Play = Callable[[PlannedEpisode, StructuredLog, EnvHttpClient], Record | None]


def play_all(
    plan: Sequence[PlannedEpisode],
    play: Play,
    out: StructuredLog,
    clients: Sequence[EnvHttpClient],
    on_record: Callable[[Record], None],
    on_finished: Callable[[Record], None],
) -> None:
    """Play `plan`: `on_finished` as each episode ends, `on_record` in plan order once it is printed."""
    if len(clients) <= 1:
        for item in plan:
            record = play(item, out, clients[0])
            if record is not None:
                on_finished(record)
                on_record(record)
        return
    _play_concurrently(plan, play, out, clients, on_record, on_finished)


def _play_concurrently(
    plan: Sequence[PlannedEpisode],
    play: Play,
    out: StructuredLog,
    clients: Sequence[EnvHttpClient],
    on_record: Callable[[Record], None],
    on_finished: Callable[[Record], None],
) -> None:
    idle: queue.SimpleQueue[EnvHttpClient] = queue.SimpleQueue()
    for client in clients:
        idle.put(client)

    def play_buffered(item: PlannedEpisode) -> tuple[StructuredLog, Record | None]:
        lines, client = out.buffered(), idle.get()
        try:
            return lines, play(item, lines, client)
        finally:
            idle.put(client)

    ready: dict[int, tuple[StructuredLog, Record | None]] = {}
    next_index = 0
    with ThreadPoolExecutor(max_workers=len(clients), thread_name_prefix="episode") as pool:
        pending: dict[Future, int] = {pool.submit(play_buffered, item): item.index for item in plan}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=pending.__getitem__):
                    ready[pending.pop(future)] = result = future.result()
                    if result[1] is not None:
                        on_finished(result[1])
                while next_index in ready:  # plan[i].index == i
                    lines, record = ready.pop(next_index)
                    if record is not None:
                        out.print_block(lines)
                        on_record(record)
                    next_index += 1
        except BaseException:
            for future in pending:
                future.cancel()  # the running episodes end on their own deadlines
            raise
