"""A task's questions (``input_required``) and status news, as the hub's sessions receive them.

Questions become approvals: a 2026-07-28 task lists them in ``tasks/get``
(``inputRequests``, see :func:`asked_in_task`) and takes the answers with
``tasks/update``. A 2025-11-25 server whose task needs input sends ``elicitation/create`` tagged
with the task (``_meta["io.modelcontextprotocol/related-task"]``) over the
session that waits on ``tasks/result``, and waits for the answer. Plait's hub
sessions take such a request with :meth:`TaskQuestions.on_elicit` and keep it
open (the JSON-RPC request stays pending on the session); the node waiting
for the task turns it into a Plait approval (:func:`approval_payload`), its
run ends, and the re-run that carries the decision answers the question
(:func:`elicit_result`) on the same session, then waits on.

A server's ``notifications/tasks/status`` (and a question) wake whoever polls
the task (:meth:`TaskQuestions.news`), so a server that sends them is not
waited on for a whole poll interval; without them the poll interval rules.

Everything here runs on the hub loop (``engine/tools/mcp/hub.py``): the
questions and their answers are futures of that loop. A question lives in the
process whose session received it; a decision resumed in another process
finds none and fails the step (see :func:`plait.engine.tools.mcp.tool`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from mcp.client.session import ClientRequestContext
from mcp_types import (
    INVALID_REQUEST,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    TaskStatusNotificationParams,
)
from pydantic import ValidationError

from plait.engine.spec.models import Decision
from plait.engine.tools.mcp.task_protocol import RELATED_TASK


@dataclass
class Asked:
    """A task's form question; ``number`` counts the task's questions."""

    task_id: str
    number: int
    message: str
    schema: dict[str, Any]


@dataclass
class Question(Asked):
    """One pending ``elicitation/create`` of a task (2025-11-25), held until answered."""

    answer: asyncio.Future[ElicitResult] = field(repr=False)


def asked_in_task(task_id: str, number: int, request: dict[str, Any]) -> Asked:
    """A question of a 2026-07-28 task's ``inputRequests`` (an ``elicitation/create``).

    Raises ``ValueError`` for what a person cannot answer on a form (sampling,
    roots, a URL to visit).
    """
    params = request.get("params") or {}
    if request.get("method") != "elicitation/create" or params.get("mode", "form") != "form":
        what = request.get("method") if request.get("method") != "elicitation/create" else "a URL"
        raise ValueError(f"MCP task {task_id} asks for {what}, which Plait does not answer")
    return Asked(
        task_id, number, str(params.get("message") or ""), dict(params.get("requestedSchema") or {})
    )


class TaskQuestions:
    """The questions servers asked about tasks this process waits for (on the hub loop)."""

    def __init__(self) -> None:
        self._pending: dict[str, Question] = {}
        self._asked: dict[str, int] = {}
        self._news: dict[str, asyncio.Event] = {}

    async def on_elicit(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        """The sessions' ``elicitation_callback``: hold a task's question until it is answered."""
        related = (context.meta or {}).get(RELATED_TASK)
        task_id = related.get("taskId") if isinstance(related, dict) else None
        if not isinstance(task_id, str) or not isinstance(params, ElicitRequestFormParams):
            # No run waits for an untied question, and a URL to visit has no answer to relay.
            return ErrorData(
                code=INVALID_REQUEST,
                message="Plait answers only form questions about a task it waits for",
            )
        number = self._asked.get(task_id, 0) + 1
        self._asked[task_id] = number
        question = Question(
            task_id,
            number,
            params.message,
            dict(params.requested_schema),
            asyncio.get_running_loop().create_future(),
        )
        self._pending[task_id] = question
        self.news(task_id).set()
        try:
            return await question.answer
        finally:
            if self._pending.get(task_id) is question:
                del self._pending[task_id]

    def news(self, task_id: str) -> asyncio.Event:
        """Set when the task's status changes or it asks a question (cleared by its poller)."""
        return self._news.setdefault(task_id, asyncio.Event())

    async def on_status(self, params: TaskStatusNotificationParams) -> None:
        """``notifications/tasks/status``: wake the task's poller (only tasks someone waits for)."""
        found = self._news.get(params.task_id)
        if found is not None:
            found.set()

    def pending(self, task_id: str) -> Question | None:
        """The question about ``task_id`` waiting for an answer, if any."""
        return self._pending.get(task_id)

    def answer(self, question: Question, result: ElicitResult) -> bool:
        """Send ``result`` back for ``question``; ``False`` if it is no longer pending."""
        if self._pending.get(question.task_id) is not question or question.answer.done():
            return False
        del self._pending[question.task_id]
        question.answer.set_result(result)
        return True

    def forget(self, task_id: str) -> None:
        """The task ended or was cancelled: a question still open is cancelled."""
        question = self._pending.pop(task_id, None)
        if question is not None and not question.answer.done():
            question.answer.set_result(ElicitResult(action="cancel"))
        self._news.pop(task_id, None)
        self._asked.pop(task_id, None)


#: The process's questions (the hub's sessions report to it).
QUESTIONS = TaskQuestions()


def _skeleton(schema: dict[str, Any]) -> dict[str, Any]:
    """The answer a person edits: each asked field with its default (or null)."""
    properties = schema.get("properties") or {}
    return {name: (spec or {}).get("default") for name, spec in properties.items()}


def _choices(spec: dict[str, Any]) -> list[str]:
    """A field's allowed values as a person reads them (``enum``, or titled ``oneOf`` consts)."""
    if isinstance(spec.get("enum"), list):
        return [json.dumps(value) for value in spec["enum"]]
    options = spec.get("oneOf") or spec.get("anyOf") or []
    return [
        json.dumps(option["const"]) + (f" ({option['title']})" if option.get("title") else "")
        for option in options
        if isinstance(option, dict) and "const" in option
    ]


def _fields_text(schema: dict[str, Any]) -> str:
    """What the question asks for, field by field (the approval card shows only text)."""
    required = set(schema.get("required") or [])
    parts = []
    for name, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        said = spec.get("description") or spec.get("title") or ""
        text = f"{name}{' (required)' if name in required else ''}" + (f": {said}" if said else "")
        choices = _choices(spec)
        parts.append(text + (f" One of {', '.join(choices)}." if choices else ""))
    return "; ".join(parts)


def approval_payload(node: str, server: str, tool: str, question: Asked) -> dict[str, Any]:
    """The approval a person sees for a task's question (the inbox lists ``kind: approval``).

    ``arguments`` is the answer to edit (the asked fields); ``question`` carries
    the server's message and schema; ``reason`` is the message and, since a
    person answers by editing the arguments, what each field takes.
    """
    fields = _fields_text(question.schema)
    return {
        "kind": "approval",
        "node": node,
        "action": f"answer {server}.{tool}",
        "arguments": _skeleton(question.schema),
        "reason": f"{question.message} Edit the arguments to answer: {fields}"
        if fields
        else question.message,
        "question": {
            "task_id": question.task_id,
            "number": question.number,
            "message": question.message,
            "schema": question.schema,
        },
        "expires_at": None,
        "on_expire": "reject",
    }


def elicit_result(answer: Any, question: Asked) -> ElicitResult:
    """The server's answer to ``question`` for a person's decision.

    ``edit`` accepts with the edited fields as the content, ``approve``
    accepts the fields as offered (their defaults), ``reject`` declines.
    """
    try:
        decision = Decision.model_validate(answer)
    except ValidationError as exc:
        raise ValueError(f"invalid decision on a task's question: {exc}") from None
    if decision.decision == "reject":
        return ElicitResult(action="decline")
    fields = decision.arguments if decision.decision == "edit" else _skeleton(question.schema)
    content = {key: value for key, value in (fields or {}).items() if value is not None}
    return ElicitResult(action="accept", content=content)
