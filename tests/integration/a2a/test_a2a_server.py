"""a2a-sdk's own client against Plait's A2A endpoint: card, send, stream, input-required,
resume, GetTask, ListTasks, SubscribeToTask and cancel, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import datetime
import time

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.client import Client
from a2a.helpers import get_data_parts
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict

from tests.integration.a2a.conftest import EXPENSE_AGENT, agent_base
from tests.integration.a2a.helpers import (
    DEADLINE_SECONDS,
    drain,
    final_task,
    immediately,
    output_of,
    states,
    task_id_of,
    user_data,
    user_text,
    wait_for_state,
)
from tests.integration.server.harness import Cluster

pytestmark = pytest.mark.postgres


async def waiting_for_input(client: Client, claim: str) -> Task:
    """A new task for ``claim`` (500 or more), stopped on its approval."""
    responses = await drain(client.send_message(user_text(claim)))
    task: Task = await client.get_task(GetTaskRequest(id=task_id_of(responses)))
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    return task


async def settlement_after(client: Client, answer: SendMessageRequest) -> object:
    """Send the follow-up ``answer`` (its stream must end COMPLETED); the task's settlement."""
    answered = await drain(client.send_message(answer))
    assert states(answered)[-1] == "TASK_STATE_COMPLETED"
    done = await client.get_task(GetTaskRequest(id=answer.message.task_id))
    return output_of(done)["settlement"]


async def test_card_names_the_graph_and_its_endpoint(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    base = agent_base(a2a_server, EXPENSE_AGENT)
    card = await A2ACardResolver(http, base).get_agent_card()

    assert card.name == EXPENSE_AGENT
    assert card.version == "1.0.0"
    assert card.capabilities.streaming
    # The preferred interface comes first (the others: test_a2a_bindings.py).
    interface = card.supported_interfaces[0]
    assert interface.url == f"{base}/"
    assert interface.protocol_binding == "JSONRPC"
    assert interface.protocol_version == "1.0"
    assert [skill.id for skill in card.skills] == ["settle-expense"]

    # The session's server also serves graphs other tests publish (test_a2a_rollout.py):
    # the marked graphs of the specs folder are listed, the unmarked ones are not.
    listed = {agent["name"] for agent in (await http.get("/a2a")).json()}
    assert {EXPENSE_AGENT, "slow-agent", "two-questions-agent"} <= listed
    assert not listed & {"summarize", "refund-approval", "a2a-expense-caller"}


async def test_a_graph_not_marked_for_a2a_is_not_served(http: httpx.AsyncClient) -> None:
    card = await http.get("/a2a/private-graph/.well-known/agent-card.json")
    assert card.status_code == 404
    assert card.headers["content-type"].startswith("application/problem+json")
    assert "spec.a2a" in card.json()["detail"]
    call = await http.post("/a2a/private-graph/", json={"jsonrpc": "2.0", "id": 1})
    assert call.status_code == 404


async def test_send_without_streaming_returns_the_completed_task(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    config = ClientConfig(streaming=False, httpx_client=http)
    client = await create_client(agent_base(a2a_server, EXPENSE_AGENT), client_config=config)
    responses = await drain(client.send_message(user_text("Taxi 42.50")))

    task = final_task(responses)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert output_of(task) == {"settlement": {"verdict": "paid", "amount": 42.5, "comment": None}}
    # The task is a Plait thread: the run is visible through the Agent Server API too.
    runs = (await http.get(f"/threads/{task.id}/runs")).json()
    assert [run["status"] for run in runs] == ["success"]


async def test_stream_stops_on_input_required_and_a_follow_up_approves(
    expense_client: Client, http: httpx.AsyncClient
) -> None:
    client = expense_client
    responses = await drain(client.send_message(user_text("Team dinner 750")))

    seen = states(responses)
    assert seen[0] == "TASK_STATE_SUBMITTED"
    assert "TASK_STATE_WORKING" in seen
    assert seen[-1] == "TASK_STATE_INPUT_REQUIRED"
    task_id = task_id_of(responses)
    # The node updates streamed as WORKING status messages.
    nodes = [
        data.get("node")
        for response in responses
        if response.WhichOneof("payload") == "status_update"
        for data in get_data_parts(response.status_update.status.message.parts)
        if isinstance(data, dict)
    ]
    assert "read" in nodes

    # The waiting task is an approval in Plait's inbox, on the task's thread.
    inbox = (await http.get("/approvals", params={"thread_id": task_id})).json()
    (approval,) = inbox
    assert approval["action"] == "pay_expense"
    assert approval["arguments"] == {"amount": 750.0, "claim": "Team dinner 750"}

    waiting = await client.get_task(GetTaskRequest(id=task_id))
    assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "pay_expense" in waiting.status.message.parts[0].text

    resumed = await drain(client.send_message(user_text("approve: offsite dinner", waiting)))
    assert states(resumed)[-1] == "TASK_STATE_COMPLETED"
    done = await client.get_task(GetTaskRequest(id=task_id))
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert output_of(done) == {
        "settlement": {"verdict": "paid", "amount": 750.0, "comment": "offsite dinner"}
    }
    decided = (await http.get(f"/approvals/{approval['approval_id']}")).json()
    assert decided["status"] == "approved"
    assert decided["decided_by"] == "a2a:anonymous"


async def test_a_data_part_decision_rejects(expense_client: Client) -> None:
    client = expense_client
    waiting = await waiting_for_input(client, "Conference ticket 900")

    # Something that is not a decision keeps the task waiting, and says how to answer.
    unclear = await drain(client.send_message(user_text("maybe later?", waiting)))
    assert states(unclear)[-1] == "TASK_STATE_INPUT_REQUIRED"

    decision = {"decision": "reject", "comment": "not this year"}
    assert await settlement_after(client, user_data(decision, waiting)) == {
        "verdict": "declined",
        "amount": 900.0,
        "comment": "not this year",
    }


async def test_an_answer_given_in_the_inbox_reaches_the_task_at_the_next_message(
    expense_client: Client, http: httpx.AsyncClient
) -> None:
    client = expense_client
    waiting = await waiting_for_input(client, "Hotel 640")
    (approval,) = (await http.get("/approvals", params={"thread_id": waiting.id})).json()
    decided = await http.post(
        f"/approvals/{approval['approval_id']}/decision",
        json={"decision": "approve", "comment": "in the inbox"},
    )
    assert decided.status_code == 200, decided.text

    # Any message now follows the thread's newest run (the inbox's resume) to its end.
    assert await settlement_after(client, user_text("how is it going?", waiting)) == {
        "verdict": "paid",
        "amount": 640.0,
        "comment": "in the inbox",
    }


async def test_a_follow_up_on_a_deleted_thread_fails_instead_of_starting_over(
    expense_client: Client, http: httpx.AsyncClient
) -> None:
    client = expense_client
    waiting = await waiting_for_input(client, "Flight 980")
    assert (await http.delete(f"/threads/{waiting.id}")).status_code == 204

    answered = await drain(client.send_message(user_text("approve", waiting)))
    assert states(answered)[-1] == "TASK_STATE_FAILED"
    failed = await client.get_task(GetTaskRequest(id=waiting.id))
    assert "has no thread" in failed.status.message.parts[0].text
    # No run was started with "approve" as a claim.
    assert (await http.get(f"/threads/{waiting.id}")).status_code == 404


async def test_list_tasks_finds_the_tasks_of_a_context(expense_client: Client) -> None:
    client = expense_client
    first = final_task(
        [r for r in await drain(client.send_message(user_text("Taxi 10"))) if r.HasField("task")]
    )
    listed = await client.list_tasks(ListTasksRequest(context_id=first.context_id))
    assert [task.id for task in listed.tasks] == [first.id]
    assert listed.tasks[0].status.state == TaskState.TASK_STATE_COMPLETED

    hour = datetime.timedelta(hours=1)
    now = datetime.datetime.now(datetime.UTC)
    for since, expected in ((now - hour, [first.id]), (now + hour, [])):
        request = ListTasksRequest(context_id=first.context_id)
        request.status_timestamp_after.FromDatetime(since)
        assert [task.id for task in (await client.list_tasks(request)).tasks] == expected
    with pytest.raises(InvalidParamsError, match="page token"):
        await client.list_tasks(ListTasksRequest(page_token="-10"))


async def _start_slow(server: Cluster, http: httpx.AsyncClient, seconds: float) -> str:
    """Start a slow-agent task and return its id at once (a non-streaming send)."""
    config = ClientConfig(streaming=False, httpx_client=http)
    client = await create_client(agent_base(server, "slow-agent"), client_config=config)
    request = immediately(user_data({"request": "hello", "seconds": seconds}))
    return task_id_of(await drain(client.send_message(request)))


async def test_subscribe_follows_a_running_task_to_its_end(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    client = await create_client(
        agent_base(a2a_server, "slow-agent"),
        client_config=ClientConfig(streaming=True, httpx_client=http),
    )
    task_id = await _start_slow(a2a_server, http, 3)
    assert (await client.get_task(GetTaskRequest(id=task_id))).status.state not in (
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
    )

    followed = await drain(client.subscribe(SubscribeToTaskRequest(id=task_id)))
    assert states(followed)[-1] == "TASK_STATE_COMPLETED"
    done = await client.get_task(GetTaskRequest(id=task_id))
    assert output_of(done) == {"reply": {"echo": "hello"}}


async def test_cancel_stops_the_plait_run(a2a_server: Cluster, http: httpx.AsyncClient) -> None:
    client = await create_client(
        agent_base(a2a_server, "slow-agent"),
        client_config=ClientConfig(streaming=True, httpx_client=http),
    )
    task_id = await _start_slow(a2a_server, http, 120)
    working = await wait_for_state(client, task_id, TaskState.TASK_STATE_WORKING)
    assert working.status.state == TaskState.TASK_STATE_WORKING

    cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED

    deadline = time.monotonic() + DEADLINE_SECONDS
    statuses: list[str] = []
    while time.monotonic() < deadline:
        statuses = [run["status"] for run in (await http.get(f"/threads/{task_id}/runs")).json()]
        if statuses == ["interrupted"]:
            break
        await asyncio.sleep(0.1)
    assert statuses == ["interrupted"]
    stored = await client.get_task(GetTaskRequest(id=task_id))
    assert MessageToDict(stored.status)["state"] == "TASK_STATE_CANCELED"
