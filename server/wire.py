"""JSON encoding of results, shared by the HTTP and WebSocket transports.

Results are encoded straight to bytes with pydantic-core (no intermediate
dicts), in OpenEnv's `{observation, reward, done}` shape.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from pydantic import BaseModel

from models import EpisodeObservation

OBSERVATION_EXCLUDE = frozenset({"reward", "done", "metadata"})


def result_json(observation: EpisodeObservation, episode_id: Optional[str] = None) -> bytes:
    """`{"observation": ..., "reward": ..., "done": ...[, "episode_id": ...]}` as bytes."""
    body = observation.model_dump_json(exclude=OBSERVATION_EXCLUDE).encode()
    tail = b"" if episode_id is None else b',"episode_id":' + json.dumps(episode_id).encode()
    return b"".join(
        (
            b'{"observation":',
            body,
            b',"reward":',
            json.dumps(observation.reward).encode(),
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
