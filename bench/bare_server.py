"""The baseline of bench/server.py: the benchmark graph behind FastAPI and SSE, and no more.

What any Python server has to spend per run to stream this graph over HTTP on
the same machine: uvicorn (uvloop, httptools), FastAPI and sse-starlette, as
``plait serve`` uses them, and the graph compiled by Plait, run inside the
request with the Postgres checkpointer. Nothing of what makes a run durable or
shared: no run queue, no journal, no leases, no thread rows, no tenants, no
logs or metrics. A crash loses the run; a client that reconnects loses its
events. It answers the two requests the benchmark client sends, in the shape
``plait serve`` answers them (``metadata``, then ``values`` events, then ``end``).

    cd bench && PLAIT_DATABASE_URL=... python -m uvicorn bare_server:app --no-access-log
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
from fastapi import FastAPI
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from overhead import compiled_spec
from sse_starlette import EventSourceResponse, ServerSentEvent

from plait.engine.compiler import CompiledSpec
from plait.engine.store import database_url, open_pool
from plait.engine.store.pool import Pool


class Served:
    """What the requests share: the pool and the compiled graph (set by the lifespan)."""

    pool: Pool
    graph: CompiledSpec


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    """Open the pool and compile the graph once, as ``plait serve`` does at start."""
    async with await open_pool(database_url()) as pool:
        Served.pool = pool
        Served.graph = compiled_spec()
        yield


app = FastAPI(lifespan=lifespan)


@app.get("/readyz")
async def ready() -> dict[str, str]:
    """Ready once the lifespan has run."""
    return {"status": "ok"}


@app.post("/threads")
async def create_thread() -> dict[str, str]:
    """A new thread id (no row: the checkpointer keys its rows by it)."""
    return {"thread_id": str(uuid.uuid4())}


@app.post("/threads/{thread_id}/runs/stream")
async def stream_run(thread_id: str, body: dict[str, Any]) -> EventSourceResponse:
    """Run the graph now, in this request, and stream its ``values`` as SSE."""
    # Any: LangGraph's astream overloads cannot be matched with a durability read at run time.
    graph: Any = Served.graph.bind(AsyncPostgresSaver(Served.pool))
    config = {"configurable": {"thread_id": thread_id}}

    async def events() -> AsyncIterator[ServerSentEvent]:
        yield ServerSentEvent(_json({"run_id": str(uuid.uuid4())}), event="metadata")
        async for chunk in graph.astream(
            body["input"],
            config,
            stream_mode="values",
            durability=body.get("durability", "sync"),
        ):
            yield ServerSentEvent(_json(chunk), event="values")
        yield ServerSentEvent("null", event="end")

    return EventSourceResponse(events(), sep="\n")


def _json(data: Any) -> str:
    return orjson.dumps(data).decode()
