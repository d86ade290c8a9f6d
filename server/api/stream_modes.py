"""``stream_mode`` in every form the LangGraph SDKs send it.

In a run-creating body it is one mode or a list (pydantic checks it). On a GET
that rejoins a stream it is a query parameter: repeated
(``?stream_mode=values&stream_mode=updates``, the Python SDK and
``@langchain/langgraph-sdk`` 1.x), one JSON array (``?stream_mode=["updates"]``,
the JS SDK's 2.0 line), or empty (``?stream_mode=``: every mode).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

import orjson
from fastapi import Query

from plait.server.http.problems import Problem

StreamMode = Literal[
    "values",
    "updates",
    "messages",
    "messages-tuple",
    "custom",
    "debug",
    "tasks",
    "checkpoints",
    "events",
]

STREAM_MODES: tuple[str, ...] = get_args(StreamMode)


async def query_stream_modes(
    stream_mode: Annotated[
        list[str] | None,
        Query(
            description=(
                "Stream modes to send (every mode the run streams when absent or empty): "
                "repeat the parameter or send one JSON array; one of " + ", ".join(STREAM_MODES)
            ),
        ),
    ] = None,
) -> list[str]:
    """The modes a rejoin asks for, in order, without repeats (empty: every mode); async,
    so FastAPI calls it inline, not in its thread pool.

    An unknown mode or a broken JSON array is a 422 problem naming it.
    """
    modes: list[str] = []
    for given in stream_mode or ():
        for mode in _split(given):
            if mode not in STREAM_MODES:
                raise _invalid(f"stream_mode {mode!r} is not a stream mode")
            modes.append(mode)
    return list(dict.fromkeys(modes))


def _split(given: str) -> list[str]:
    """One query value as modes: a name, ``""`` (none) or a JSON array of names."""
    text = given.strip()
    if not text.startswith("["):
        return [text] if text else []
    try:
        parsed: Any = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise _invalid(f"stream_mode {given!r} is not a JSON array of stream modes") from None
    if not isinstance(parsed, list) or not all(isinstance(item, str) for item in parsed):
        raise _invalid(f"stream_mode {given!r} is not a JSON array of stream modes")
    return [item for item in parsed if item]


def _invalid(why: str) -> Problem:
    return Problem(
        422,
        f"{why}: send one of {', '.join(STREAM_MODES)}, as repeated stream_mode parameters "
        'or one JSON array (stream_mode=["values","updates"])',
        kind="request-invalid",
        title="Invalid request",
        errors=[{"loc": ["query", "stream_mode"], "msg": why}],
    )
