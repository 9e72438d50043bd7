"""Hostile input for the robustness battery (tests/server/test_robustness*.py): what an attacker, or a
model emitting garbage, sends, and the checks every answer must pass.

A case is raw bytes plus a Content-Type, so that it can be what no JSON encoder would
write: escaped lone surrogates, CESU-8 bytes, NaN, duplicate keys, truncation.
Hostile *values* are embedded at every place of an otherwise valid action (a parameter
value or key, a text field, the metadata, the envelope), where a server that only
checked the top level would accept them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from servicebench_support_queue.server.strict_json import MAX_DEPTH

PROPERTY = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
"""How the robustness properties run: reproducibly (derandomized, no example database)."""

MAX_BODY_BYTES = 64 * 1024  # the default Settings().max_body_bytes
JSON_TYPE = "application/json"

LOOKUP = {
    "service": "user",
    "endpoint": "/users/lookup",
    "method": "GET",
    "params": {"email": "jane.doe@example.com"},
}
TRIAGE = {
    "priority": "P2",
    "queue": "billing",
    "disposition": "respond",
    "summary": "Customer reports a problem.",
    "response": "Thanks, we are looking into it.",
    "confidence": 0.5,
}
VALID_ACTION = {"servicebench": LOOKUP, "support_queue": TRIAGE}
SURFACES = (
    ("", "servicebench"),
    ("", "support_queue"),
    ("/servicebench", "servicebench"),
    ("/support_queue", "support_queue"),
)
"""(prefix, env): the root serves both environments, each prefix one."""


CODE_POINTS = st.integers(0, 0x7F) | st.integers(0, 0x10FFFF) | st.integers(0xD800, 0xDFFF)
ANY_TEXT = st.lists(CODE_POINTS, max_size=10).map(lambda points: "".join(map(chr, points)))
"""Text of any code points, lone surrogates often (`st.text` never draws a surrogate)."""


@dataclass(frozen=True)
class Case:
    name: str
    body: bytes
    content_type: str | None = JSON_TYPE
    refused: bool = True
    """Must be refused with a 4xx; else it is valid input and must be accepted."""


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


REFUSED_VALUES: dict[str, bytes] = {
    "depth 33": nested(MAX_DEPTH + 1).encode(),
    "depth 500": nested(500).encode(),  # parsed by json, then broke /state for good
    "depth 1,000": nested(1000).encode(),  # RecursionError in json
    "depth 20,000": nested(20_000).encode(),
    "objects 600 deep": ('{"a":' * 600 + "1" + "}" * 600).encode(),
    "2^63": b"9223372036854775808",
    "-2^63-1": b"-9223372036854775809",
    "30 digits": b"1" + b"0" * 30,
    "4,301 digits": b"9" * 4301,  # past Python's int/str conversion limit
    "30,000 digits": b"9" * 30_000,
    "1e400": b"1e400",
    "-1e400": b"-1e400",
    "NaN": b"NaN",
    "Infinity": b"Infinity",
    "-Infinity": b"-Infinity",
    "lone high surrogate": b'"\\ud800"',
    "lone low surrogate": b'"\\udfff"',
    "surrogate inside text": b'"abc\\udbffdef"',
    "reversed pair": b'"\\udc00\\ud800"',
    "surrogate as CESU-8 bytes": b'"\xed\xa0\x80"',
    "invalid UTF-8": b'"\xff\xfe"',
    "overlong UTF-8": b'"\xc0\xaf"',
    "raw control character": b'"a\x01b"',
    "surrogate key": b'{"\\ud800": 1}',
    "duplicate keys": b'{"a": 1, "a": 2}',
    "nested duplicate keys": b'[{"x": {"k": 1, "k": 1}}]',
}
"""JSON values (text) that no accepted action may hold."""

ODD_UNICODE: dict[str, str] = {
    "NUL": "\x00",
    "BOM inside": "a\ufeffb",
    "RTL marks": "\u200f\u202eevil\u202c",
    "non-BMP": "\U0001f600\U00010348",
    "combining": "e\u0301\u0308",
    "noncharacter": "\uffff\ufffe",
    "zero-width": "\u200b\u200d",
    "line separator": "\u2028\u2029",
    "private use": "\ue000",
}
"""Valid Unicode, odd as it is: accepted where text is, and /state must stay readable."""


def splice(template: dict[str, Any], path: tuple[str, ...], raw_value: bytes) -> bytes:
    """`template` as JSON with the value at `path` replaced by `raw_value`, verbatim."""
    marker = "\x00SPLICE\x00"
    data = json.loads(json.dumps(template))
    holder = data
    for key in path[:-1]:
        holder = holder.setdefault(key, {})
    holder[path[-1]] = marker
    text = json.dumps(data).encode()
    return text.replace(json.dumps(marker).encode(), raw_value)


def value_slots(env: str) -> list[tuple[str, dict[str, Any], tuple[str, ...]]]:
    """Where a hostile value goes in a step body: (slot name, template, path)."""
    action = VALID_ACTION[env]
    slots = [
        ("metadata", action, ("metadata", "m")),
        ("envelope timeout_s", {"action": action}, ("timeout_s",)),
        ("envelope request_id", {"action": action}, ("request_id",)),
    ]
    if env == "servicebench":
        update = {
            "service": "user",
            "endpoint": "/users/update",
            "method": "POST",
            "params": {"user_id": "USR-003", "updates": {"notes": "x"}},
        }
        slots += [
            ("params.email", action, ("params", "email")),
            ("params", action, ("params",)),
            ("updates.notes", update, ("params", "updates", "notes")),
            (
                "adjustment",
                {
                    "service": "inventory",
                    "endpoint": "/inventory/update-stock",
                    "method": "POST",
                    "params": {"sku": "SKU-445", "adjustment": 1},
                },
                ("params", "adjustment"),
            ),
            ("endpoint", action, ("endpoint",)),
        ]
    else:
        slots += [
            ("summary", action, ("summary",)),
            ("response", action, ("response",)),
            ("confidence", action, ("confidence",)),
        ]
    return slots


def step_cases(env: str) -> list[Case]:
    """Every hostile step body for `env`'s episodes, and a few odd but acceptable ones."""
    action = VALID_ACTION[env]
    valid = json.dumps({"action": action}).encode()
    cases = [
        Case(f"{value} in {slot}", splice(template, path, raw))
        for slot, template, path in value_slots(env)
        for value, raw in REFUSED_VALUES.items()
    ]
    text_slot = ("params", "email") if env == "servicebench" else ("summary",)
    cases += [
        Case(
            f"odd Unicode {name} (escaped)",
            splice(action, text_slot, json.dumps(text).encode()),
            refused=False,
        )
        for name, text in ODD_UNICODE.items()
    ]
    cases += [
        Case(
            f"odd Unicode {name} (UTF-8)",
            splice(action, text_slot, json.dumps(text, ensure_ascii=False).encode()),
            refused=False,
        )
        for name, text in ODD_UNICODE.items()
    ]
    cases.append(Case("no Content-Type (a web page's Blob: refused)", valid, None))
    cases += whole_body_cases(valid)
    cases += [
        Case(
            "duplicate action keys",
            b'{"action": {"%s": 0, ' % next(iter(action)).encode()
            + json.dumps(action).encode()[1:]
            + b"}",
        ),
        Case("array as action", json.dumps({"action": [action]}).encode()),
        Case("string as action", json.dumps({"action": "lookup"}).encode()),
        Case("null action", b'{"action": null}'),
        Case("array as params", splice(action, ("params",), b"[1, 2]"))
        if env == "servicebench"
        else Case("array as summary", splice(action, ("summary",), b'["a"]')),
        Case(
            "duplicate episode_id",
            b'{"action": '
            + json.dumps(action).encode()
            + b', "episode_id": "a", "episode_id": "b"}',
        ),
        Case("episode_id a list", json.dumps({"action": action, "episode_id": ["x"]}).encode()),
        Case("timeout_s a string", json.dumps({"action": action, "timeout_s": "soon"}).encode()),
        Case("timeout_s negative", json.dumps({"action": action, "timeout_s": -1}).encode()),
        Case(
            "request_id an object", json.dumps({"action": action, "request_id": {"id": 1}}).encode()
        ),
        Case("an unknown envelope field", json.dumps({"action": action, "junk": 1}).encode()),
        Case(
            "a valid envelope",
            json.dumps({"action": action, "timeout_s": 5, "request_id": "r"}).encode(),
            refused=False,
        ),
        Case("empty body", b""),
    ]
    return cases


def refused_as_bare_action(case: Case) -> bool:
    """Whether `case`'s body must be refused where a bare action is expected (a WebSocket step's
    data): there an HTTP step envelope is no action."""
    return case.refused or case.body.startswith(b'{"action"')


def whole_body_cases(valid: bytes, null_is_no_body: bool = False) -> list[Case]:
    """Hostile shapes of a whole body around a `valid` one: framing, encoding, media type, size.

    A `null` body means "no body" where a body is optional (a reset), else it is refused.
    """
    cases = [Case(f"body {name}", raw) for name, raw in REFUSED_VALUES.items()]
    cases += [
        Case("array body", b"[" + valid + b"]"),
        Case("string body", b'"step"'),
        Case("number body", b"7"),
        Case("null body", b"null", refused=not null_is_no_body),
        Case("true body", b"true"),
        Case("BOM before the body", b"\xef\xbb\xbf" + valid),
        Case("UTF-16 body", valid.decode().encode("utf-16")),
        Case("UTF-32 body", valid.decode().encode("utf-32")),
        Case("trailing garbage", valid + b"}"),
        Case("two bodies", valid + valid),
        Case("single quotes", valid.replace(b'"', b"'")),
        Case("oversized body", b'{"action": {"pad": "' + b"x" * MAX_BODY_BYTES + b'"}}'),
    ]
    cases += [
        Case(f"truncated at {cut}", valid[:cut])
        for cut in range(1, len(valid), max(1, len(valid) // 12))
    ]
    cases += [
        Case(f"Content-Type {kind}", valid, kind)
        for kind in (
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/xml",
            "application/json; charset=utf-16",
            "text/json",
            "",
        )
    ]
    return cases


def reset_cases() -> list[Case]:
    """Hostile reset bodies: each field, and the whole body."""
    slots = {
        "task_id": {"task_id": "x"},
        "seed": {"seed": 1},
        "episode_id": {"episode_id": "x"},
        "env": {"env": "x"},
    }
    cases = [
        Case(f"{value} in {slot}", splice(template, (slot,), raw))
        for slot, template in slots.items()
        for value, raw in REFUSED_VALUES.items()
    ]
    return cases + whole_body_cases(b'{"task_id": 1}', null_is_no_body=True)


def strict_json(raw: bytes) -> Any:
    """Parse as a strict client would: UTF-8, no NaN, and encodable back to UTF-8 JSON."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} in a response")

    value = json.loads(raw.decode("utf-8"), parse_constant=refuse)
    json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return value
