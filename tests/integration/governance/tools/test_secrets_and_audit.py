"""On real Postgres: a secret appears nowhere, and the audit trail holds every decision."""

from __future__ import annotations

import contextlib
import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.governance.secrets import SECRETS_FILE_ENV
from plait.engine.run.events import Completed, Interrupted, RunEvent
from plait.engine.run.runner import new_thread_id, run_graph
from plait.engine.spec.loader import parse_spec
from plait.engine.store.pool import Pool

SPECS = Path(__file__).resolve().parent / "specs"

SPEC = """
secrets: [SERVICE_TOKEN]
state:
  answer: {}
  who: {}
tools:
  whoami: {function: "plait_gov_secret_tools:whoami", secrets: [SERVICE_TOKEN]}
  transfer_funds: {function: "plait_gov_secret_tools:transfer_funds"}
  refund: {function: "plait_gov_secret_tools:refund", risk: high}
models:
  m:
    provider: scripted
    script:
      - tool_calls: [{name: whoami, args: {user: ann}, id: c1}]
      - tool_calls: [{name: transfer_funds, args: {account: "9", amount: 1}, id: c2}]
      - content: done
nodes:
  agent:
    kind: agent
    model: m
    tools: [whoami]
    tool_results: data
    prompt: Who am I?
    output: answer
  check:
    kind: tool
    tool: whoami
    args: {user: "'bob'"}
    output: who
  pay:
    kind: tool
    tool: refund
    args: {order: "'o-1'"}
edges:
  - {from: START, to: agent}
  - {from: agent, to: check}
  - {from: check, to: pay}
  - {from: pay, to: END}
"""


def _compile(name: str) -> CompiledSpec:
    text = f"apiVersion: plait/v1\nkind: Graph\nmetadata: {{name: {name}, version: '1.0.0'}}\n"
    text += "spec:\n" + textwrap.indent(textwrap.dedent(SPEC), "  ")
    return compile_spec(parse_spec(text, f"{name}.yaml", SPECS / f"{name}.yaml"))


async def _run(compiled: CompiledSpec, pool: Pool, thread: str, **kwargs: Any) -> list[RunEvent]:
    async with contextlib.aclosing(run_graph(compiled, pool, thread, **kwargs)) as events:
        return [event async for event in events]


async def _tables_containing(pool: Pool, needle: str) -> list[str]:
    """Every ``table.column`` (text, json, jsonb, bytea) in which ``needle`` occurs."""
    found: list[str] = []
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'public' AND data_type IN "
            "('text', 'character varying', 'json', 'jsonb', 'bytea', 'ARRAY')"
        )
        columns = await cursor.fetchall()
        assert len(columns) > 10  # the search really covers the schema
        for row in columns:
            table, column = sql.Identifier(row["table_name"]), sql.Identifier(row["column_name"])
            if row["data_type"] == "bytea":
                # Checkpoint blobs are msgpack: strings are stored as their UTF-8 bytes.
                test = sql.SQL("position(convert_to(%s, 'UTF8') in {}) > 0").format(column)
            else:
                test = sql.SQL("strpos({}::text, %s) > 0").format(column)
            query = sql.SQL("SELECT count(*) AS n FROM {} WHERE {}").format(table, test)
            count = await (await conn.execute(query, (needle,))).fetchone()
            if count is not None and count["n"]:
                found.append(f"{row['table_name']}.{row['column_name']}")
    return found


async def test_a_configured_secret_is_in_no_table_and_no_event(
    pool: Pool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = f"sk-{uuid.uuid4().hex}"
    file = tmp_path / "secrets.env"
    file.write_text(f"SERVICE_TOKEN={secret}\n")
    monkeypatch.delenv("SERVICE_TOKEN", raising=False)
    monkeypatch.setenv(SECRETS_FILE_ENV, str(file))
    compiled = _compile("gov-secrets")
    thread = new_thread_id()

    events = await _run(compiled, pool, thread, input={})
    parked = events[-1]
    assert isinstance(parked, Interrupted)  # the high-risk refund waits
    assert parked.payload["action"] == "refund"
    answer = {parked.interrupt_id: {"decision": "approve"}}
    events += await _run(compiled, pool, thread, decisions=answer)

    assert isinstance(events[-1], Completed)
    assert events[-1].output["who"]["token"] == "[redacted:SERVICE_TOKEN]"
    stream = json.dumps([event.to_dict() for event in events], default=str)
    assert secret not in stream
    assert await _tables_containing(pool, secret) == []
    # The same search finds the redacted echo: in checkpoints and recorded results.
    marked = await _tables_containing(pool, f"{thread}")
    assert "plait_tool_results.thread_id" in marked
    redacted = set(await _tables_containing(pool, "[redacted:SERVICE_TOKEN]"))
    assert {"plait_tool_results.result", "checkpoint_writes.blob"} <= redacted


async def test_tool_calls_refusals_and_decisions_are_audited(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "token-for-the-audit-test")
    compiled = _compile("gov-audit")
    thread = new_thread_id()
    parked = (await _run(compiled, pool, thread, input={}))[-1]
    assert isinstance(parked, Interrupted)
    edit = {"decision": "edit", "arguments": {"order": "o-2"}}
    events = await _run(compiled, pool, thread, decisions={parked.interrupt_id: edit})
    assert isinstance(events[-1], Completed)

    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT kind, run_id, node, step, tool, actor, detail, tenant FROM plait_audit "
            "WHERE thread_id = %s ORDER BY id",
            (thread,),
        )
        rows = await cursor.fetchall()
    summary = [(r["kind"], r["node"], r["tool"], r["actor"]) for r in rows]
    assert summary == [
        ("tool_call", "agent", "whoami", "node:agent"),
        ("refusal", "agent", "transfer_funds", "policy"),
        ("tool_call", "check", "whoami", "node:check"),
        ("approval", "pay", "refund", "reviewer"),
        ("tool_call", "pay", "refund", "node:pay"),
    ]
    assert all(r["run_id"] and r["step"] and r["tenant"] == "default" for r in rows)
    assert rows[3]["detail"]["decision"] == "edit"
    assert rows[4]["detail"]["args"] == {"order": "o-2"}
    assert rows[0]["run_id"] != rows[4]["run_id"]  # the resume is a run of its own
