"""Upgrading a thread in the queue's database: refused while a run waits or runs, and
before the thread's first run (decision 95). The queue database has no workers, so a
run created here stays pending."""

from __future__ import annotations

import pytest

from plait.engine.run import UpgradeRefused
from plait.engine.store.pool import Pool
from plait.server.graphs.versions import GraphVersion, save_version
from plait.server.queue.runs import create_run
from plait.server.queue.threads import create_thread, get_thread
from plait.server.queue.upgrades import upgrade_thread
from plait.server.workers.execution import GraphCache
from tests.integration.server.queue.conftest import spec_text, unique

pytestmark = pytest.mark.postgres

MIGRATION = '  migrations:\n    - from: "1.0.0"\n      state: {reply: "state.reply + \'!\'"}\n'


async def _newer(pool: Pool, graph: GraphVersion) -> GraphVersion:
    return await save_version(pool, spec_text(graph.name, "1.1.0", extra=MIGRATION), file="<t>")


async def test_a_thread_with_a_waiting_run_is_not_upgraded(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    await _newer(qpool, qgraph)
    thread = await create_thread(qpool, thread_id=unique("t"))
    run, _created = await create_run(
        qpool, thread_id=thread["thread_id"], graph=qgraph, kwargs={"input": {}}, metadata={}
    )
    with pytest.raises(UpgradeRefused, match=rf"busy with run {run.run_id}.*parked") as refused:
        await upgrade_thread(
            qpool, GraphCache(qpool), thread["thread_id"], "1.1.0", tenant="default", actor="t"
        )
    assert refused.value.kind == "thread-busy"
    after = await get_thread(qpool, thread["thread_id"])
    assert after is not None and after["version"] == "1.0.0"


async def test_a_thread_that_never_ran_has_no_version_to_leave(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    await _newer(qpool, qgraph)
    thread = await create_thread(qpool, thread_id=unique("t"))
    with pytest.raises(UpgradeRefused, match="has not run yet") as refused:
        await upgrade_thread(
            qpool, GraphCache(qpool), thread["thread_id"], "1.1.0", tenant="default", actor="t"
        )
    assert refused.value.kind == "not-started"
