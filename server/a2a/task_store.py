"""A2A tasks in Postgres (table ``plait_a2a_tasks``, migration 0008), on Plait's own pool.

One store per served graph: a task is found only through the agent it was
sent to, by the same Plait tenant and the same A2A owner (the SDK's owner
resolver: the caller's user name). Tasks are stored as the JSON of their
protobuf (``MessageToDict``), so they are readable with plain SQL too.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver, resolve_user_scope
from a2a.server.tasks.task_store import TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task, TaskState
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict, ParseDict
from psycopg.types.json import Jsonb

from plait.engine.store import Pool
from plait.server.auth.store import DEFAULT_TENANT

#: Where the request's Plait tenant travels in ``ServerCallContext.state``.
TENANT_STATE_KEY = "plait_tenant"


def tenant_of(context: ServerCallContext) -> str:
    """The Plait tenant of an A2A call (set by :mod:`plait.server.a2a.routes`)."""
    return str(context.state.get(TENANT_STATE_KEY) or DEFAULT_TENANT)


def to_json(task: Task) -> dict[str, Any]:
    """A task as JSON (camelCase, as on the wire)."""
    return dict(MessageToDict(task))


def from_json(data: dict[str, Any]) -> Task:
    """The task stored as :func:`to_json`."""
    return ParseDict(data, Task(), ignore_unknown_fields=True)


class PostgresTaskStore(TaskStore):
    """The :class:`TaskStore` of one served graph."""

    def __init__(
        self, pool: Pool, graph: str, owner_resolver: OwnerResolver = resolve_user_scope
    ) -> None:
        self.pool = pool
        self.graph = graph
        self.owner_resolver = owner_resolver

    def _scope(self, context: ServerCallContext) -> tuple[str, str, str]:
        return self.graph, tenant_of(context), self.owner_resolver(context)

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Insert or update ``task``; a task of another agent, tenant or owner is refused."""
        graph, tenant, owner = self._scope(context)
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                """
                INSERT INTO plait_a2a_tasks
                    (task_id, graph, tenant_id, owner, context_id, state, task)
                VALUES (%s, %s, %s, %s, %s, %s, %s)
                ON CONFLICT (task_id) DO UPDATE
                SET context_id = EXCLUDED.context_id, state = EXCLUDED.state,
                    task = EXCLUDED.task, updated_at = now()
                WHERE plait_a2a_tasks.graph = EXCLUDED.graph
                  AND plait_a2a_tasks.tenant_id = EXCLUDED.tenant_id
                  AND plait_a2a_tasks.owner = EXCLUDED.owner
                RETURNING task_id
                """,
                (
                    task.id,
                    graph,
                    tenant,
                    owner,
                    task.context_id,
                    TaskState.Name(task.status.state),
                    Jsonb(to_json(task)),
                ),
            )
            if await cursor.fetchone() is None:
                raise InvalidParamsError(message=f"task {task.id} belongs to another caller")

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The task, if this caller may see it."""
        graph, tenant, owner = self._scope(context)
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT task FROM plait_a2a_tasks "
                "WHERE task_id = %s AND graph = %s AND tenant_id = %s AND owner = %s",
                (task_id, graph, tenant, owner),
            )
            row = await cursor.fetchone()
        return None if row is None else from_json(row["task"])

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The caller's tasks of this agent, most recently updated first.

        The page token is the offset of the page (a plain number).
        """
        graph, tenant, owner = self._scope(context)
        page_size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        try:
            offset = int(params.page_token) if params.page_token else 0
        except ValueError:
            offset = -1
        if offset < 0:
            raise InvalidParamsError(message=f"invalid page token {params.page_token!r}")
        where = "graph = %s AND tenant_id = %s AND owner = %s"
        args: list[Any] = [graph, tenant, owner]
        if params.context_id:
            where += " AND context_id = %s"
            args.append(params.context_id)
        if params.status:
            where += " AND state = %s"
            args.append(TaskState.Name(params.status))
        if params.HasField("status_timestamp_after"):
            where += " AND updated_at >= %s"
            # ToDatetime() alone is naive UTC; astimezone() would read it as local time.
            args.append(params.status_timestamp_after.ToDatetime(tzinfo=UTC))
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT count(*) AS n FROM plait_a2a_tasks WHERE {where}", args
            )
            counted = await cursor.fetchone()
            cursor = await conn.execute(
                f"SELECT task FROM plait_a2a_tasks WHERE {where} "
                "ORDER BY updated_at DESC, task_id DESC LIMIT %s OFFSET %s",
                [*args, page_size, offset],
            )
            rows = await cursor.fetchall()
        total = int(counted["n"]) if counted is not None else 0
        following = offset + page_size
        return ListTasksResponse(
            tasks=[from_json(row["task"]) for row in rows],
            next_page_token=str(following) if following < total else "",
            total_size=total,
            page_size=page_size,
        )

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Delete the task, if this caller may see it."""
        graph, tenant, owner = self._scope(context)
        async with self.pool.connection() as conn:
            await conn.execute(
                "DELETE FROM plait_a2a_tasks "
                "WHERE task_id = %s AND graph = %s AND tenant_id = %s AND owner = %s",
                (task_id, graph, tenant, owner),
            )
