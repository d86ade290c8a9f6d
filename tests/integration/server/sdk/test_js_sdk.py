"""``@langchain/langgraph-sdk`` 1.15 (a devDependency) from node against ``plait serve``.

``js/sdk_client.mjs`` is a client as a front-end developer writes it; it
prints what each SDK call returned as one JSON object, checked here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.server.harness import Cluster

SCRIPT = Path(__file__).resolve().parent / "js" / "sdk_client.mjs"
REPO = Path(__file__).resolve().parents[4]
REPLY = "Version two heard you."


@pytest.fixture(scope="module")
def js_results(sdk_server: Cluster) -> dict[str, Any]:
    """What the script printed (it fails the test with its stderr when it fails)."""
    node = shutil.which("node")
    assert node, "node is not on PATH"
    assert (REPO / "node_modules" / "@langchain" / "langgraph-sdk").is_dir(), "run npm ci"
    done = subprocess.run(
        [node, str(SCRIPT), sdk_server.url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout)
    return results


def names(parts: list[dict[str, Any]]) -> list[str]:
    return [part["event"] for part in parts]


def data(parts: list[dict[str, Any]], event: str) -> list[Any]:
    return [part["data"] for part in parts if part["event"] == event]


def test_assistants_and_threads(js_results: dict[str, Any]) -> None:
    assert {a["graph_id"] for a in js_results["assistants"]} == {"sdk-echo"}
    assert js_results["thread"]["metadata"] == {"from": "js"}


def test_every_stream_mode_with_both_message_forms(js_results: dict[str, Any]) -> None:
    parts = js_results["stream"]
    assert names(parts)[0] == "metadata" and names(parts)[-1] == "end"
    assert set(names(parts)) == {
        "metadata",
        "values",
        "updates",
        "messages",
        "messages/metadata",
        "messages/partial",
        "end",
    }
    assert data(parts, "values")[-1]["reply"] == REPLY
    assert [next(iter(update)) for update in data(parts, "updates")] == ["shout", "answer"]
    # messages-tuple: [chunk, metadata] per token.
    tuples = data(parts, "messages")
    assert "".join(chunk["content"] for chunk, _ in tuples) == REPLY
    assert {meta["langgraph_node"] for _, meta in tuples} == {"answer"}
    # messages: the accumulated message, as LangGraph Platform sends it.
    assert data(parts, "messages/partial")[-1][0]["content"] == REPLY


def test_messages_mode_alone(js_results: dict[str, Any]) -> None:
    parts = js_results["messages_only"]
    assert names(parts)[1] == "messages/metadata"
    assert set(names(parts)[2:-1]) == {"messages/partial"}
    (metadata,) = data(parts, "messages/metadata")
    (message_id,) = metadata
    assert metadata[message_id]["metadata"]["langgraph_node"] == "answer"
    last = data(parts, "messages/partial")[-1]
    assert last[0]["id"] == message_id and last[0]["type"] == "ai"
    assert last[0]["content"] == REPLY


def test_rejoin_after_an_event_narrowed_to_updates(js_results: dict[str, Any]) -> None:
    parts = js_results["rejoin"]
    assert names(parts) == ["updates", "updates", "end"]
    assert [next(iter(update)) for update in data(parts, "updates")] == ["shout", "answer"]


def test_wait_and_state(js_results: dict[str, Any]) -> None:
    assert js_results["wait"] == {"text": "wait", "shouted": "WAIT", "reply": REPLY}
    assert js_results["state"] == {"values": js_results["wait"], "next": []}


def test_interrupt_resumed_with_command(js_results: dict[str, Any]) -> None:
    interrupt = js_results["interrupt"]
    (pending,) = interrupt["wait_interrupts"]
    assert pending["value"]["action"] == "issue_refund"
    assert interrupt["next"] == ["approve"]
    assert interrupt["thread_status"] == "interrupted"
    resumed = js_results["resumed"]
    assert resumed["decision"]["decision"] == "approve"
    assert resumed["decision"]["comment"] == "photos confirm it"
    assert resumed["refund"]["status"] == "issued"
    assert resumed["thread_status"] == "idle"


def test_thread_stream_runs_and_streams_messages(js_results: dict[str, Any]) -> None:
    chat = js_results["thread_stream"]
    assert chat["run_id"]
    assert chat["output"] == {"text": "protocol", "shouted": "PROTOCOL", "reply": REPLY}
    assert chat["texts"] == [REPLY]
    assert chat["interrupted"] is False
    assert chat["state"] == chat["output"]


def test_thread_stream_interrupt_answered_with_input_respond(js_results: dict[str, Any]) -> None:
    stopped = js_results["thread_interrupt"]
    assert stopped["interrupted"] is True
    assert stopped["payload"]["action"] == "issue_refund"
    resumed = js_results["thread_resumed"]
    assert resumed["refund"]["status"] == "issued"
    assert resumed["interrupted"] is False
    refused = js_results["thread_bad_respond"]
    assert refused["status"] == 404 and "no-such-interrupt" in refused["message"]


def test_thread_stream_chat_streams_the_reply_it_keeps(js_results: dict[str, Any]) -> None:
    chat = js_results["thread_chat"]
    (reply,) = chat["streamed"]
    assert reply["text"].startswith("Refunds up to 100 are issued at once")
    question, answer = chat["conversation"]
    assert question["type"] == "human" and question["content"] == "How do refunds work?"
    # The message the page streamed is the one the conversation keeps.
    assert answer == {"type": "ai", "id": reply["id"], "content": reply["text"]}


def test_thread_stream_messages_carry_an_agents_tool_calls(js_results: dict[str, Any]) -> None:
    calls = js_results["thread_tool_calls"]
    assert [(call["node"], call["name"]) for call in calls] == [
        ("executor", "estimate_tasks"),
        ("executor", "schedule"),
        ("executor", "schedule"),
    ]
    assert calls[1]["args"] == {"hours": [3.8, 2.5, 3.8, 1.5], "start": "2026-12-07"}
    assert calls[2]["args"]["buffer_days"] == 2
