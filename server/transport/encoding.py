"""JSON encoding of results, shared by the HTTP and WebSocket transports.

Results are encoded straight to bytes with pydantic-core (no intermediate
dicts), in OpenEnv's `{observation, reward, done}` shape.

A few observation fields are large and identical in nearly every observation
(ServiceBench's endpoint catalogue is most of each response). Encoding them
again for every step was the largest single cost of a response, so their JSON
is kept beside the value it encodes and reused while the value is equal: one
equality check instead of an encoding. A different value is simply encoded.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from pydantic import BaseModel, TypeAdapter

from ...models import EpisodeObservation

OBSERVATION_EXCLUDE = frozenset({"reward", "done", "metadata"})
REPEATED_FIELDS: tuple[str, ...] = ("available_endpoints",)
"""Large observation fields that are usually the same from one observation to the next."""


class _RepeatedFieldJson:
    """The JSON of one field's last value, reused while the value stays equal.

    Equal means Python equality, so a value that differs only as 1 / 1.0 / True at
    some leaf would reuse the other's JSON; catalogues are typed consistently.
    """

    def __init__(self, adapter: TypeAdapter[Any]) -> None:
        self._adapter = adapter
        self._value: Any = None
        self._json = b""

    def encode(self, value: Any) -> bytes:
        if self._json and (value is self._value or value == self._value):
            return self._json
        self._json = self._adapter.dump_json(value)
        self._value = copy.deepcopy(value)  # our own copy: the caller may mutate theirs later
        return self._json


class _ObservationEncoder:
    """How one observation class is encoded: the rest by pydantic-core, repeated fields from cache."""

    def __init__(self, cls: type[EpisodeObservation]) -> None:
        fields = [name for name in REPEATED_FIELDS if name in cls.model_fields]
        self._exclude = OBSERVATION_EXCLUDE | set(fields)
        self._serializer = cls.__pydantic_serializer__
        self._repeated = [
            (
                name,
                b'"' + name.encode() + b'":',
                _RepeatedFieldJson(TypeAdapter(cls.model_fields[name].annotation)),
            )
            for name in fields
        ]

    def encode(self, observation: EpisodeObservation) -> bytes:
        body: bytes = self._serializer.to_json(observation, exclude=self._exclude)
        if not self._repeated:
            return body
        parts = [body[:-1]]  # reopen the object: its last byte is "}"
        separator = b"," if len(body) > 2 else b""
        for name, key, cache in self._repeated:
            parts += (separator, key, cache.encode(getattr(observation, name)))
            separator = b","
        parts.append(b"}")
        return b"".join(parts)


_ENCODERS: dict[type, _ObservationEncoder] = {}


def observation_json(observation: EpisodeObservation) -> bytes:
    """The observation without OpenEnv's top-level fields (reward, done, metadata)."""
    cls = type(observation)
    encoder = _ENCODERS.get(cls)
    if encoder is None:
        encoder = _ENCODERS[cls] = _ObservationEncoder(cls)
    return encoder.encode(observation)


def _number_json(value: Any) -> bytes:
    """A reward as JSON; a finite float's repr is already its JSON (and much cheaper to get)."""
    if type(value) is float and math.isfinite(value):
        return repr(value).encode()
    return json.dumps(value).encode()


def result_json(observation: EpisodeObservation, episode_id: str | None = None) -> bytes:
    """`{"observation": ..., "reward": ..., "done": ...[, "episode_id": ...]}` as bytes."""
    tail = b"" if episode_id is None else b',"episode_id":' + json.dumps(episode_id).encode()
    return b"".join(
        (
            b'{"observation":',
            observation_json(observation),
            b',"reward":',
            _number_json(observation.reward),
            b',"done":',
            b"true" if observation.done else b"false",
            tail,
            b"}",
        )
    )


def model_json(model: BaseModel) -> bytes:
    return model.model_dump_json().encode()


def typed_message(kind: str, data: bytes) -> bytes:
    """A WebSocket message of OpenEnv's protocol: `{"type": kind, "data": data}`."""
    return b'{"type":"' + kind.encode() + b'","data":' + data + b"}"


def error_payload(message: str, **extra: Any) -> dict[str, Any]:
    return {"detail": message, **extra}
