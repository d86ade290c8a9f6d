"""API threads (plait.server.queue.threads) and the CLI's view of them, on real Postgres."""

from __future__ import annotations

import pytest

from plait.engine.compiler import compile_spec
from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.pool import Pool
from plait.server.graphs.versions import GraphVersion
from plait.server.queue.direct_runs import claim_thread
from plait.server.queue.direct_runs import get_thread as cli_get_thread
from plait.server.queue.runs import create_run, get_run
from plait.server.queue.threads import (
    ThreadExists,
    ThreadNotFound,
    create_thread,
    delete_thread,
    get_thread,
    search_threads,
    set_thread_status,
    update_thread,
)
from tests.integration.server.queue.conftest import unique

pytestmark = pytest.mark.postgres


async def test_create_and_get(qpool: Pool) -> None:
    created = await create_thread(qpool, metadata={"user": "ann"})

    assert created["status"] == "idle"
    assert created["metadata"] == {"user": "ann"}
    assert created["graph"] is None
    assert await get_thread(qpool, created["thread_id"]) == created
    assert await get_thread(qpool, unique("t")) is None


async def test_if_exists(qpool: Pool) -> None:
    thread_id = unique("t")
    first = await create_thread(qpool, thread_id=thread_id, metadata={"n": 1})

    with pytest.raises(ThreadExists):
        await create_thread(qpool, thread_id=thread_id)
    same = await create_thread(
        qpool, thread_id=thread_id, metadata={"n": 2}, if_exists="do_nothing"
    )

    assert same == first
    with pytest.raises(ValueError, match="if_exists"):
        await create_thread(qpool, thread_id=thread_id, if_exists="replace")


async def test_search_update_and_status(qpool: Pool) -> None:
    tag = unique("tag")
    one = await create_thread(qpool, metadata={"tag": tag, "n": 1})
    two = await create_thread(qpool, metadata={"tag": tag, "n": 2})
    await create_thread(qpool, metadata={"tag": "other"})

    found = await search_threads(
        qpool, metadata={"tag": tag}, sort_by="created_at", sort_order="asc"
    )
    assert [t["thread_id"] for t in found] == [one["thread_id"], two["thread_id"]]
    await set_thread_status(qpool, two["thread_id"], "error")
    errors = await search_threads(qpool, metadata={"tag": tag}, status="error")
    assert [t["thread_id"] for t in errors] == [two["thread_id"]]
    by_id = await search_threads(qpool, ids=[one["thread_id"]])
    assert [t["thread_id"] for t in by_id] == [one["thread_id"]]
    assert len(await search_threads(qpool, metadata={"tag": tag}, limit=1, offset=1)) == 1

    updated = await update_thread(qpool, one["thread_id"], metadata={"n": 5, "x": True})

    assert updated["metadata"] == {"tag": tag, "n": 5, "x": True}
    assert updated["updated_at"] > one["updated_at"]
    with pytest.raises(ThreadNotFound):
        await update_thread(qpool, unique("t"), metadata={})
    with pytest.raises(ThreadNotFound):
        await set_thread_status(qpool, unique("t"), "idle")
    with pytest.raises(ValueError, match="status"):
        await set_thread_status(qpool, one["thread_id"], "sleepy")
    with pytest.raises(ValueError, match="sort"):
        await search_threads(qpool, sort_by="metadata; DROP TABLE x")


async def test_delete_removes_runs_and_checkpoints(qpool: Pool, qgraph: GraphVersion) -> None:
    thread = await create_thread(qpool)
    thread_id = thread["thread_id"]
    run, _ = await create_run(qpool, thread_id=thread_id, graph=qgraph, kwargs={}, metadata={})
    compiled = compile_spec(qgraph.loaded).bind(new_checkpointer(qpool))
    await compiled.ainvoke({"text": "hi"}, {"configurable": {"thread_id": thread_id}})
    saver = new_checkpointer(qpool)
    assert await saver.aget_tuple({"configurable": {"thread_id": thread_id}}) is not None

    await delete_thread(qpool, thread_id)

    assert await get_thread(qpool, thread_id) is None
    assert await get_run(qpool, run.run_id) is None
    assert await saver.aget_tuple({"configurable": {"thread_id": thread_id}}) is None
    with pytest.raises(ThreadNotFound):
        await delete_thread(qpool, thread_id)


async def test_the_cli_records_its_graph_on_an_api_thread(qpool: Pool) -> None:
    thread = await create_thread(qpool)
    thread_id = thread["thread_id"]
    assert await cli_get_thread(qpool, thread_id) is None

    record = await claim_thread(qpool, thread_id, graph="team", version="1.0.0", digest="d1")

    assert (record.graph, record.digest) == ("team", "d1")
    api = await get_thread(qpool, thread_id)
    assert api is not None and (api["graph"], api["metadata"]) == ("team", {})
