"""The other ways in: A2A protocol 0.3 clients and the HTTP+JSON binding, over real HTTP.

A 0.3 client reads the card's legacy fields (``url``, ``preferredTransport``,
``protocolVersion``) and calls ``message/send``; a client that prefers
HTTP+JSON posts to ``<agent>/rest/message:send``. a2a-sdk 1.3's client
speaks each of them when the card offers it (its compatibility transports
for 0.3), so the tests use it, plus one raw 0.3 request as such a client
sends it on the wire.
"""

from __future__ import annotations

import uuid

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.client import Client
from a2a.types.a2a_pb2 import AgentCard, CancelTaskRequest, GetTaskRequest, TaskState
from a2a.utils.constants import PROTOCOL_VERSION_0_3, TransportProtocol

from tests.integration.a2a.conftest import EXPENSE_AGENT, agent_base
from tests.integration.a2a.helpers import (
    drain,
    final_task,
    immediately,
    output_of,
    user_data,
    user_text,
    wait_for_state,
)
from tests.integration.server.harness import Cluster

pytestmark = pytest.mark.postgres

PAID = {"settlement": {"verdict": "paid", "amount": 42.5, "comment": None}}


async def _card(server: Cluster, http: httpx.AsyncClient, graph: str) -> AgentCard:
    return await A2ACardResolver(http, agent_base(server, graph)).get_agent_card()


def _only(card: AgentCard, binding: str, version: str | None = None) -> AgentCard:
    """``card`` offering just the interfaces of ``binding`` (and ``version``), as an
    older or pickier client would see it."""
    narrowed = AgentCard()
    narrowed.CopyFrom(card)
    del narrowed.supported_interfaces[:]
    narrowed.supported_interfaces.extend(
        interface
        for interface in card.supported_interfaces
        if interface.protocol_binding == binding
        and (version is None or interface.protocol_version == version)
    )
    return narrowed


async def _client(card: AgentCard, http: httpx.AsyncClient, *bindings: str) -> Client:
    config = ClientConfig(
        streaming=False, httpx_client=http, supported_protocol_bindings=list(bindings)
    )
    return await create_client(card, client_config=config)


async def test_the_card_offers_both_bindings_in_both_protocol_versions(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    base = agent_base(a2a_server, EXPENSE_AGENT)
    card = await _card(a2a_server, http, EXPENSE_AGENT)
    offered = {(i.protocol_binding, i.protocol_version, i.url) for i in card.supported_interfaces}
    assert offered == {
        ("JSONRPC", "1.0", f"{base}/"),
        ("HTTP+JSON", "1.0", f"{base}/rest"),
        ("JSONRPC", "0.3", f"{base}/"),
        ("HTTP+JSON", "0.3", f"{base}/rest"),
    }
    # What a 0.3 client reads: the legacy fields of the same card.
    raw = (await http.get(f"/a2a/{EXPENSE_AGENT}/.well-known/agent-card.json")).json()
    assert raw["url"] == f"{base}/"
    assert raw["preferredTransport"] == "JSONRPC"
    assert raw["protocolVersion"].startswith("0.3")
    assert {"transport": "HTTP+JSON", "url": f"{base}/rest"} in raw["additionalInterfaces"]


async def test_a_raw_0_3_message_send_completes_the_task(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    """What a 0.3 client sends (``message/send``, kind-tagged parts, no version header)."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "role": "user",
                "messageId": str(uuid.uuid4()),
                "parts": [{"kind": "text", "text": "Taxi 42.50"}],
            }
        },
    }
    answer = await http.post(f"/a2a/{EXPENSE_AGENT}/", json=request)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "error" not in body, body
    task = body["result"]
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    runs = (await http.get(f"/threads/{task['id']}/runs")).json()
    assert [run["status"] for run in runs] == ["success"]


async def test_a_0_3_client_sends_over_json_rpc(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    card = await _card(a2a_server, http, EXPENSE_AGENT)
    client = await _client(
        _only(card, TransportProtocol.JSONRPC, PROTOCOL_VERSION_0_3), http, "JSONRPC"
    )
    task = final_task(await drain(client.send_message(user_text("Taxi 42.50"))))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert output_of(task) == PAID
    await client.close()


@pytest.mark.parametrize("version", ["1.0", PROTOCOL_VERSION_0_3])
async def test_http_json_clients_send_and_read_tasks(
    a2a_server: Cluster, http: httpx.AsyncClient, version: str
) -> None:
    card = await _card(a2a_server, http, EXPENSE_AGENT)
    client = await _client(_only(card, TransportProtocol.HTTP_JSON, version), http, "HTTP+JSON")
    task = final_task(await drain(client.send_message(user_text("Taxi 42.50"))))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert output_of(task) == PAID
    again = await client.get_task(GetTaskRequest(id=task.id))
    assert again.status.state == TaskState.TASK_STATE_COMPLETED
    await client.close()


async def test_cancel_over_http_json_stops_the_plait_run(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    card = await _card(a2a_server, http, "slow-agent")
    client = await _client(_only(card, TransportProtocol.HTTP_JSON, "1.0"), http, "HTTP+JSON")
    started = await drain(
        client.send_message(immediately(user_data({"request": "hello", "seconds": 120})))
    )
    task_id = final_task(started).id
    await wait_for_state(client, task_id, TaskState.TASK_STATE_WORKING)
    cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    await client.close()


async def test_no_path_segment_names_another_tenant(http: httpx.AsyncClient) -> None:
    """A2A's own ``/{tenant}/...`` REST paths are not served: the key decides the tenant."""
    answer = await http.post(
        f"/a2a/{EXPENSE_AGENT}/rest/acme/message:send",
        json={"message": {"role": "ROLE_USER", "parts": [{"text": "hi"}], "messageId": "m1"}},
    )
    assert answer.status_code == 404
