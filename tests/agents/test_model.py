"""agents/model.py: which failures prove an endpoint unreachable, and how an endpoint is named."""

from __future__ import annotations

import httpx
import openai
import pytest

from servicebench_support_queue.agents.model import (
    ModelHealth,
    classify_error,
    endpoint_label,
    proves_unreachable,
)

REQUEST = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    429: openai.RateLimitError,
    503: openai.InternalServerError,
}


def status_error(code: int) -> openai.APIStatusError:
    """The error the openai client raises for this status."""
    response = httpx.Response(code, request=REQUEST, json={"error": {"message": "x"}})
    return STATUS_ERRORS[code]("x", response=response, body=None)


@pytest.mark.parametrize(
    "error, proves, kind",
    [
        (openai.APIConnectionError(request=REQUEST), True, "APIConnectionError"),
        (openai.APITimeoutError(request=REQUEST), False, "APITimeoutError"),
        (status_error(401), True, "AuthenticationError (HTTP 401)"),
        (status_error(403), True, "PermissionDeniedError (HTTP 403)"),
        (status_error(404), True, "NotFoundError (HTTP 404)"),
        (status_error(400), False, "BadRequestError (HTTP 400)"),  # e.g. tools refused
        (status_error(429), False, "RateLimitError (HTTP 429)"),
        (status_error(503), False, "InternalServerError (HTTP 503)"),
    ],
)
def test_only_a_missing_endpoint_or_a_refused_key_proves_it_unreachable(
    error: Exception, proves: bool, kind: str
) -> None:
    assert proves_unreachable(error) is proves
    assert classify_error(error) == kind


def test_a_proof_counts_only_before_any_call_succeeded() -> None:
    health = ModelHealth()
    health.record_success()
    health.record_failure(openai.APIConnectionError(request=REQUEST), "APIConnectionError")
    assert health.unreachable is None and health.failure("http://h/v1") is None
    fresh = ModelHealth()
    fresh.record_failure(openai.APIConnectionError(request=REQUEST), "APIConnectionError")
    assert fresh.unreachable == "APIConnectionError"
    assert fresh.failure("http://h/v1") == (
        "the model endpoint http://h/v1 is unreachable (APIConnectionError): no model call succeeded"
    )
    assert ModelHealth().failure("http://h/v1").startswith("no model call to http://h/v1 was made")


@pytest.mark.parametrize(
    "url, label",
    [
        ("https://router.huggingface.co/v1", "https://router.huggingface.co/v1"),
        ("http://user:s3cret@127.0.0.1:8001/v1?api-key=s3cret#x", "http://127.0.0.1:8001/v1"),
        ("http://[::1]:8001/v1", "http://[::1]:8001/v1"),
        ("http://host:notaport/v1", "(an unparsable URL)"),
    ],
)
def test_an_endpoint_is_named_without_what_may_hold_a_key(url: str, label: str) -> None:
    assert endpoint_label(url) == label
