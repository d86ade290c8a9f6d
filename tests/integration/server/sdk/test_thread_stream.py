"""The thread streaming protocol of ``@langchain/langgraph-sdk`` 1.15 over HTTP:
``POST /threads/{id}/commands`` and ``POST /threads/{id}/stream/events``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

import httpx
import pytest
from langgraph_sdk.sse import SSEDecoder, aiter_lines_raw

from tests.integration.server.harness import Cluster

REPLY = "Version two heard you."
REFUND = {"order_id": "A-1002", "amount": 180.0, "reason": "Item arrived broken"}
Event = dict[str, Any]


@pytest.fixture
async def http(sdk_server: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=sdk_server.url, timeout=60.0) as opened:
        yield opened


async def send(
    http: httpx.AsyncClient, tid: str, method: str, params: dict[str, Any], status: int = 200
) -> dict[str, Any]:
    response = await http.post(
        f"/threads/{tid}/commands", json={"id": 7, "method": method, "params": params}
    )
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    return body


class EventReader:
    """Protocol events of one open stream, read in pieces."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = aiter_lines_raw(response)
        self._decoder = SSEDecoder()

    async def until(self, accept: Callable[[Event], bool]) -> list[Event]:
        """The events up to and with the first one ``accept`` accepts."""
        events: list[Event] = []
        async for line in self._lines:
            part = self._decoder.decode(cast(bytes, line).rstrip(b"\n"))
            if part is None or part.data is None:
                continue
            events.append(part.data)
            if accept(part.data):
                return events
        raise AssertionError(f"the stream ended early: {events}")


def terminal(event: Event) -> bool:
    return (
        event["method"] == "lifecycle"
        and not event["params"]["namespace"]
        and event["params"]["data"]["event"] in ("completed", "failed", "interrupted")
    )


def of(events: list[Event], method: str) -> list[Any]:
    return [event["params"]["data"] for event in events if event["method"] == method]


async def test_start_a_run_and_follow_its_events_then_replay_since(
    http: httpx.AsyncClient,
) -> None:
    tid = str(uuid.uuid4())  # a thread the client names: created by run.start
    started = await send(
        http, tid, "run.start", {"assistant_id": "sdk-echo", "input": {"text": "hello"}}
    )
    assert started["type"] == "success" and started["id"] == 7
    run_id = started["result"]["run_id"]
    channels = ["lifecycle", "values", "updates", "messages"]
    async with http.stream(
        "POST", f"/threads/{tid}/stream/events", json={"channels": channels}
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = await EventReader(response).until(terminal)

    assert all(event["type"] == "event" for event in events)
    seqs = [event["seq"] for event in events]
    assert seqs == sorted(seqs)
    assert len({event["event_id"] for event in events}) == len(events)
    lifecycle = of(events, "lifecycle")
    assert [item["event"] for item in lifecycle] == ["started", "completed"]
    assert lifecycle[0]["graph_name"] == "sdk-echo"
    assert of(events, "values")[-1] == {"text": "hello", "shouted": "HELLO", "reply": REPLY}
    assert [update["node"] for update in of(events, "updates")] == ["shout", "answer"]
    messages = of(events, "messages")
    kinds = [item["event"] for item in messages]
    assert kinds[:2] == ["message-start", "content-block-start"]
    assert kinds[-2:] == ["content-block-finish", "message-finish"]
    assert messages[0]["role"] == "ai"
    deltas = [item["delta"]["text"] for item in messages if item["event"] == "content-block-delta"]
    assert len(deltas) > 1 and "".join(deltas) == REPLY
    assert messages[-2]["content"] == {"type": "text", "text": REPLY}
    assert {event["params"].get("node") for event in events if event["method"] == "messages"} == {
        "answer"
    }
    assert (await http.get(f"/threads/{tid}/runs/{run_id}")).json()["status"] == "success"

    # Replay from a seq: exactly the events after it (a reconnecting client).
    cut = next(i for i, event in enumerate(events) if event["method"] == "updates")
    async with http.stream(
        "POST",
        f"/threads/{tid}/stream/events",
        json={"channels": channels, "since": events[cut]["seq"]},
    ) as response:
        replay = await EventReader(response).until(terminal)
    after = [e["event_id"] for e in events if e["seq"] > events[cut]["seq"]]
    assert [event["event_id"] for event in replay] == after


async def test_an_interrupt_is_requested_and_answered_on_one_stream(
    http: httpx.AsyncClient,
) -> None:
    tid = str(uuid.uuid4())
    await send(http, tid, "run.start", {"assistant_id": "refund-approval", "input": REFUND})
    async with http.stream(
        "POST", f"/threads/{tid}/stream/events", json={"channels": ["lifecycle", "input"]}
    ) as response:
        reader = EventReader(response)
        first = await reader.until(terminal)
        (requested,) = of(first, "input.requested")
        assert requested["payload"]["action"] == "issue_refund"
        assert of(first, "lifecycle")[-1]["event"] == "interrupted"

        wrong = await send(
            http,
            tid,
            "input.respond",
            {"namespace": [], "interrupt_id": "nope", "response": {"decision": "approve"}},
            status=404,
        )
        assert wrong["error"] == "no_such_interrupt" and "nope" in wrong["message"]
        answered = await send(
            http,
            tid,
            "input.respond",
            {
                "namespace": [],
                "interrupt_id": requested["interrupt_id"],
                "response": {"decision": "approve", "comment": "photos confirm it"},
            },
        )
        assert answered["type"] == "success"
        # The same connection follows the thread into the resumed run.
        second = await reader.until(terminal)
    assert [item["event"] for item in of(second, "lifecycle")] == ["started", "completed"]
    assert min(e["seq"] for e in second) > max(e["seq"] for e in first)

    state = await send(http, tid, "state.get", {"namespace": [], "keys": ["refund"]})
    assert state["result"]["values"]["refund"]["status"] == "issued"
    assert set(state["result"]["values"]) == {"refund"}
    assert state["result"]["checkpoint"]["id"]


async def test_run_start_on_an_interrupted_thread_resumes_it(http: httpx.AsyncClient) -> None:
    tid = str(uuid.uuid4())
    await send(http, tid, "run.start", {"assistant_id": "refund-approval", "input": REFUND})
    wait = await http.get(f"/threads/{tid}/runs/{(await _latest_run(http, tid))}/join")
    assert "__interrupt__" in wait.json()
    # A client loading the waiting thread sees the interrupt it waits on.
    async with http.stream(
        "POST", f"/threads/{tid}/stream/events", json={"channels": ["lifecycle", "input"]}
    ) as response:
        loaded = await EventReader(response).until(terminal)
    assert [item["payload"]["action"] for item in of(loaded, "input.requested")] == ["issue_refund"]
    await send(
        http,
        tid,
        "run.start",
        {"assistant_id": "refund-approval", "input": {"decision": "reject", "comment": "no"}},
    )
    done = (await http.get(f"/threads/{tid}/runs/{(await _latest_run(http, tid))}/join")).json()
    assert done["decision"]["decision"] == "reject"
    assert (await http.get(f"/threads/{tid}")).json()["status"] == "idle"


async def _latest_run(http: httpx.AsyncClient, tid: str) -> str:
    runs = (await http.get(f"/threads/{tid}/runs")).json()
    run_id: str = runs[0]["run_id"]
    return run_id


async def test_refusals_are_problems_the_sdk_shows(http: httpx.AsyncClient) -> None:
    tid = str(uuid.uuid4())
    missing = await http.post(f"/threads/{tid}/stream/events", json={"channels": ["values"]})
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    unknown = await send(http, tid, "no.such", {}, status=422)
    assert unknown["error"] == "unknown_command" and unknown["id"] == 7
    unsupported = await send(http, tid, "agent.getTree", {}, status=422)
    assert unsupported["error"] == "not_supported"
    no_assistant = await send(http, tid, "run.start", {"input": {}}, status=422)
    assert no_assistant["error"] == "invalid_argument"
    wrong_assistant = await send(
        http, tid, "run.start", {"assistant_id": "no-such-graph", "input": {}}, status=404
    )
    assert "no-such-graph" in wrong_assistant["message"]
    assert (await send(http, tid, "state.get", {"namespace": []}, status=404))["message"]
    bad_input = await send(
        http, tid, "run.start", {"assistant_id": "sdk-echo", "input": {"txt": 1}}, status=422
    )
    assert bad_input["message"]


async def test_a_stream_opened_before_any_run_waits_for_the_first(
    http: httpx.AsyncClient,
) -> None:
    tid = (await http.post("/threads", json={})).json()["thread_id"]
    async with http.stream(
        "POST", f"/threads/{tid}/stream/events", json={"channels": ["lifecycle", "values"]}
    ) as response:
        assert response.status_code == 200
        await send(http, tid, "run.start", {"assistant_id": "sdk-echo", "input": {"text": "x"}})
        events = await EventReader(response).until(terminal)
    assert [item["event"] for item in of(events, "lifecycle")] == ["started", "completed"]
    assert of(events, "values")[-1]["reply"] == REPLY
