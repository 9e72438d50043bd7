"""Running the asyncio load generators."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run on uvloop (installed with uvicorn[standard]): less client CPU per request."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)
