"""Resumes threads parked on MCP tasks (``task: true`` tools, engine/tools/mcp/tasks.py).

A run whose MCP tool call runs as a task records the task
(``plait_mcp_tasks``) and stops on an ``interrupt({"plait": "mcp_task", ...})``;
the run ends, its thread is ``interrupted`` and no worker waits for it. When
the run ends, :func:`record_parked` notes the interrupt on the task's row.

Every worker runs a :class:`McpTaskPoller`: it asks each parked task's server
for the task's status (``tasks/get``) and, once the task has ended or asks for
input, resumes the thread through the normal queue with ``command = {"resume":
{interrupt_id: {"status": ...}}}``, exactly as a decided approval does. The
re-run of the node then takes the result, or turns the task's questions into
approvals. Claiming the row and creating the resume run happen in
one transaction, so one resume is created however many workers poll.

Deleting the thread cancels its open tasks (``tasks/cancel``); a run cancelled
while it waits in place cancels its task itself. A poll that fails (the server
unreachable, the parked run or its graph gone) is logged and its row waits 2,
4, 8 ... seconds (at most five minutes) before the next one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from plait.engine.store import Pool, TaskRecord, set_task_status
from plait.server.auth.tenant_secrets import SecretSources
from plait.server.graphs.versions import get_version
from plait.server.queue.runs import get_run, resume_thread_in, thread_transaction
from plait.server.queue.threads import thread_exists

log = logging.getLogger(__name__)

_PARKED = (
    "SELECT key, thread_id, run_id, node, server_name, server, tool, task_id, status, "
    "resume_run_id, interrupts, interrupt_id, parked_run_id, poll_errors, tenant_id "
    "FROM plait_mcp_tasks "
    "WHERE interrupt_id IS NOT NULL AND resume_run_id IS NULL AND status <> 'cancelled' "
    "AND (next_poll_at IS NULL OR next_poll_at <= now()) "
    "ORDER BY created_at LIMIT %s"
)
#: A failing poll waits 2, 4, 8 ... seconds before the next, at most this long.
MAX_BACKOFF_SECONDS = 300
_BACK_OFF = (
    "UPDATE plait_mcp_tasks SET poll_errors = poll_errors + 1, "
    "next_poll_at = now() + make_interval(secs => least(power(2, poll_errors + 1), %s)) "
    "WHERE key = %s"
)
_POLLED = "UPDATE plait_mcp_tasks SET poll_errors = 0, next_poll_at = NULL WHERE key = %s"


class PollFailed(Exception):
    """A parked task cannot be resumed now (its run or graph is gone); retried later."""


async def record_parked(pool: Pool, run_id: str, interrupts: list[dict[str, Any]]) -> int:
    """Note which interrupt of run ``run_id`` waits for which task; return how many."""
    parked = [
        (item["id"], item["value"].get("key"))
        for item in interrupts
        if isinstance(item.get("value"), Mapping) and item["value"].get("plait") == "mcp_task"
    ]
    if not parked:
        return 0  # approvals only: no connection needed
    noted = 0
    async with pool.connection() as conn:
        for interrupt_id, key in parked:
            cursor = await conn.execute(
                "UPDATE plait_mcp_tasks SET interrupt_id = %s, parked_run_id = %s, "
                "updated_at = now() WHERE key = %s AND resume_run_id IS NULL",
                (interrupt_id, run_id, key),
            )
            noted += cursor.rowcount
    return noted


class McpTaskPoller:
    """Polls the parked MCP tasks and resumes their threads (see the module docstring)."""

    def __init__(
        self, pool: Pool, *, batch: int = 100, secrets: SecretSources | None = None
    ) -> None:
        self.pool = pool
        self.batch = batch
        #: A task's server is asked with its tenant's secrets, as the run that started it was.
        self.secrets = secrets or SecretSources.from_env(pool)

    async def poll_once(self) -> int:
        """Look at every parked task once; return how many threads were resumed."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(_PARKED, (self.batch,))
            rows = await cursor.fetchall()
        if not rows:
            return 0
        resumed = 0
        for row in rows:
            try:
                resumed += await self._look(row)
            except Exception as exc:
                # One unreachable server must not stop the others' tasks, nor be
                # asked again every interval: its row waits longer after each failure.
                await self._back_off(row["key"])
                log.warning(
                    "MCP task %s of thread %s: poll failed (%d in a row): %s: %s",
                    row["task_id"],
                    row["thread_id"],
                    row["poll_errors"] + 1,
                    type(exc).__name__,
                    exc,
                )
            else:
                if row["poll_errors"]:
                    await self._polled(row["key"])
        return resumed

    async def _back_off(self, key: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(_BACK_OFF, (MAX_BACKOFF_SECONDS, key))

    async def _polled(self, key: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(_POLLED, (key,))

    async def _look(self, row: Mapping[str, Any]) -> int:
        # Imported here: the MCP SDK loads only in a process that has parked tasks.
        from plait.engine.tools.mcp import (
            TERMINAL,
            ServerConnection,
            cancel_task,
            credentials_of,
            get_task,
            on_hub,
        )

        record = TaskRecord.of(row)
        server = ServerConnection.from_json(record.server)
        creds = await credentials_of(server, self.secrets.of(row["tenant_id"]))
        if not await thread_exists(self.pool, record.thread_id):
            try:
                await on_hub(
                    server, creds, lambda client, _: cancel_task(client.session, record.task_id)
                )
            except Exception as exc:
                # Nothing waits for the task any more: stop polling it either way.
                log.warning(
                    "MCP task %s of deleted thread %s: cancel failed: %s",
                    record.task_id,
                    record.thread_id,
                    exc,
                )
            await set_task_status(self.pool, record.key, "cancelled")
            return 0
        task = await on_hub(
            server, creds, lambda client, _: get_task(client.session, record.task_id)
        )
        if task.status not in TERMINAL and task.status != "input_required":
            return 0
        # Ended, or asks a question: the resumed run takes the result, or asks a person.
        return await self._resume(row, task.status)

    async def _resume(self, row: Mapping[str, Any], status: str) -> int:
        parked = await get_run(self.pool, row["parked_run_id"])
        if parked is None:
            raise PollFailed(f"its parked run {row['parked_run_id']} is gone")
        # The parked run's tenant sees its graph (a tenant's own graphs are not the default's).
        graph = await get_version(self.pool, parked.graph, parked.version, tenant=parked.tenant)
        if graph is None:
            raise PollFailed(f"graph {parked.graph}@{parked.version} is not registered")
        answer = {"status": status, "task_id": row["task_id"]}
        async with thread_transaction(self.pool, row["thread_id"]) as conn:
            cursor = await conn.execute(
                "SELECT resume_run_id FROM plait_mcp_tasks WHERE key = %s FOR UPDATE", (row["key"],)
            )
            current = await cursor.fetchone()
            if current is None or current["resume_run_id"] is not None:
                return 0  # another worker resumed it first
            run = await resume_thread_in(
                conn,
                thread_id=row["thread_id"],
                graph=graph,
                parked_run_id=parked.run_id,
                interrupt_id=row["interrupt_id"],
                answer=answer,
                metadata={"plait_mcp_task": {**answer, "node": row["node"], "tool": row["tool"]}},
                origin={"mcp_task": row["key"], "answer": answer},
                tenant=parked.tenant,
            )
            await conn.execute(
                "UPDATE plait_mcp_tasks SET status = %s, resume_run_id = %s, updated_at = now() "
                "WHERE key = %s",
                (status, run.run_id, row["key"]),
            )
        log.info(
            "MCP task %s %s: thread %s resumed by run %s",
            row["task_id"],
            status,
            row["thread_id"],
            run.run_id,
        )
        return 1
