"""A committer stores the steps that wait together, each on its own terms."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from plait.engine.store import step_commits
from plait.engine.store.pool import Pool
from plait.engine.store.step_commits import StepCommitter, StepRefused
from plait.engine.store.step_writes import BatchGuard, StepWrites

pytestmark = pytest.mark.postgres

#: Lets through the steps whose ticket says ``allowed``.
_ALLOWED = BatchGuard(columns=(("allowed", "bool"),), sql="SELECT key FROM request WHERE allowed")


def _step(thread_id: str, checkpoint_id: str, note: str = "ok") -> StepWrites:
    step = StepWrites()
    step.add_writes([(thread_id, "", checkpoint_id, "task", "", 0, "note", "json", b'"w"')])
    step.checkpoint = (thread_id, "", checkpoint_id, None, Jsonb({"note": note}), Jsonb({}))
    return step


async def _stored(pool: Pool, thread_id: str) -> list[str]:
    """The checkpoint ids stored for ``thread_id``, with a write each (else ``id?``)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT c.checkpoint_id, count(w.*) AS writes FROM checkpoints c "
            "LEFT JOIN checkpoint_writes w USING (thread_id, checkpoint_ns, checkpoint_id) "
            "WHERE c.thread_id = %s GROUP BY c.checkpoint_id ORDER BY c.checkpoint_id",
            (thread_id,),
        )
        return [
            row["checkpoint_id"] if row["writes"] == 1 else f"{row['checkpoint_id']}?"
            for row in await cursor.fetchall()
        ]


def _sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many steps each statement sent from now on carries."""
    sizes: list[int] = []
    build = step_commits.statement

    def counted(steps: Any, guard: Any) -> tuple[str, tuple[Any, ...]]:
        sizes.append(len(steps))
        return build(steps, guard)

    monkeypatch.setattr(step_commits, "statement", counted)
    return sizes


async def test_a_refused_step_stores_nothing_and_the_others_of_its_statement_are_stored(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = _sent(monkeypatch)
    committer = StepCommitter(pool, _ALLOWED)
    kept, refused = uuid.uuid4().hex, uuid.uuid4().hex

    results = await asyncio.gather(
        committer.store((kept, True), _step(kept, "1")),
        committer.store((refused, False), _step(refused, "1")),
        return_exceptions=True,
    )

    assert sizes == [2]
    assert results[0] is None
    assert isinstance(results[1], StepRefused) and results[1].key == refused
    assert await _stored(pool, kept) == ["1"]
    assert await _stored(pool, refused) == []


async def test_a_step_the_database_refuses_fails_alone(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = _sent(monkeypatch)
    committer = StepCommitter(pool)
    good, bad = uuid.uuid4().hex, uuid.uuid4().hex

    results = await asyncio.gather(
        committer.store((good,), _step(good, "1")),
        # PostgreSQL's text cannot hold a NUL: this step's statement fails.
        committer.store((bad,), _step(bad, "1", note="\u0000")),
        return_exceptions=True,
    )

    # Together first, then again one at a time.
    assert sizes == [2, 1, 1]
    assert results[0] is None
    assert isinstance(results[1], Exception) and not isinstance(results[1], StepRefused)
    assert await _stored(pool, good) == ["1"]
    assert await _stored(pool, bad) == []


async def test_a_keys_steps_go_in_order_one_per_statement(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = _sent(monkeypatch)
    committer = StepCommitter(pool)
    thread, other = uuid.uuid4().hex, uuid.uuid4().hex

    await asyncio.gather(
        committer.store((thread,), _step(thread, "1")),
        committer.store((thread,), _step(thread, "2")),
        committer.store((other,), _step(other, "1")),
    )

    # The first statement takes the key's first step and the other key's; its second waits.
    assert sizes == [2, 1]
    assert await _stored(pool, thread) == ["1", "2"]
    assert await _stored(pool, other) == ["1"]


async def test_a_caller_cancelled_while_waiting_still_has_its_step_stored(pool: Pool) -> None:
    committer = StepCommitter(pool)
    thread = uuid.uuid4().hex
    waiting = asyncio.create_task(committer.store((thread,), _step(thread, "1")))
    await asyncio.sleep(0)  # handed over: the writer has it
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting

    # The next step of the key goes after it, so once it is stored the first one is too.
    await committer.store((thread,), _step(thread, "2"))
    assert await _stored(pool, thread) == ["1", "2"]
