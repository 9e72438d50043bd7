"""What a served payload must not contain before its episode is done: the graded answers.

`Secrets` holds what a grader compares against, worked out from the server-side variant
(the test may read it; the agent never may): ServiceBench's refund amounts, Support
Queue's gold rationale, gold texts, unsafe notes and fact phrasings. `leaks(payload,
secrets)` walks a served JSON payload (an observation, a state, a tool result, a
listing) and names every place one of them shows, in any spelling:

* an amount as a JSON number (49.99, 4999 cents, 49.990, 99 whole dollars) or inside any
  string ("49.99", "$49.99", "$99", "49.990", "4.999e1", "4999" cents; a bare "99" in a
  text is read as cents, as text has many small numbers); ids such as ORD-4999 are not
  amounts;
* a secret text inside any string, case-insensitively and on word boundaries, unless the
  agent was legitimately shown it (`public`: the ticket, the instructions, the enumerations);
* a key that names an answer (`gold`, `expected`, `rationale`, ...), and an `outcome`
  that is not null.

Some parts of a payload are the agent's own or the world's, and are not searched:
a successful call's `api_response.data` (what the services answered: they know the
world, never the task's answer; the variant proof checks that the derived amounts are
stated in no response), the agent's own action in the state (`call_history[].params`,
`action_history`, and the excerpts of its reply that an unsafe hit quotes), and
counters and scores whose numbers say nothing about an amount.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

Path = tuple[Any, ...]

ANSWER_KEY_PARTS = ("gold", "expected", "rationale", "answer", "solution", "truth", "hidden")
COUNTER_KEYS = frozenset(
    {
        "reward",
        "cumulative_reward",
        "average_reward",
        "penalty_balance",
        "score",
        "step",
        "step_count",
        "max_steps",
        "seed",
        "alias",
        "status_code",
        "status",
        "current_index",
        "total_tickets",
        "tickets_graded",
        "word_count",
        "word_cap",
        "coverage",
        "weight",
        "earned",
        "raw_total",
        "penalty",
        "echo_share",
        "confidence",
        "sla_hours",
        "minimum",
        "maximum",
    }
)
"""Keys whose numbers are counters, scores or bounds, never an amount the agent must find."""
RANDOM_KEYS = frozenset({"episode_id", "session_id"})
"""Random tokens: digits in them are noise."""
AMOUNT = re.compile(r"(?<![\w.\-])\$?(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w]|\.\d)")


def _own_or_world(path: Path) -> bool:
    """Whether this part of a payload is the world's answer or the agent's own action."""
    for i, key in enumerate(path):
        following = path[i + 1] if i + 1 < len(path) else None
        if key == "api_response" and following == "data":
            return True
        if key == "call_history" and len(path) > i + 2 and path[i + 2] == "params":
            return True
        if key in ("action_history", "excerpt"):
            return True
    return False


def leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every leaf of a JSON value with its path, parts that are the agent's or the world's left out."""
    if _own_or_world(path):
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def keys(value: Any, path: Path = ()) -> Iterator[tuple[Path, str, Any]]:
    """Every key of every object in a JSON value, with the object's path and the key's value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path, key, item
            yield from keys(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from keys(item, (*path, index))


def amounts_in_text(text: str) -> Iterator[tuple[str, Decimal]]:
    """Every number written in a text, as dollars ("49.99", "$49.99", "49.990", "4.999e1")."""
    for match in AMOUNT.finditer(text):
        try:
            yield match.group(0), Decimal(match.group(1))
        except InvalidOperation:
            continue


def _is_amount(number: Decimal, cents: int, whole: bool) -> bool:
    """`number` spells `cents` in dollars, or (a whole number) in cents."""
    return number * 100 == cents or (whole and number == cents)


def _mentions(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


@dataclass
class Secrets:
    """What the grader compares against, which nothing served may show before the end."""

    cents: set[int] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)
    """Secret texts, case-folded."""

    def unless_public(self, public: Iterable[str]) -> Secrets:
        """These secrets less the texts the agent was legitimately shown."""
        shown = "\n".join(public).casefold()
        return Secrets(
            set(self.cents),
            {text for text in self.texts if text not in shown or not _mentions(shown, text)},
        )

    def unless_known(self, cents: Iterable[int]) -> Secrets:
        """These secrets less the amounts the agent already had (from the world's answers,
        or its own actions)."""
        return Secrets(self.cents - set(cents), self.texts)

    def found_in(self, text: str) -> str | None:
        """A secret text that `text` mentions (on word boundaries, any case), or None."""
        folded = text.casefold()
        return next((t for t in self.texts if t in folded and _mentions(folded, t)), None)


def amounts_in(value: Any) -> set[int]:
    """Every amount, in cents, that a JSON value (a world's answer, an action's parameters)
    states as a number or in a text: what the agent has, so no longer secret."""
    found: set[int] = set()
    for _, leaf in leaves(value):
        if isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
            number = Decimal(repr(leaf)) if isinstance(leaf, float) else Decimal(leaf)
            found |= {int(number * 100)} if number * 100 == int(number * 100) else set()
            found |= {int(number)} if isinstance(leaf, int) else set()
        elif isinstance(leaf, str):
            found |= {int(n * 100) for _, n in amounts_in_text(leaf) if n * 100 == int(n * 100)}
    return found


def leaks(payload: Any, secrets: Secrets, answer_keys: bool = True) -> list[str]:
    """Where `payload` (a JSON value) shows an answer: empty if nowhere.

    `answer_keys=False` for a schema, which names every field a payload may carry."""
    found: list[str] = []
    for path, key, value in keys(payload) if answer_keys else ():
        if any(part in key.casefold() for part in ANSWER_KEY_PARTS):
            found.append(f"answer key {key!r} at {path}")
        if key == "outcome" and value is not None:
            found.append(f"an outcome at {path}")
    for path, value in leaves(payload):
        key = next((part for part in reversed(path) if isinstance(part, str)), "")
        if key in RANDOM_KEYS:
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if key in COUNTER_KEYS:
                continue
            number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
            for cents in secrets.cents:
                if _is_amount(number, cents, isinstance(value, int)):
                    found.append(f"amount {cents} cents as {value!r} at {path}")
        elif isinstance(value, str):
            for written, number in amounts_in_text(value):
                bare = not set(written) & set(".$eE")  # "4999": cents, not dollars
                for cents in secrets.cents:
                    if number == cents if bare else _is_amount(number, cents, False):
                        found.append(f"amount {cents} cents as {written!r} in {value!r} at {path}")
            secret = secrets.found_in(value)
            if secret is not None:
                found.append(f"{secret!r} in {value!r} at {path}")
    return found


def text_leaks(text: str, secrets: Secrets) -> list[str]:
    """`leaks` for a text that is not JSON (an MCP prompt's message)."""
    return leaks({"text": text}, secrets)
