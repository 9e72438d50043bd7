"""read_only_json.py: shared data that refuses changes, and `thaw`, the way back to plain data."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from servicebench_support_queue.read_only_json import ReadOnlyDict, ReadOnlyList, read_only, thaw

PLAIN = {"rows": [{"name": "a", "tags": ["x", "y"], "n": 1}, {"name": "b", "tags": [], "n": 2.5}]}


def test_read_only_is_a_deep_equal_copy():
    frozen = read_only(PLAIN)
    assert frozen == PLAIN
    assert type(frozen) is ReadOnlyDict and type(frozen["rows"]) is ReadOnlyList
    assert type(frozen["rows"][0]["tags"]) is ReadOnlyList
    assert json.loads(json.dumps(frozen)) == PLAIN


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("k", 1),
        lambda d: d.__delitem__("rows"),
        lambda d: d.update(k=1),
        lambda d: d.pop("rows"),
        lambda d: d.popitem(),
        lambda d: d.clear(),
        lambda d: d.setdefault("k", 1),
        lambda d: d.__ior__({"k": 1}),
    ],
)
def test_a_read_only_dict_refuses_every_change(change):
    frozen = read_only(PLAIN)
    with pytest.raises(TypeError, match="read-only"):
        change(frozen)
    assert frozen == PLAIN


@pytest.mark.parametrize(
    "change",
    [
        lambda rows: rows.__setitem__(0, 1),
        lambda rows: rows.__delitem__(0),
        lambda rows: rows.append(1),
        lambda rows: rows.extend([1]),
        lambda rows: rows.insert(0, 1),
        lambda rows: rows.pop(),
        lambda rows: rows.remove(rows[0]),
        lambda rows: rows.clear(),
        lambda rows: rows.sort(key=str),
        lambda rows: rows.reverse(),
        lambda rows: rows.__iadd__([1]),
        lambda rows: rows.__imul__(2),
    ],
)
def test_a_read_only_list_refuses_every_change(change):
    rows = read_only(PLAIN)["rows"]
    with pytest.raises(TypeError, match="read-only"):
        change(rows)
    assert rows == PLAIN["rows"]


def test_copies_and_pickles_of_read_only_data():
    frozen = read_only(PLAIN)
    assert copy.copy(frozen) is frozen and copy.deepcopy(frozen) is frozen
    restored = pickle.loads(pickle.dumps(frozen))
    assert restored == PLAIN and type(restored["rows"]) is ReadOnlyList


def test_thaw_is_a_plain_deep_copy_that_can_change_without_touching_the_original():
    frozen = read_only(PLAIN)
    plain = thaw(frozen)
    assert plain == PLAIN and type(plain) is dict and type(plain["rows"]) is list
    assert type(plain["rows"][0]) is dict and type(plain["rows"][0]["tags"]) is list
    plain["rows"][0]["tags"].append("z")
    assert frozen == PLAIN
    assert thaw(({"a": (1, 2)},)) == [{"a": [1, 2]}] and thaw("text") == "text"


def test_read_only_data_equals_its_plain_copy_whatever_the_nesting():
    """The end-state check compares the shared world with an episode's plain copy directly."""
    frozen = read_only({"refunds": [], "items": [{"sku": "SKU-1", "quantity": 2}]})
    assert (
        frozen == thaw(frozen)
        and frozen["refunds"] == []
        and frozen["items"] == [{"sku": "SKU-1", "quantity": 2}]
    )
    assert read_only((1, (2, 3))) == [1, [2, 3]]
