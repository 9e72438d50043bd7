"""The wire types: read-only JSON and the catalogue field that shares it."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from pydantic import ValidationError

from servicebench_support_queue.models import ReadOnlyDict, ReadOnlyList, ServiceBenchObservation, read_only

PLAIN = {"rows": [{"name": "a", "tags": ["x", "y"], "n": 1}, {"name": "b", "tags": [], "n": 2.5}]}


def test_read_only_is_a_deep_equal_copy():
    frozen = read_only(PLAIN)
    assert frozen == PLAIN
    assert type(frozen) is ReadOnlyDict and type(frozen["rows"]) is ReadOnlyList
    assert type(frozen["rows"][0]["tags"]) is ReadOnlyList
    assert json.loads(json.dumps(frozen)) == PLAIN


@pytest.mark.parametrize("change", [
    lambda d: d.__setitem__("k", 1), lambda d: d.__delitem__("rows"), lambda d: d.update(k=1),
    lambda d: d.pop("rows"), lambda d: d.popitem(), lambda d: d.clear(),
    lambda d: d.setdefault("k", 1), lambda d: d.__ior__({"k": 1}),
])
def test_a_read_only_dict_refuses_every_change(change):
    frozen = read_only(PLAIN)
    with pytest.raises(TypeError, match="read-only"):
        change(frozen)
    assert frozen == PLAIN


@pytest.mark.parametrize("change", [
    lambda l: l.__setitem__(0, 1), lambda l: l.__delitem__(0), lambda l: l.append(1),
    lambda l: l.extend([1]), lambda l: l.insert(0, 1), lambda l: l.pop(), lambda l: l.remove(l[0]),
    lambda l: l.clear(), lambda l: l.sort(key=str), lambda l: l.reverse(),
    lambda l: l.__iadd__([1]), lambda l: l.__imul__(2),
])
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


def test_the_catalogue_field_keeps_a_shared_read_only_list_and_validates_anything_else():
    shared = read_only([{"service": "user", "params": {}}])
    observation = ServiceBenchObservation(available_endpoints=shared)
    assert observation.available_endpoints is shared
    assert json.loads(observation.model_dump_json())["available_endpoints"] == [{"service": "user", "params": {}}]
    plain = [{"service": "user"}]
    assert ServiceBenchObservation(available_endpoints=plain).available_endpoints == plain
    with pytest.raises(ValidationError, match="available_endpoints"):
        ServiceBenchObservation(available_endpoints="not a list")
    with pytest.raises(ValidationError, match="available_endpoints"):
        ServiceBenchObservation(available_endpoints=[1, 2])
