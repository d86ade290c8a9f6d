"""Which task protocol a server gets, when a tool runs as a task, and what a decision answers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp.client.session import ClientRequestContext
from mcp_types import (
    ElicitRequestFormParams,
    ElicitResult,
    ErrorData,
    GetTaskResult,
    ServerCapabilities,
    Tool,
    ToolExecution,
)

from plait.engine.tools.mcp.core_tasks import _FETCHING, QuestionLost, wait_core
from plait.engine.tools.mcp.task_protocol import RELATED_TASK, protocol_of
from plait.engine.tools.mcp.task_questions import (
    Question,
    TaskQuestions,
    approval_payload,
    elicit_result,
)
from plait.engine.tools.mcp.tool import runs_as_task

SCHEMA = {
    "type": "object",
    "properties": {
        "interpretation": {"type": "string"},
        "depth": {"type": "integer", "default": 2},
    },
    "required": ["interpretation"],
}


def capabilities(tasks: dict[str, Any] | None) -> ServerCapabilities:
    return ServerCapabilities.model_validate({"tools": {}, **({"tasks": tasks} if tasks else {})})


def tool(support: str | None) -> Tool:
    execution = ToolExecution(task_support=support) if support else None  # type: ignore[arg-type]
    return Tool(name="research", input_schema={"type": "object"}, execution=execution)


def question() -> Question:
    """A pending question (call inside a running loop)."""
    return Question("t-1", 1, "Which one?", SCHEMA, asyncio.get_running_loop().create_future())


def test_a_server_announcing_task_augmented_tool_calls_gets_the_core_protocol() -> None:
    assert protocol_of(capabilities({"requests": {"tools": {"call": {}}}, "cancel": {}})) == "core"


@pytest.mark.parametrize(
    "tasks", [None, {"list": {}, "cancel": {}}, {"requests": {}}, {"requests": {"tools": {}}}]
)
def test_any_other_server_gets_the_extension(tasks: dict[str, Any] | None) -> None:
    assert protocol_of(capabilities(tasks)) == "extension"


def test_a_required_task_tool_runs_as_a_task_whatever_the_spec_says() -> None:
    assert runs_as_task("research", False, tool("required"), "core") is True


@pytest.mark.parametrize("wanted", [True, False])
def test_an_optional_task_tool_follows_the_spec(wanted: bool) -> None:
    assert runs_as_task("research", wanted, tool("optional"), "core") is wanted


@pytest.mark.parametrize("support", ["forbidden", None])
def test_task_true_on_a_tool_without_task_support_is_refused(support: str | None) -> None:
    with pytest.raises(ValueError, match=r"taskSupport is forbidden\); remove task: true"):
        runs_as_task("research", True, tool(support), "core")
    assert runs_as_task("research", False, tool(support), "core") is False


def test_the_extension_follows_the_spec_only() -> None:
    assert runs_as_task("research", True, tool(None), "extension") is True
    assert runs_as_task("research", False, tool("required"), "extension") is False


async def test_the_approval_shows_the_question_and_offers_its_fields_to_edit() -> None:
    payload = approval_payload("research", "everything", "simulate-research-query", question())
    assert payload["kind"] == "approval"
    assert payload["action"] == "answer everything.simulate-research-query"
    assert payload["reason"] == (
        "Which one? Edit the arguments to answer: interpretation (required); depth"
    )
    assert payload["arguments"] == {"interpretation": None, "depth": 2}
    assert payload["question"]["schema"] == SCHEMA


async def test_the_reason_names_each_fields_choices() -> None:
    schema = {
        "type": "object",
        "properties": {
            "size": {"type": "string", "description": "How big?", "enum": ["s", "m"]},
            "tone": {"oneOf": [{"const": "dry", "title": "Dry"}, {"const": "warm"}]},
        },
    }
    asked = Question("t-2", 1, "Pick.", schema, asyncio.get_running_loop().create_future())
    payload = approval_payload("n", "srv", "tool", asked)
    assert payload["reason"] == (
        'Pick. Edit the arguments to answer: size: How big? One of "s", "m".; '
        'tone One of "dry" (Dry), "warm".'
    )


async def test_decisions_become_the_servers_answer() -> None:
    asked = question()
    edited = elicit_result({"decision": "edit", "arguments": {"interpretation": "snake"}}, asked)
    assert edited == ElicitResult(action="accept", content={"interpretation": "snake"})
    approved = elicit_result({"decision": "approve"}, asked)
    assert approved == ElicitResult(action="accept", content={"depth": 2})
    assert elicit_result({"decision": "reject"}, asked) == ElicitResult(action="decline")
    with pytest.raises(ValueError, match="invalid decision"):
        elicit_result({"decision": "maybe"}, asked)


async def test_a_question_about_a_task_is_held_until_answered() -> None:
    questions = TaskQuestions()
    params = ElicitRequestFormParams(message="Which one?", requested_schema=SCHEMA)
    context = ClientRequestContext(
        session=None,  # type: ignore[arg-type]
        request_id=1,
        meta={RELATED_TASK: {"taskId": "t-1"}},  # type: ignore[arg-type]
    )
    news = questions.news("t-1")
    asked = asyncio.create_task(questions.on_elicit(context, params))
    await news.wait()
    pending = questions.pending("t-1")
    assert pending is not None and pending.number == 1 and pending.message == "Which one?"
    assert questions.answer(pending, ElicitResult(action="decline")) is True
    assert await asked == ElicitResult(action="decline")
    assert questions.pending("t-1") is None
    assert questions.answer(pending, ElicitResult(action="decline")) is False


async def test_a_question_about_no_task_is_refused() -> None:
    questions = TaskQuestions()
    params = ElicitRequestFormParams(message="Name?", requested_schema=SCHEMA)
    context = ClientRequestContext(session=None, request_id=1)  # type: ignore[arg-type]
    refused = await questions.on_elicit(context, params)
    assert isinstance(refused, ErrorData)
    assert "only form questions about a task" in refused.message


class StuckServer:
    """A session whose task stays ``input_required`` and whose question never comes."""

    def __init__(self) -> None:
        self.results_asked = 0

    async def send_request(self, request: Any, result_type: Any) -> Any:
        if request.method == "tasks/get":
            return GetTaskResult(
                task_id="t-9",
                status="input_required",
                created_at="2026-12-02T00:00:00Z",
                last_updated_at="2026-12-02T00:00:00Z",
                ttl=None,
                poll_interval=10,
            )
        assert request.method == "tasks/result"
        self.results_asked += 1
        await asyncio.Event().wait()  # the question went to a session that is gone


async def test_a_question_that_never_reaches_this_process_fails_the_wait() -> None:
    stuck = StuckServer()
    with pytest.raises(QuestionLost, match="waits for input"):
        await wait_core(stuck, "t-9", 0.01, grace=0.2)  # type: ignore[arg-type]
    # tasks/result was asked once (the question travels on it), and is dropped now.
    assert stuck.results_asked == 1
    assert "t-9" not in _FETCHING
