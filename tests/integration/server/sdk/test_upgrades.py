"""A thread upgraded on a real ``plait serve`` (decision 95), driven by the LangGraph SDK:
parked on 1.0.0, a run on 1.1.0 is refused with a 409 that says to upgrade, the upgrade
(Plait's own route, plain HTTP), then the SDK resumes the thread on 1.1.0 by the new
interrupt id."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient

from tests.integration.server.harness import Cluster

VERSIONS = Path(__file__).resolve().parents[1] / "upgrades"
GRAPH = "upgrade-demo"


async def _publish(http: httpx.AsyncClient) -> None:
    """Both versions in the server's registry (the same text again answers 200)."""
    for path in (
        VERSIONS / "specs" / "upgrade-demo.yaml",
        VERSIONS / "versions" / "upgrade-demo-1.1.0.yaml",
    ):
        published = await http.post(
            "/graphs", content=path.read_text("utf-8"), headers={"content-type": "application/yaml"}
        )
        assert published.status_code in (200, 201), published.text


async def test_the_sdk_resumes_an_upgraded_thread(
    sdk_server: Cluster, client: LangGraphClient
) -> None:
    async with httpx.AsyncClient(base_url=sdk_server.url, timeout=60.0) as http:
        await _publish(http)
        thread = (await client.threads.create())["thread_id"]
        parked = await client.runs.wait(
            thread, f"{GRAPH}@1.0.0", input={"customer": "Ada", "amount": 12}
        )
        assert isinstance(parked, dict) and parked["__interrupt__"]

        # The SDK's runs.wait raises httpx's error with the problem as its body.
        with pytest.raises(httpx.HTTPStatusError) as refused:
            await client.runs.wait(
                thread, f"{GRAPH}@1.1.0", command={"resume": {"decision": "approve"}}
            )
        problem = refused.value.response.json()
        assert (problem["status"], problem["type"]) == (
            409,
            "urn:plait:problem:thread-spec-mismatch",
        )
        assert "upgrade the thread first" in problem["detail"]

        upgraded = await http.post(f"/threads/{thread}/upgrade", json={"version": "1.1.0"})
        assert upgraded.status_code == 200, upgraded.text
        [new_interrupt] = upgraded.json()["interrupts"].values()

    shown = await client.threads.get(thread)
    assert shown["status"] == "interrupted"
    assert shown["values"]["client"] == "Ada"  # type: ignore[index]
    finished = await client.runs.wait(
        thread, f"{GRAPH}@1.1.0", command={"resume": {new_interrupt: {"decision": "approve"}}}
    )
    assert isinstance(finished, dict)
    assert finished["summary"] == "Ada 1200 approve"
    assert (await client.threads.get(thread))["status"] == "idle"
