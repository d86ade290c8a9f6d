"""``runs.stream`` in every stream mode: event names and payloads as the SDK expects."""

from __future__ import annotations

from langgraph_sdk.client import LangGraphClient

from tests.integration.server.sdk.helpers import collect, events_named

ECHO = "sdk-echo"
REPLY = "Version two heard you."


async def test_stream_every_mode(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    parts = await collect(
        client.runs.stream(
            thread["thread_id"],
            ECHO,
            input={"text": "hello"},
            stream_mode=["values", "updates", "messages-tuple", "custom", "debug"],
        )
    )
    names = [part.event for part in parts]
    assert names[0] == "metadata"
    run_id = parts[0].data["run_id"]
    assert parts[0].data.get("attempt") == 1
    assert names[-1] == "end"
    assert "error" not in names
    assert set(names) == {"metadata", "values", "updates", "messages", "custom", "debug", "end"}

    values = events_named(parts, "values")
    # The input before any node; unset state fields are None (their default).
    assert values[0] == {"text": "hello", "shouted": None, "reply": None}
    assert values[-1] == {"text": "hello", "shouted": "HELLO", "reply": REPLY}

    updates = events_named(parts, "updates")
    assert [next(iter(u)) for u in updates] == ["shout", "answer"]
    assert updates[0]["shout"]["shouted"] == "HELLO"
    assert updates[1]["answer"]["reply"] == REPLY

    assert {"shouting": "hello"} in events_named(parts, "custom")

    messages = events_named(parts, "messages")
    assert messages, "messages-tuple mode sent no messages"
    for pair in messages:
        chunk, metadata = pair
        assert metadata["langgraph_node"] == "answer"
        assert chunk["type"] in ("AIMessageChunk", "ai")
    assert "".join(chunk["content"] for chunk, _ in messages) == REPLY

    debug = events_named(parts, "debug")
    kinds = {item["type"] for item in debug}
    assert {"task", "task_result"} <= kinds, kinds
    tasks = [item["payload"]["name"] for item in debug if item["type"] == "task"]
    assert tasks == ["shout", "answer"]

    run = await client.runs.get(thread["thread_id"], run_id)
    assert run["status"] == "success"
    assert run["thread_id"] == thread["thread_id"]


async def test_stream_single_mode_and_stateless(client: LangGraphClient) -> None:
    parts = await collect(client.runs.stream(None, "sdk-echo", input={"text": "x"}))
    names = [part.event for part in parts]
    # The default stream mode is `values`.
    assert names[0] == "metadata" and names[-1] == "end"
    assert set(names[1:-1]) == {"values"}
    assert parts[-2].data == {"text": "x", "shouted": "X", "reply": REPLY}


async def test_failing_node_is_an_error_event(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    parts = await collect(
        client.runs.stream(
            thread["thread_id"],
            "refund-approval",
            input={"order_id": "NO-SUCH-ORDER", "amount": 5.0, "reason": "test"},
            stream_mode="updates",
        )
    )
    names = [part.event for part in parts]
    assert names[0] == "metadata"
    assert "error" in names
    error = events_named(parts, "error")[0]
    assert set(error) >= {"error", "message"}
    assert "NO-SUCH-ORDER" in error["message"]
    run = await client.runs.get(thread["thread_id"], parts[0].data["run_id"])
    assert run["status"] == "error"
    assert (await client.threads.get(thread["thread_id"]))["status"] == "error"


async def test_runs_wait_and_background_join(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    assert await client.runs.wait(tid, "sdk-echo", input={"text": "a"}) == {
        "text": "a",
        "shouted": "A",
        "reply": REPLY,
    }
    stateless = await client.runs.wait(None, "sdk-echo", input={"text": "b"})
    assert stateless == {"text": "b", "shouted": "B", "reply": REPLY}

    run = await client.runs.create(tid, "sdk-echo", input={"text": "c"})
    assert run["status"] in ("pending", "running", "success")
    assert run["thread_id"] == tid
    joined = await client.runs.join(tid, run["run_id"])
    assert joined == {"text": "c", "shouted": "C", "reply": REPLY}
    finished = await client.runs.get(tid, run["run_id"])
    assert finished["status"] == "success"
    listed = await client.runs.list(tid)
    assert run["run_id"] in [r["run_id"] for r in listed]
    assert len(listed) == 2


async def test_subgraph_events_are_namespaced(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    ticket = "I was charged twice for my invoice in November."
    parts = await collect(
        client.runs.stream(
            thread["thread_id"],
            "support-subgraph",
            input={"customer": "Maria", "ticket": ticket},
            stream_mode="updates",
            stream_subgraphs=True,
        )
    )
    names = [part.event for part in parts]
    assert names[-1] == "end"
    parent = [next(iter(p.data)) for p in parts if p.event == "updates"]
    assert parent == ["triage", "summarize", "reply"]
    child = [p for p in parts if p.event.startswith("updates|")]
    # `updates|<namespace>`: the namespace starts with the parent node that ran the subgraph.
    assert {p.event.split("|", 1)[1].split(":", 1)[0] for p in child} == {"summarize"}
    assert [next(iter(p.data)) for p in child] == ["clean", "summarize"]
