"""Cancel, multitask strategies and Idempotency-Key, against a run that blocks on a file."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError

from tests.integration.server.sdk.helpers import blocking_input, is_waiting, log_lines, release


async def start_blocked_run(client: LangGraphClient, tid: str, run_input: dict[str, str]) -> str:
    """Start ``sdk-blocking`` on ``tid`` and return its run id once it blocks in ``wait``."""
    run_id = ""
    async for part in client.runs.stream(
        tid,
        "sdk-blocking",
        input=run_input,
        stream_mode=["custom", "updates"],
        on_disconnect="continue",
    ):
        if part.event == "metadata":
            run_id = part.data["run_id"]
        if is_waiting(part):
            break
    else:
        raise AssertionError("the run ended before it blocked")
    assert run_id
    return run_id


async def test_cancel_a_running_run(client: LangGraphClient, tmp_path: Path) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run_input = blocking_input(tmp_path)
    run_id = await start_blocked_run(client, tid, run_input)
    assert (await client.runs.get(tid, run_id))["status"] == "running"
    assert (await client.threads.get(tid))["status"] == "busy"

    await client.runs.cancel(tid, run_id, wait=True)

    cancelled = await client.runs.get(tid, run_id)
    assert cancelled["status"] == "interrupted"
    assert (await client.threads.get(tid))["status"] != "busy"
    assert log_lines(run_input) == ["first", "wait-started"]
    # The thread takes new work again once the cancelled run is gone.
    release(run_input)
    follow_up = await client.runs.wait(tid, "sdk-blocking", input=run_input)
    assert follow_up["steps"][-2:] == ["wait-finished", "last"]


async def test_multitask_reject_then_enqueue(client: LangGraphClient, tmp_path: Path) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run_input = blocking_input(tmp_path)
    first = await start_blocked_run(client, tid, run_input)

    with pytest.raises(ConflictError) as caught:
        await client.runs.create(tid, "sdk-blocking", input=run_input, multitask_strategy="reject")
    response = caught.value.response
    assert response.status_code == 409
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = caught.value.body
    assert isinstance(problem, dict)
    assert problem["status"] == 409 and problem["title"] and problem["detail"]
    assert str(caught.value) == problem["detail"]  # what the SDK shows the user

    queued = await client.runs.create(
        tid, "sdk-blocking", input=run_input, multitask_strategy="enqueue"
    )
    assert (await client.runs.get(tid, queued["run_id"]))["status"] == "pending"
    assert log_lines(run_input) == ["first", "wait-started"]  # the queued run waits its turn

    release(run_input)
    await client.runs.join(tid, queued["run_id"])
    assert (await client.runs.get(tid, first))["status"] == "success"
    assert (await client.runs.get(tid, queued["run_id"]))["status"] == "success"
    one_pass = ["first", "wait-started", "wait-finished", "last"]
    assert log_lines(run_input) == one_pass * 2  # one after the other, never interleaved


def _echo(client: LangGraphClient, tid: str, text: str, key: str) -> Any:
    return client.runs.create(
        tid,
        "sdk-echo",
        input={"text": text},
        multitask_strategy="enqueue",
        headers={"Idempotency-Key": key},
    )


async def test_idempotency_key_gives_the_same_run(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    key = str(uuid.uuid4())
    first = await _echo(client, tid, "once", key)
    again = await _echo(client, tid, "once", key)
    assert again["run_id"] == first["run_id"]

    with pytest.raises(UnprocessableEntityError) as caught:
        await _echo(client, tid, "something else", key)
    assert caught.value.body["detail"]

    # Concurrent duplicates: one run between them.
    other = str(uuid.uuid4())
    runs = await asyncio.gather(*(_echo(client, tid, "burst", other) for _ in range(5)))
    assert len({run["run_id"] for run in runs}) == 1
    await client.runs.join(tid, runs[0]["run_id"])
    listed = await client.runs.list(tid)
    assert sorted(r["run_id"] for r in listed) == sorted({first["run_id"], runs[0]["run_id"]})


async def test_multitask_interrupt_keeps_progress_rollback_discards_it(
    client: LangGraphClient, tmp_path: Path
) -> None:
    outcomes: dict[str, list[str]] = {}
    for strategy in ("interrupt", "rollback"):
        thread = await client.threads.create()
        tid = thread["thread_id"]
        blocked_input = blocking_input(tmp_path, f"{strategy}-blocked")
        blocked = await start_blocked_run(client, tid, blocked_input)
        free_input = blocking_input(tmp_path, f"{strategy}-free")
        release(free_input)

        newer = await client.runs.create(
            tid, "sdk-blocking", input=free_input, multitask_strategy=strategy
        )
        final = await client.runs.join(tid, newer["run_id"])
        assert (await client.runs.get(tid, newer["run_id"]))["status"] == "success"
        assert log_lines(blocked_input) == ["first", "wait-started"]  # stopped, not finished
        outcomes[strategy] = final["steps"]
        if strategy == "interrupt":
            assert (await client.runs.get(tid, blocked))["status"] == "interrupted"
        else:
            with pytest.raises(NotFoundError):
                await client.runs.get(tid, blocked)  # rollback deletes the run...
            assert [r["run_id"] for r in await client.runs.list(tid)] == [newer["run_id"]]

    # ...and its checkpoints: only `interrupt` keeps the stopped run's finished step.
    assert outcomes["interrupt"] == ["first", "first", "wait-finished", "last"]
    assert outcomes["rollback"] == ["first", "wait-finished", "last"]
