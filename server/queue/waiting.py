"""Runs parked on a person, a tool or a timer stop waiting when their thread moves on.

A run that stopped on ``interrupt()`` ended ``success`` for the Agent Server and
``waiting_for_person`` / ``waiting_for_tool`` for Plait
(:mod:`plait.engine.run.states`). The next run created on its thread (an
answer, a tool's result, a new input) settles it: it counts as it ended,
partially succeeded when it lost map items. Both writers of runs call this:
the queue (``runs.py``) and runs driven in the caller's process (``direct_runs.py``).
"""

from __future__ import annotations

from psycopg import AsyncConnection
from psycopg.rows import DictRow

from plait.engine.run import RunState, check_transition, settled_state

WAITING: tuple[RunState, ...] = ("waiting_for_person", "waiting_for_tool", "waiting_for_timer")
# The statement below makes these transitions; checked when the module loads.
_SETTLES = {
    check_transition(waiting, settled_state(detail))
    for waiting in WAITING
    for detail in (None, {"lost_items": 1})
}


async def settle_waiting_in(conn: AsyncConnection[DictRow], thread_id: str) -> None:
    """The thread moves on (an answer, a new input): its parked runs stop waiting.

    Each counts as it ended (:func:`plait.engine.run.states.settled_state`: partially
    succeeded when it lost map items). Call under the thread's lock.
    """
    await conn.execute(
        """
        UPDATE plait_runs
        SET state = CASE WHEN coalesce((state_detail->>'lost_items')::int, 0) > 0
                         THEN 'partially_succeeded' ELSE 'succeeded' END,
            state_detail = nullif(state_detail - 'waiting', '{}'::jsonb)
        WHERE thread_id = %s AND state = ANY(%s)
        """,
        (thread_id, list(WAITING)),
    )
