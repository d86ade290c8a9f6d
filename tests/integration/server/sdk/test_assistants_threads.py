"""Assistants and threads through the unchanged LangGraph SDK."""

from __future__ import annotations

import json
import uuid

import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError


async def test_every_graph_version_is_an_assistant(client: LangGraphClient) -> None:
    assistants = await client.assistants.search(limit=100)
    graphs = sorted(a["graph_id"] for a in assistants)
    assert graphs.count("sdk-echo") == 2  # 1.0.0 and 1.1.0
    for name in ("sdk-blocking", "sdk-tool-once", "refund-approval"):
        assert graphs.count(name) == 1, graphs
    assert len({a["assistant_id"] for a in assistants}) == len(assistants)

    echoes = await client.assistants.search(graph_id="sdk-echo")
    assert len(echoes) == 2
    for found in echoes:
        again = await client.assistants.get(found["assistant_id"])
        assert again["assistant_id"] == found["assistant_id"]
        assert again["graph_id"] == "sdk-echo"
    # The graph's name alone is an assistant id too: its newest version.
    newest = await client.assistants.get("sdk-echo")
    assert newest["assistant_id"] in {a["assistant_id"] for a in echoes}
    assert "1.1.0" in json.dumps(newest)
    older = next(a for a in echoes if a["assistant_id"] != newest["assistant_id"])
    assert "1.0.0" in json.dumps(older) and "1.1.0" not in json.dumps(older)


async def test_assistant_versions(client: LangGraphClient) -> None:
    versions = await client.assistants.get_versions("sdk-echo")
    assert len(versions) == 2
    assert {v["graph_id"] for v in versions} == {"sdk-echo"}


async def test_assistant_graph_and_schemas(client: LangGraphClient) -> None:
    graph = await client.assistants.get_graph("sdk-echo")
    node_ids = {node["id"] for node in graph["nodes"]}
    assert {"__start__", "shout", "answer", "__end__"} <= node_ids
    edges = {(edge["source"], edge["target"]) for edge in graph["edges"]}
    assert {("__start__", "shout"), ("shout", "answer"), ("answer", "__end__")} <= edges

    schemas = await client.assistants.get_schemas("sdk-echo")
    assert schemas["graph_id"] == "sdk-echo"
    assert set(schemas["input_schema"]["properties"]) == {"text"}
    assert set(schemas["output_schema"]["properties"]) == {"shouted", "reply"}
    assert {"text", "shouted", "reply"} <= set(schemas["state_schema"]["properties"])


async def test_thread_create_get_search_update_delete(client: LangGraphClient) -> None:
    tag = uuid.uuid4().hex
    thread = await client.threads.create(metadata={"tag": tag, "owner": "ada"})
    assert thread["status"] == "idle"
    assert thread["metadata"]["tag"] == tag
    fetched = await client.threads.get(thread["thread_id"])
    assert fetched["thread_id"] == thread["thread_id"]

    found = await client.threads.search(metadata={"tag": tag})
    assert [t["thread_id"] for t in found] == [thread["thread_id"]]

    updated = await client.threads.update(thread["thread_id"], metadata={"owner": "grace"})
    assert updated["metadata"]["owner"] == "grace"
    assert updated["metadata"]["tag"] == tag  # PATCH merges

    await client.threads.delete(thread["thread_id"])
    with pytest.raises(NotFoundError):
        await client.threads.get(thread["thread_id"])
    assert await client.threads.search(metadata={"tag": tag}) == []


async def test_thread_state_update_and_history(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    result = await client.runs.wait(tid, "sdk-echo", input={"text": "hi"})
    # The graph's name runs its newest version (1.1.0).
    assert result == {"text": "hi", "shouted": "HI", "reply": "Version two heard you."}

    state = await client.threads.get_state(tid)
    assert state["values"]["shouted"] == "HI"
    assert state["values"]["reply"] == "Version two heard you."
    assert state["next"] == []
    first_checkpoint = state["checkpoint"]["checkpoint_id"]

    await client.threads.update_state(tid, {"reply": "edited"}, as_node="answer")
    edited = await client.threads.get_state(tid)
    assert edited["values"]["reply"] == "edited"
    assert edited["checkpoint"]["checkpoint_id"] != first_checkpoint

    history = await client.threads.get_history(tid, limit=20)
    assert history[0]["checkpoint"]["checkpoint_id"] == edited["checkpoint"]["checkpoint_id"]
    assert history[0]["values"]["reply"] == "edited"
    assert any(h["checkpoint"]["checkpoint_id"] == first_checkpoint for h in history)
    # input, shout, answer, edit: at least four checkpoints, newest first.
    assert len(history) >= 4
    older = await client.threads.get_history(tid, limit=1, before=history[0]["checkpoint"])
    assert [h["checkpoint"]["checkpoint_id"] for h in older] == [
        history[1]["checkpoint"]["checkpoint_id"]
    ]
    at = await client.threads.get_state(tid, checkpoint_id=first_checkpoint)
    assert at["values"]["reply"] == "Version two heard you."
