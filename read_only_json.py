"""Read-only JSON data, the one way this package shares data it must not change.

The seed data, the generated worlds and scenario families, and the endpoint
catalogue every observation carries are built once and shared by every episode.
`read_only` makes a deep read-only copy of plain JSON data: `ReadOnlyDict` and
`ReadOnlyList` are real dicts and lists (equal to plain ones, encoded by
pydantic-core and `json` without help) that refuse every change, so sharing them
is safe. `thaw` is the way back: a fresh plain deep copy, safe to hand out or to
change. This module imports nothing of the package's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is read-only: copy it to change it")


class _Shared:
    """Copying shared, unchanging data gives the same object back; pickling gives a copy."""

    __slots__ = ()

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        plain = dict if isinstance(self, dict) else list
        return type(self), (plain(self),)  # type: ignore[call-overload]


class ReadOnlyDict(_Shared, dict):  # type: ignore[type-arg]
    """A JSON object that refuses changes, so one instance can be shared safely."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse


class ReadOnlyList(_Shared, list):  # type: ignore[type-arg]
    """A JSON array that refuses changes; see `ReadOnlyDict`."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse


def read_only(value: Any) -> Any:
    """A read-only deep copy of plain JSON data (tuples become read-only lists, as JSON has them)."""
    if isinstance(value, dict):
        return ReadOnlyDict({key: read_only(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return ReadOnlyList([read_only(item) for item in value])
    return value


_CONTAINERS = (dict, list, tuple)


def thaw(value: Any) -> Any:
    """A fresh plain deep copy (dicts and lists), safe to hand out or to change.

    Leaves (most values) are copied without a call of their own: every ServiceBench
    step's response is thawed, so this is on the hot path.
    """
    if isinstance(value, dict):
        return {
            key: thaw(item) if isinstance(item, _CONTAINERS) else item
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [thaw(item) if isinstance(item, _CONTAINERS) else item for item in value]
    return value
