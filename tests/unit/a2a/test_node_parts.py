"""The ``a2a`` node's pure parts: results, approval payloads, follow-ups, stream events."""

from __future__ import annotations

from a2a.helpers import new_data_part, new_text_part
from a2a.types.a2a_pb2 import (
    Artifact,
    Message,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.json_format import MessageToDict

from plait.engine.compiler.nodes.a2a import (
    approval_payload,
    decision_parts,
    event_of,
    message_id,
    task_result,
)
from plait.engine.spec.models import Decision


def finished_task() -> Task:
    return Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED),
        artifacts=[
            Artifact(
                artifact_id="a-1",
                name="output",
                parts=[new_text_part("all done"), new_data_part({"verdict": "paid", "n": 2})],
            ),
            Artifact(artifact_id="a-2", parts=[new_text_part("and a note")]),
        ],
    )


def test_task_result_is_plain_json_with_text_and_the_first_data_part() -> None:
    result = task_result(finished_task())

    assert result["task_id"] == "t-1"
    assert result["context_id"] == "c-1"
    assert result["state"] == "TASK_STATE_COMPLETED"
    assert result["text"] == "all done\nand a note"
    assert result["data"] == {"verdict": "paid", "n": 2.0}
    assert [a["artifactId"] for a in result["artifacts"]] == ["a-1", "a-2"]


def test_a_task_without_data_parts_has_no_data() -> None:
    task = Task(id="t", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    assert task_result(task)["data"] is None
    assert task_result(task)["text"] == ""


def test_input_required_becomes_an_approval_the_inbox_lists() -> None:
    question = Message(
        role=Role.ROLE_AGENT,
        parts=[new_text_part("Pay 750?"), new_data_part({"amount": 750})],
    )
    task = Task(
        id="t-9",
        context_id="c-9",
        status=TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED, message=question),
    )

    payload = approval_payload("ask", "http://agents/pay", task)

    assert payload["kind"] == "approval"  # what plait.server.approvals records
    assert payload["node"] == "ask"
    assert payload["action"] == "reply to http://agents/pay"
    assert payload["reason"] == "Pay 750?"
    assert payload["arguments"] == {
        "task_id": "t-9",
        "context_id": "c-9",
        "state": "TASK_STATE_INPUT_REQUIRED",
        "question": {"amount": 750.0},
    }


def test_a_silent_input_required_still_gives_a_reason() -> None:
    task = Task(id="t", status=TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED))
    payload = approval_payload("ask", "agent", task)
    assert payload["reason"] == "the remote agent agent asks for input"
    assert payload["arguments"]["question"] is None


def test_a_decision_is_sent_as_data_and_as_its_word() -> None:
    parts = decision_parts(Decision(decision="reject", comment="too much"))
    data, text = parts
    assert MessageToDict(data.data) == {"decision": "reject", "comment": "too much"}
    assert text.text == "reject: too much"
    (plain,) = [p.text for p in decision_parts(Decision(decision="approve")) if p.text]
    assert plain == "approve"


def test_message_ids_are_stable_per_step_and_turn() -> None:
    assert message_id("k", 0) == message_id("k", 0)
    assert message_id("k", 0) != message_id("k", 1)
    assert message_id(None, 0) != message_id(None, 0)


def test_stream_events_name_the_task_and_its_state() -> None:
    status = StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t",
            context_id="c",
            status=TaskStatus(
                state=TaskState.TASK_STATE_WORKING,
                message=Message(parts=[new_text_part("thinking"), new_data_part({"step": 1})]),
            ),
        )
    )
    event, task = event_of("call", status)
    assert task is None
    assert event == {
        "plait": "a2a",
        "node": "call",
        "kind": "status_update",
        "task_id": "t",
        "state": "TASK_STATE_WORKING",
        "text": "thinking",
        "data": [{"step": 1.0}],
    }

    artifact = StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id="t", artifact=Artifact(artifact_id="a", name="out", parts=[new_text_part("x")])
        )
    )
    event, _ = event_of("call", artifact)
    assert (event["kind"], event["artifact"], event["text"]) == ("artifact_update", "out", "x")

    whole = StreamResponse(task=finished_task())
    event, task = event_of("call", whole)
    assert task is not None and task.id == "t-1"
    assert event["state"] == "TASK_STATE_COMPLETED"
