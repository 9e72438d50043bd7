"""`POST /support_queue/word_count`: the grader's own word count of a summary and a reply.

The playground shows "n / cap words" while a player types; a count of its own (a regular
expression in JavaScript) would disagree with the grader wherever canonicalisation matters
(invisible characters, look-alike letters, spaced-out letters joined: text/canonical.py).
So the page asks this route, which answers with the very function and caps the grader uses
(`count_words`, `WORD_CAPS`): read-only, no episode, nothing stored. It is served like the
Task API routes (server/transport/task_api.py): at the root as `/support_queue/word_count`, and under the
`/support_queue` prefix relative to that endpoint. The body is parsed by the server's one
JSON parser (Content-Type JSON required) and each text is bounded like an action's
(`TEXT_FIELD_MAX_CHARS`); anything else is a 4xx naming the problem.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from ...models import TEXT_FIELD_MAX_CHARS
from ..transport.task_api import body_schema, read_body
from .tasks import ENV_NAME
from .text import WORD_CAPS, count_words

ROUTE = f"/{ENV_NAME}/word_count"


class WordCountRequest(BaseModel):
    """The texts to count; either may be left out (it is then not in the answer), none null."""

    model_config = ConfigDict(extra="forbid")

    summary: StrictStr = Field(
        default="", max_length=TEXT_FIELD_MAX_CHARS, description="A triage summary"
    )
    response: StrictStr = Field(
        default="", max_length=TEXT_FIELD_MAX_CHARS, description="A first reply"
    )


def word_counts(body: WordCountRequest) -> dict[str, dict[str, int]]:
    """Each given text's word count and cap, exactly as the grader counts and caps it."""
    return {
        name: {"words": count_words(getattr(body, name)), "cap": WORD_CAPS[name]}
        for name in ("summary", "response")
        if name in body.model_fields_set
    }


def install(app: FastAPI) -> None:
    """Add the route to `app` (SupportQueueEnvironment.install_routes: a scope serving Support
    Queue)."""

    @app.post(
        ROUTE,
        tags=["Environment Info"],
        summary="Support Queue: the grader's word count and cap of a summary and a reply",
        openapi_extra=body_schema(WordCountRequest),
    )
    async def word_count(request: Request) -> dict[str, Any]:
        return word_counts(await read_body(request, WordCountRequest))
