"""models.py: the wire types; the catalogue field shares one read-only list."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from servicebench_support_queue.models import ServiceBenchObservation
from servicebench_support_queue.read_only_json import read_only


def test_the_catalogue_field_keeps_a_shared_read_only_list_and_validates_anything_else():
    shared = read_only([{"service": "user", "params": {}}])
    observation = ServiceBenchObservation(available_endpoints=shared)
    assert observation.available_endpoints is shared
    assert json.loads(observation.model_dump_json())["available_endpoints"] == [
        {"service": "user", "params": {}}
    ]
    plain = [{"service": "user"}]
    assert ServiceBenchObservation(available_endpoints=plain).available_endpoints == plain
    with pytest.raises(ValidationError, match="available_endpoints"):
        ServiceBenchObservation(available_endpoints="not a list")
    with pytest.raises(ValidationError, match="available_endpoints"):
        ServiceBenchObservation(available_endpoints=[1, 2])
