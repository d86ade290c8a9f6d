"""An A2A task is a new thread: the tenant's rollout of the graph picks its version
(decision 90), as for the API's new threads."""

from __future__ import annotations

import httpx
from a2a.client import ClientConfig, create_client
from a2a.types.a2a_pb2 import TaskState

from tests.integration.a2a.conftest import agent_base
from tests.integration.a2a.helpers import drain, final_task, user_text
from tests.integration.server.harness import SPECS, Cluster

GRAPH = "a2a-rollout-agent"


def _spec(version: str) -> str:
    """The expense agent as graph ``a2a-rollout-agent`` at ``version``."""
    text = (SPECS / "a2a-expense-agent.yaml").read_text(encoding="utf-8")
    renamed = text.replace("name: a2a-expense-agent\n", f"name: {GRAPH}\n", 1)
    return renamed.replace('version: "1.0.0"', f'version: "{version}"', 1)


async def test_a_task_starts_on_the_version_the_rollout_picks(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    for version in ("1.0.0", "1.1.0"):
        published = await http.post("/graphs", json={"yaml": _spec(version)})
        assert published.status_code == 201, published.text
    # The older version as the canary for every new thread: what "the newest" would not give.
    started = await http.put(
        f"/graphs/{GRAPH}/rollout", json={"stable": "1.1.0", "canary": "1.0.0", "share": 100}
    )
    assert started.status_code == 200, started.text
    config = ClientConfig(streaming=False, httpx_client=http)
    client = await create_client(agent_base(a2a_server, GRAPH), client_config=config)
    try:
        task = final_task(await drain(client.send_message(user_text("Taxi 42.50"))))
    finally:
        await client.close()
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    canary = (await http.get(f"/assistants/{GRAPH}@1.0.0")).json()["assistant_id"]
    runs = (await http.get(f"/threads/{task.id}/runs")).json()
    assert [run["assistant_id"] for run in runs] == [canary]
