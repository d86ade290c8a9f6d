"""Small helpers of the A2A tests: messages, and draining a client's stream."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from a2a.client.client import Client
from a2a.helpers import get_data_parts, new_data_part, new_text_message
from a2a.types.a2a_pb2 import (
    GetTaskRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)


def user_text(text: str, task: Task | None = None) -> SendMessageRequest:
    """A user's text message, new or a follow-up on ``task``."""
    message = new_text_message(
        text,
        role=Role.ROLE_USER,
        task_id=task.id if task is not None else None,
        context_id=task.context_id if task is not None else None,
    )
    return SendMessageRequest(message=message)


def user_data(data: Any, task: Task | None = None) -> SendMessageRequest:
    """A user's message holding one data part, new or a follow-up on ``task``."""
    message = Message(
        role=Role.ROLE_USER,
        parts=[new_data_part(data)],
        message_id=str(uuid.uuid4()),
        task_id=task.id if task is not None else None,
        context_id=task.context_id if task is not None else None,
    )
    return SendMessageRequest(message=message)


def immediately(request: SendMessageRequest) -> SendMessageRequest:
    """``request`` answered as soon as the task exists (it runs on in the background)."""
    request.configuration.CopyFrom(SendMessageConfiguration(return_immediately=True))
    return request


async def drain(responses: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    """Every response of a stream."""
    return [response async for response in responses]


def states(responses: list[StreamResponse]) -> list[str]:
    """The task states the responses announce, in order."""
    found = []
    for response in responses:
        kind = response.WhichOneof("payload")
        if kind == "task":
            found.append(TaskState.Name(response.task.status.state))
        elif kind == "status_update":
            found.append(TaskState.Name(response.status_update.status.state))
    return found


def final_task(responses: list[StreamResponse]) -> Task:
    """The task of the last response that carries one (non-streaming sends carry it whole)."""
    for response in reversed(responses):
        if response.WhichOneof("payload") == "task":
            return response.task
    raise AssertionError(f"no task in {responses}")


def task_id_of(responses: list[StreamResponse]) -> str:
    """The task id the responses name."""
    for response in responses:
        kind = response.WhichOneof("payload")
        if kind == "task":
            return str(response.task.id)
        if kind == "status_update":
            return str(response.status_update.task_id)
    raise AssertionError(f"no task id in {responses}")


#: How long a test waits for a task to reach a state.
DEADLINE_SECONDS = 30.0


def output_of(task: Task) -> dict[str, object]:
    """The ``output`` artifact's data (the graph's output fields)."""
    (artifact,) = [a for a in task.artifacts if a.name == "output"]
    (data,) = get_data_parts(artifact.parts)
    assert isinstance(data, dict)
    return data


async def wait_for_state(client: Client, task_id: str, state: int) -> Task:
    """Poll GetTask until the task is in ``state`` (a condition with a deadline)."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        task: Task = await client.get_task(GetTaskRequest(id=task_id))
        if task.status.state == state or time.monotonic() > deadline:
            return task
        await asyncio.sleep(0.1)
