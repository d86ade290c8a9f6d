"""Fire crons: each due schedule becomes a run, once across every worker, surviving restarts.

A worker looks for due crons every :data:`CRON_POLL_SECONDS`. In one
transaction it locks them (``FOR UPDATE SKIP LOCKED``: another worker skips
them), creates each one's run and moves its ``next_run_at`` past now. A worker
that dies mid-way rolls all of it back, and the next one fires the cron.
Times missed while no worker ran fire once, not once per missed time.

Schedules are cron expressions (croniter): five fields (minute to weekday), or
six with seconds last, read in the cron's timezone. A cron without a thread
makes a thread per run and, unless ``on_run_completed`` is ``keep``, deletes it
once the run ended (:meth:`CronFirer.delete_ended_threads`).
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from psycopg import AsyncConnection
from psycopg.rows import DictRow

from plait.engine.store import Pool
from plait.server.graphs import rollouts
from plait.server.graphs.versions import (
    GraphVersion,
    by_assistant_id,
    get_version,
    is_assistant_uuid,
)
from plait.server.queue import crons, threads
from plait.server.queue.crons import Cron
from plait.server.queue.queueing import Queueing
from plait.server.queue.runs import MultitaskStrategy, create_run_in, hash_request

log = logging.getLogger(__name__)

#: How often a worker looks for due crons: a cron fires within this of its time.
CRON_POLL_SECONDS = 1.0
#: Crons one worker fires per look.
BATCH = 20


class ScheduleInvalid(ValueError):
    """A schedule or timezone that cannot be read; the message says which and why."""


def check_schedule(schedule: str, timezone: str) -> None:
    """Raise :class:`ScheduleInvalid` unless ``schedule`` and ``timezone`` can be read."""
    if not croniter.is_valid(schedule):
        raise ScheduleInvalid(
            f"schedule {schedule!r} is not a cron expression: write five fields "
            "(minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5'), "
            "or six with seconds last"
        )
    _zone(timezone)


def next_time(
    schedule: str, timezone: str, after: datetime, end_time: datetime | None = None
) -> datetime | None:
    """The first time of ``schedule`` after ``after``; ``None`` when it is past ``end_time``."""
    start = after.astimezone(_zone(timezone))
    found: datetime = croniter(schedule, start).get_next(datetime)
    if end_time is not None and found > end_time:
        return None
    return found.astimezone(UTC)


def _zone(timezone: str) -> ZoneInfo:
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleInvalid(
            f"timezone {timezone!r} is not an IANA time zone (e.g. 'UTC', 'Europe/Paris')"
        ) from None


class CronFirer:
    """Fires the crons that are due; call :meth:`fire_due` now and then."""

    def __init__(self, pool: Pool, specs_dir: Path | None = None) -> None:
        self.pool = pool
        self.specs_dir = specs_dir

    async def delete_ended_threads(self) -> int:
        """Delete the threads of crons' runs that ended (``on_run_completed: delete``);
        return how many this worker deleted (another may delete some first)."""
        deleted = 0
        for thread_id, tenant in await crons.ended_threads(self.pool, BATCH):
            try:
                await threads.delete_thread(self.pool, thread_id, tenant)
            except threads.ThreadNotFound:
                continue
            deleted += 1
        return deleted

    async def fire_due(self) -> int:
        """Fire every due cron (up to :data:`BATCH`); return how many were due."""
        async with self.pool.connection() as conn, conn.transaction():
            due = await crons.due(conn, BATCH)
            now = datetime.now(UTC)
            for cron in due:
                try:
                    # A savepoint: a cron that cannot fire now still moves on.
                    async with conn.transaction():
                        await self._fire(conn, cron)
                except Exception as exc:
                    log.warning("cron %s did not fire: %s", cron.cron_id, exc)
                following = next_time(cron.schedule, cron.timezone, now, cron.end_time)
                await crons.reschedule(conn, cron.cron_id, following)
        return len(due)

    async def _fire(self, conn: AsyncConnection[DictRow], cron: Cron) -> None:
        # A new thread each time unless the cron has one, deleted after its run unless "keep".
        thread_id = cron.thread_id or threads.stored_thread_id(cron.tenant, str(uuid.uuid4()))
        graph = await self._graph(cron, thread_id)
        scheduled = cron.next_run_at.isoformat() if cron.next_run_at else None
        if cron.thread_id is None:
            await crons.insert_thread(conn, thread_id, cron.tenant, cron)
        creation = await create_run_in(
            conn,
            thread_id=thread_id,
            graph=graph,
            kwargs=cron.kwargs,
            metadata={
                **cron.metadata,
                "plait_cron": {"cron_id": cron.cron_id, "scheduled_at": scheduled},
            },
            multitask_strategy=cast(
                MultitaskStrategy, cron.payload.get("multitask_strategy") or "enqueue"
            ),
            idempotency_key=None,
            request_hash=hash_request({"cron": cron.cron_id, "at": scheduled}),
            route="",
            if_not_exists="reject",
            tenant=cron.tenant,
            # What the cron's request said (expires_in in seconds); the spec fills the rest.
            queueing=Queueing(
                priority=cron.payload.get("priority"), expires_in=cron.payload.get("expires_in")
            ),
        )
        run, _ = await creation.read()
        log.info("cron %s fired run %s (scheduled %s)", cron.cron_id, run.run_id, scheduled)

    async def _graph(self, cron: Cron, thread_id: str) -> GraphVersion:
        """The version to run: as the API picks it, a bare graph name on a thread means
        the version the thread runs (a thread stays on the spec it started with), and on
        a thread with none yet the tenant's rollout's choice (decision 90)."""
        graph = await by_assistant_id(
            self.pool, cron.assistant_id, specs_dir=self.specs_dir, tenant=cron.tenant
        )
        if graph is None:
            raise LookupError(f"assistant {cron.assistant_id!r} is not registered any more")
        if "@" in cron.assistant_id:
            return graph
        if cron.thread_id is not None:
            thread = await threads.get_thread(self.pool, cron.thread_id, cron.tenant)
            if thread is not None and thread.get("graph") == graph.name and thread.get("version"):
                pinned = await get_version(
                    self.pool,
                    graph.name,
                    thread["version"],
                    specs_dir=self.specs_dir,
                    tenant=cron.tenant,
                )
                if pinned is not None:
                    return pinned
        if is_assistant_uuid(cron.assistant_id):
            return graph
        chosen = await rollouts.version_for_new_thread(
            self.pool, graph, thread_id, cron.tenant, specs_dir=self.specs_dir
        )
        return chosen[0] if chosen is not None else graph
