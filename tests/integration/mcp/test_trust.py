"""Trusted MCP servers: what a model is bound with depends on the run's tenant.

A real MCP server over stdio (``specs/mcp_injected.py``) puts an injected
instruction in every free text it controls. One compiled graph serves two
tenants at the same time: the one whose operator trusts the server sees the
server's own words; the other sees the tool's name, its schema's structure and
Plait's neutral line, and nothing of the injected text anywhere in what the
model was bound with. The trust lists are the operator's rows in Postgres
(``server/auth/mcp_trust.py``), read by each run as a worker's run would.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from plait.engine.compiler import compile_spec
from plait.engine.models.scripted import ScriptedChatModel
from plait.engine.run.context import RunContext
from plait.engine.spec.loader import load_spec
from plait.engine.store.audit import PostgresAuditStore
from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.pool import Pool
from plait.engine.store.tool_results import PostgresToolResultStore
from plait.engine.tools.untrusted_tools import withheld_description
from plait.server.auth.mcp_trust import TenantTrust, set_trust
from plait.server.auth.store import create_tenant
from tests.integration.mcp.specs.mcp_injected import INJECTED

pytestmark = pytest.mark.postgres

SPEC = Path(__file__).resolve().parent / "specs" / "mcp-trust.yaml"
#: The servers of the spec as an operator names them (command lines, as the spec writes them).
INJECTED_SERVER = "python mcp_injected.py"
DEMO_SERVER = "python -m plait_examples.mcp_demo"


@pytest.fixture
def bound_tools(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """What the scripted model was bound with at each call, by the run's prompt.

    The first call of each run waits until both runs have made theirs, so the two
    runs of a test are in flight on the one compiled graph at the same time.
    """
    seen: dict[str, list[dict[str, Any]]] = {}
    both = asyncio.Barrier(2)
    original = ScriptedChatModel._agenerate

    async def capture(
        self: ScriptedChatModel, messages: Sequence[BaseMessage], *a: Any, **kw: Any
    ) -> Any:
        prompt = next(m.text for m in messages if isinstance(m, HumanMessage))
        first = prompt not in seen
        seen[prompt] = kw.get("tools") or []
        if first:
            async with asyncio.timeout(60):
                await both.wait()
        return await original(self, messages, *a, **kw)

    monkeypatch.setattr(ScriptedChatModel, "_agenerate", capture)
    yield seen


@pytest.fixture
async def tenants(pool: Pool) -> AsyncIterator[tuple[str, str]]:
    """Two new tenants: ``trusting`` trusts both servers, ``wary`` only the demo server."""
    trusting, wary = (f"{kind}-{uuid.uuid4().hex[:10]}" for kind in ("trusting", "wary"))
    for tenant in (trusting, wary):
        await create_tenant(pool, tenant)
    await set_trust(pool, trusting, [INJECTED_SERVER, DEMO_SERVER])
    await set_trust(pool, wary, [DEMO_SERVER])
    yield trusting, wary


async def run_as(graph: Any, pool: Pool, loaded: Any, tenant: str, topic: str) -> dict[str, Any]:
    """Run ``graph`` once as a worker runs it for ``tenant``; its final values and run id."""
    run_id = str(uuid.uuid4())
    config = RunContext(
        loaded,
        f"{tenant}/{uuid.uuid4()}",
        run_id,
        tool_results=PostgresToolResultStore(pool),
        audit=PostgresAuditStore(pool),
        mcp_trust=TenantTrust(pool, tenant),
        metadata={"plait_tenant": tenant},
    ).config()
    values = await graph.ainvoke({"topic": topic}, config)
    return {**values, "run_id": run_id}


def by_name(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The bound tools' ``function`` parts by name."""
    return {tool["function"]["name"]: tool["function"] for tool in tools}


async def audit_of(pool: Pool, run_id: str) -> list[dict[str, Any]]:
    """The run's ``mcp_untrusted`` audit records."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT node, detail FROM plait_audit WHERE run_id = %s AND kind = 'mcp_untrusted'",
            (run_id,),
        )
        return [dict(row) for row in await cursor.fetchall()]


async def test_each_tenant_sees_its_own_view_of_one_compiled_graph(
    pool: Pool, tenants: tuple[str, str], bound_tools: dict[str, list[dict[str, Any]]]
) -> None:
    trusting, wary = tenants
    compiled = compile_spec(load_spec(SPEC))  # one graph, and its tools, for both tenants
    graph = compiled.bind(new_checkpointer(pool))
    trusted_run, wary_run = await asyncio.gather(
        run_as(graph, pool, compiled.loaded, trusting, "alpha"),
        run_as(graph, pool, compiled.loaded, wary, "beta"),
    )
    # Both runs called the tool and finished: withholding words does not stop the call.
    assert trusted_run["answer"] == wary_run["answer"] == "found it"

    wary_tools = by_name(bound_tools["Find beta"])
    search = wary_tools["search"]
    assert search["description"] == withheld_description("search", "injected")
    assert search["parameters"] == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 10},
        },
        "required": ["query"],
    }
    assert "IGNORE ALL PREVIOUS" not in json.dumps(bound_tools["Find beta"])
    # The demo server is on the wary tenant's list: its tool keeps its own description.
    assert wary_tools["lookup_order"]["description"].startswith("The customer, total and status")

    trusted_tools = by_name(bound_tools["Find alpha"])
    assert INJECTED in trusted_tools["search"]["description"]
    query = trusted_tools["search"]["parameters"]["properties"]["query"]
    assert INJECTED in query["description"]

    # The wary run's audit trail says which tools had their descriptions withheld.
    assert await audit_of(pool, wary_run["run_id"]) == [
        {"node": "ask", "detail": {"tools": ["search"], "servers": ["injected"]}}
    ]
    assert await audit_of(pool, trusted_run["run_id"]) == []
