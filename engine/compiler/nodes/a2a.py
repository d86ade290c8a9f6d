"""``a2a``: send a message to a remote A2A agent and follow its task to the end.

The flow of one step (docs/a2a.md):

1. The remote task id is looked up in the run's tool-result store under a key
   of this step (:func:`plait.engine.tools.idempotency.tool_call_key`). Without one,
   the message is sent (streaming) and the task id is recorded as soon as the
   first event names it, before anything can park the run; with one, the step
   continues that task instead of sending the message again (a resumed run,
   or a worker that died mid-step).
2. Every update the remote streams becomes a custom event
   ``{"plait": "a2a", ...}`` on the run's stream.
3. ``TASK_STATE_INPUT_REQUIRED`` becomes a Plait approval (an ``interrupt()``
   with the payload the approvals inbox lists). The decision is sent to the
   remote task as the follow-up message: a data part with the decision
   object and a text part with the decision word. Each follow-up is recorded
   under its own key *before* it is sent, so a re-run never sends it twice.
   LangGraph re-runs the node from its start on resume, and its ``interrupt()``
   calls return the earlier answers in order, so the replay consumes them.
4. ``TASK_STATE_COMPLETED`` ends the step with the task as the result; a
   failed, rejected or cancelled task fails it.
5. When the step is cancelled (the run was cancelled, or the node timed out)
   while the remote task is live, the remote task is cancelled too (shielded).

Each turn (the message, then each decision sent back) has two records under
the step's key: what was sent (``<key>:<turn>``: the task id, or the decision),
written before it is sent; and what the remote answered (``<key>:<turn>:reply``:
the task once it finished or waited for input, :func:`task_json`). Both carry
the node's path among subgraphs (``path`` beside the message in their ``args``:
``engine/observability/node_path.py``), so a node inside a ``subgraph`` or a map
item's subgraph is told apart from a node of the same id elsewhere. ``plait
record`` reads both, and ``plait replay`` plays the answers back: with a
cassette in play (``engine/tools/cassette.py``) the node talks to
:class:`_Replayed` instead of the agent, so nothing is sent and no header secret
is read, and the same steps above run on the recorded tasks.

Everything stored in state is plain JSON (``MessageToDict``), never protobuf.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
import pydantic
from a2a.client import ClientConfig, create_client
from a2a.client.card_resolver import parse_agent_card
from a2a.client.client import Client
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value
from langgraph.types import interrupt

from plait.engine.compiler.context import CompileContext, Expr, Scope
from plait.engine.compiler.nodes.base import Compute
from plait.engine.errors import NodeError
from plait.engine.governance.audit import run_id_of
from plait.engine.governance.secrets import redact, resolve, source_of
from plait.engine.observability import tracing
from plait.engine.observability.emit import emit
from plait.engine.observability.node_path import node_path
from plait.engine.spec.models import A2aNode, Decision, duration_seconds
from plait.engine.store.tool_results import RecordedResult
from plait.engine.tools.cassette import Cassette, current_cassette
from plait.engine.tools.idempotency import store_from, tool_call_key

log = logging.getLogger(__name__)

#: Default timeout of one HTTP request to the agent.
DEFAULT_REQUEST_TIMEOUT = 60.0
#: How long cancelling the remote task may take when the step is cancelled.
CANCEL_TIMEOUT = 10.0
#: Between reads of a remote task that offers no stream to follow.
POLL_SECONDS = 1.0
#: Message ids are derived from the step's key, so a server may recognise a resend.
_MESSAGE_NAMESPACE = uuid.UUID("a2a0c0de-7d2b-5b1e-9f4e-706c61697406")

TERMINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
#: States in which the remote waits for us.
WAITING = frozenset({TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED})


# --------------------------------------------------------------------------- pure parts


def state_name(state: int) -> str:
    """``TASK_STATE_COMPLETED`` for the enum value (what the wire and the docs say)."""
    return str(TaskState.Name(state))


def parts_text(parts: Any) -> str:
    """The text parts of ``parts``, joined by newlines."""
    return "\n".join(part.text for part in parts if part.HasField("text"))


def parts_data(parts: Any) -> list[Any]:
    """The data parts of ``parts`` as JSON values."""
    return [MessageToDict(part.data) for part in parts if part.HasField("data")]


def task_result(task: Task) -> dict[str, Any]:
    """The node's result for a finished task: ids, state, text, data and the raw artifacts.

    ``text`` joins the text parts of every artifact; ``data`` is the first
    data part of the artifacts (``None`` without one), the usual place a
    structured reply sits.
    """
    texts = [parts_text(artifact.parts) for artifact in task.artifacts]
    data = [item for artifact in task.artifacts for item in parts_data(artifact.parts)]
    return {
        "task_id": task.id,
        "context_id": task.context_id,
        "state": state_name(task.status.state),
        "text": "\n".join(text for text in texts if text),
        "data": data[0] if data else None,
        "artifacts": [MessageToDict(artifact) for artifact in task.artifacts],
    }


def task_json(task: Task) -> dict[str, Any]:
    """``task`` as A2A's JSON without its history: how a remote's answer is recorded."""
    kept = Task()
    kept.CopyFrom(task)
    kept.ClearField("history")  # the node never reads it, and it repeats every turn
    return dict(MessageToDict(kept))


def approval_payload(node_id: str, agent: str, task: Task) -> dict[str, Any]:
    """The interrupt payload of a remote ``input-required``: what the approvals inbox lists.

    ``arguments`` carries the remote's question (its data parts) and the task
    ids; ``reason`` is the remote's status text, so a person reads what the
    remote asked.
    """
    status_message = task.status.message if task.status.HasField("message") else None
    text = parts_text(status_message.parts) if status_message is not None else ""
    data = parts_data(status_message.parts) if status_message is not None else []
    return {
        "kind": "approval",
        "node": node_id,
        "action": f"reply to {agent}",
        "arguments": {
            "task_id": task.id,
            "context_id": task.context_id,
            "state": state_name(task.status.state),
            "question": data[0] if len(data) == 1 else (data or None),
        },
        "reason": text or f"the remote agent {agent} asks for input",
        "expires_at": None,
        "on_expire": "reject",
    }


def decision_parts(decision: Decision) -> list[Part]:
    """The follow-up message of a decision: the decision object, and its word as text.

    A Plait remote reads the data part; other agents usually read the text.
    """
    word = decision.decision if not decision.comment else f"{decision.decision}: {decision.comment}"
    return [
        Part(data=ParseDict(decision.model_dump(exclude_none=True), Value())),
        Part(text=word),
    ]


def message_id(key: str | None, turn: int) -> str:
    """A message id stable across re-runs of the step (random without a key)."""
    if key is None:
        return str(uuid.uuid4())
    return str(uuid.uuid5(_MESSAGE_NAMESPACE, f"{key}:{turn}"))


def event_of(node_id: str, response: StreamResponse) -> tuple[dict[str, Any], Task | None]:
    """The custom event for one streamed response, and the task it carries (if any)."""
    event: dict[str, Any] = {"plait": "a2a", "node": node_id}
    kind = response.WhichOneof("payload")
    task: Task | None = None
    if kind == "task":
        task = response.task
        event.update(task_id=task.id, state=state_name(task.status.state))
    elif kind == "status_update":
        update = response.status_update
        event.update(task_id=update.task_id, state=state_name(update.status.state))
        if update.status.HasField("message"):
            event["text"] = parts_text(update.status.message.parts)
            data = parts_data(update.status.message.parts)
            if data:
                event["data"] = data
    elif kind == "artifact_update":
        chunk = response.artifact_update
        event.update(
            task_id=chunk.task_id,
            artifact=chunk.artifact.name or chunk.artifact.artifact_id,
            text=parts_text(chunk.artifact.parts),
        )
    elif kind == "message":
        event.update(text=parts_text(response.message.parts))
    event["kind"] = kind
    return event, task


# --------------------------------------------------------------------------- the step


#: Records the remote task's id and context id as soon as the first answer names them.
_RecordTask = Callable[[str, str], Awaitable[None]]


class _Remote(Protocol):
    """The agent as one step talks to it: over the network, or as a replay recorded it.

    Each call returns the remote task once settled: finished (read back whole when
    completed) or waiting for input.
    """

    async def begin(self, message: Message, record_task: _RecordTask) -> Task:
        """Send the step's first message."""
        ...

    async def current(self, task_id: str) -> Task:
        """The task as the remote holds it now (a re-run of the step)."""
        ...

    async def reply(self, task: Task, decision: Decision, message: Message) -> Task:
        """Send ``message``, the follow-up that answers ``task`` with ``decision``."""
        ...

    async def cancel(self) -> None:
        """Cancel the remote task if it is live (the step is being cancelled)."""
        ...

    async def close(self) -> None:
        """Release the connection."""
        ...


@dataclass
class _Live:
    """The agent over HTTP (a2a-sdk's client), and what the step knows of its task."""

    node_id: str
    client: Client
    task: Task | None = None

    async def begin(self, message: Message, record_task: _RecordTask) -> Task:
        """Send the step's first message; record the task id as soon as it is named."""
        await _stream(self, self.client.send_message(_request(message)), record_task)
        return await self._settled()

    async def current(self, task_id: str) -> Task:
        """Read the task, and follow it until it settles."""
        self.task = await self.client.get_task(GetTaskRequest(id=task_id))
        return await self._settled()

    async def reply(self, task: Task, decision: Decision, message: Message) -> Task:
        """Send the follow-up, and follow the task until it settles."""
        await _stream(self, self.client.send_message(_request(message)))
        return await self._settled()

    async def cancel(self) -> None:
        """Cancel the remote task (shielded from the cancellation that got us here)."""
        await _cancel_remote(self)

    async def close(self) -> None:
        """Close the client."""
        await self.client.close()

    async def _settled(self) -> Task:
        task = await _settled(self)
        if task.status.state == TaskState.TASK_STATE_COMPLETED:
            # Read back whole: streamed artifact chunks may have been partial.
            task = self.task = await self.client.get_task(GetTaskRequest(id=task.id))
        return task


@dataclass
class _Replayed:
    """The agent as a replay's recording holds it (``plait replay``): nothing is sent.

    Each answer is the recorded task of that turn, announced as one custom event
    (the live stream's updates in between were not recorded). The recording is
    asked by the node's path (``where``), which a divergence names.
    """

    node_id: str
    where: str
    cassette: Cassette
    args: dict[str, Any]

    async def begin(self, message: Message, record_task: _RecordTask) -> Task:
        """The recorded answer to the same first message (:class:`Diverged` without one)."""
        task = self._announced(self.cassette.a2a_message(self.where, self.args))
        await record_task(task.id, task.context_id)
        return task

    async def current(self, task_id: str) -> Task:
        """The last recorded answer this replay gave for the task."""
        return _task_of(self.cassette.a2a_task(task_id))

    async def reply(self, task: Task, decision: Decision, message: Message) -> Task:
        """The recorded answer to the same decision (:class:`Diverged` without one)."""
        sent = decision.model_dump(exclude_none=True)
        return self._announced(self.cassette.a2a_follow_up(self.where, task.id, sent))

    async def cancel(self) -> None:
        """Nothing is live: a recorded task has settled."""

    async def close(self) -> None:
        """Nothing is open."""

    def _announced(self, recorded: Mapping[str, Any]) -> Task:
        task = _task_of(recorded)
        emit(event_of(self.node_id, StreamResponse(task=task))[0])
        return task


def _task_of(recorded: Mapping[str, Any]) -> Task:
    return ParseDict(dict(recorded), Task(), ignore_unknown_fields=True)


def build(node_id: str, node: A2aNode, ctx: CompileContext) -> Compute:
    """The ``a2a`` node's work: the result is the finished remote task (:func:`task_result`)."""
    data_expr = Expr(node.data) if node.data is not None else None
    request_timeout = (
        duration_seconds(node.request_timeout)
        if node.request_timeout is not None
        else DEFAULT_REQUEST_TIMEOUT
    )
    secret_names = sorted(set(node.headers.values()))

    async def compute(scope: Scope) -> Any:
        text = scope.render(node.message)
        data = scope.eval(data_expr) if data_expr is not None else None
        target = scope.render(node.url) if node.url is not None else None
        card_url = scope.render(node.card) if node.card is not None else None
        args = {"agent": target or card_url or "agent", "message": text, "data": data}
        where = node_path(node_id)
        cassette = current_cassette()
        # The span sees the error as raised below, with the secrets redacted.
        with tracing.agent_call(node_id, node=node_id, url=target or card_url):
            if cassette is not None:
                # A replay: the recorded answers were redacted when recorded, so the
                # headers' secrets are not needed (a replay needs no credentials).
                replayed = _Replayed(node_id, where, cassette, args)
                return await _follow(node_id, where, scope, args, {}, replayed)
            secrets = await resolve(source_of(scope.config), secret_names)
            headers = {header: secrets[name] for header, name in node.headers.items()}
            try:
                async with httpx.AsyncClient(headers=headers, timeout=request_timeout) as http:
                    remote = _Live(node_id, await _connect(http, target, card_url))
                    return await _follow(node_id, where, scope, args, secrets, remote)
            except NodeError:
                raise
            except (httpx.HTTPError, OSError) as exc:
                # From the card fetch (a2a-sdk's client wraps its own as A2AClientError).
                # Network trouble is transient: the node's retry policy may try again,
                # and the recorded task id makes the retry continue the same task.
                raise ConnectionError(redact(f"{type(exc).__name__}: {exc}", secrets)) from None

    return compute


async def _connect(http: httpx.AsyncClient, target: str | None, card_url: str | None) -> Client:
    config = ClientConfig(streaming=True, httpx_client=http)
    if card_url is not None:
        response = await http.get(card_url)
        response.raise_for_status()
        return await create_client(parse_agent_card(response.json()), client_config=config)
    assert target is not None  # lint: exactly one of url and card
    return await create_client(target.rstrip("/"), client_config=config)


async def _follow(
    node_id: str,
    where: str,
    scope: Scope,
    args: dict[str, Any],
    secrets: Mapping[str, str],
    remote: _Remote,
) -> dict[str, Any]:
    config = scope.config
    store = store_from(config)
    base_key = tool_call_key(config, ("a2a", 0), "a2a", args)
    run_id = run_id_of(config)
    thread_id = str((config.get("configurable") or {}).get("thread_id") or "")
    # Records found: a key's record never changes (the store keeps the first).
    found: dict[int, dict[str, Any]] = {}

    def key_of(turn: int) -> str | None:
        return None if base_key is None else f"{base_key}:{turn}"

    async def record(turn: int, value: dict[str, Any], *, reply: bool = False) -> None:
        """Record what was sent at ``turn`` (``reply``: what the remote answered to it)."""
        key = key_of(turn)
        if store is None or key is None:
            return
        await store.put(
            f"{key}:reply" if reply else key,
            RecordedResult.now(value),
            thread_id=thread_id,
            run_id=run_id,
            node=node_id,
            tool="a2a",
            args={**args, "path": where, "turn": turn, **({"reply": True} if reply else {})},
            path=where,
        )

    async def recorded(turn: int) -> dict[str, Any] | None:
        """What an execution of this step sent at ``turn``, if one did."""
        key = key_of(turn)
        if turn in found or store is None or key is None:
            return found.get(turn)
        record_found = await store.get(key)
        if record_found is not None:
            found[turn] = dict(record_found.value)
        return found.get(turn)

    async def answered(turn: int, task: Task) -> Task:
        """Record ``task`` as the remote's answer to ``turn`` (what a replay plays back)."""
        await record(turn, dict(redact(task_json(task), secrets)), reply=True)
        return task

    async def record_task(task_id: str, context_id: str) -> None:
        await record(0, {"task_id": task_id, "context_id": context_id})

    try:
        started = await recorded(0)
        if started is None:
            parts = [Part(text=args["message"])]
            if args["data"] is not None:
                parts.append(Part(data=ParseDict(args["data"], Value())))
            message = Message(role=Role.ROLE_USER, parts=parts, message_id=message_id(key_of(0), 0))
            task = await answered(0, await remote.begin(message, record_task))
        else:
            # The remote holds the answer to the last turn an earlier execution sent.
            last = 0
            while await recorded(last + 1) is not None:
                last += 1
            task = await answered(last, await remote.current(started["task_id"]))
        turn = 0
        while True:
            if task.status.state == TaskState.TASK_STATE_COMPLETED:
                return dict(redact(task_result(task), secrets))
            if task.status.state in TERMINAL:
                detail = (
                    parts_text(task.status.message.parts) if task.status.HasField("message") else ""
                )
                raise NodeError(
                    node_id,
                    redact(
                        f"the remote task {task.id} ended {state_name(task.status.state)}"
                        + (f": {detail}" if detail else ""),
                        secrets,
                    ),
                )
            turn += 1
            answer = interrupt(approval_payload(node_id, args["agent"], task))
            decision = _decision(node_id, answer)
            if await recorded(turn) is not None:
                # An earlier execution sent this answer: the remote has moved on.
                task = await remote.current(task.id)
                continue
            # Recorded before it is sent: a re-run never sends an answer twice.
            await record(turn, {"task_id": task.id, **decision.model_dump(exclude_none=True)})
            follow_up = Message(
                role=Role.ROLE_USER,
                parts=decision_parts(decision),
                task_id=task.id,
                context_id=task.context_id,
                message_id=message_id(key_of(turn), turn),
            )
            task = await answered(turn, await remote.reply(task, decision, follow_up))
    except asyncio.CancelledError:
        await remote.cancel()
        raise
    finally:
        with contextlib.suppress(Exception):
            await remote.close()


def _request(message: Message) -> SendMessageRequest:
    return SendMessageRequest(message=message)


def _decision(node_id: str, answer: Any) -> Decision:
    try:
        return Decision.model_validate(answer)
    except pydantic.ValidationError as exc:
        raise NodeError(
            node_id,
            f"invalid decision for the remote agent: expected {{decision: approve|reject|edit, "
            f"arguments?, comment?}}; {exc.errors()[0]['msg']}",
        ) from None


async def _stream(
    remote: _Live,
    responses: AsyncIterator[StreamResponse],
    record_task: _RecordTask | None = None,
) -> None:
    """Relay ``responses`` as custom events, keep the latest task, record its id once known."""
    node_id = remote.node_id
    known = remote.task.id if remote.task is not None else None
    try:
        async for response in responses:
            event, task = event_of(node_id, response)
            emit(event)
            task_id = task.id if task is not None else event.get("task_id")
            if task_id and known is None:
                known = task_id
                context_id = task.context_id if task is not None else _context_of(response)
                if record_task is not None:
                    await record_task(task_id, context_id)
            if task is not None:
                remote.task = task
            elif response.WhichOneof("payload") == "status_update":
                update = response.status_update
                if remote.task is None:
                    remote.task = Task(id=update.task_id, context_id=update.context_id)
                remote.task.status.CopyFrom(update.status)
            elif response.WhichOneof("payload") == "message":
                raise NodeError(
                    node_id,
                    "the remote agent answered with a message instead of a task; "
                    "the a2a node needs an agent that runs tasks",
                )
    finally:
        # Closes the HTTP stream when we stop early (an error, a cancellation).
        close = getattr(responses, "aclose", None)
        if close is not None:
            await close()


def _context_of(response: StreamResponse) -> str:
    kind = response.WhichOneof("payload")
    if kind == "status_update":
        return str(response.status_update.context_id)
    if kind == "artifact_update":
        return str(response.artifact_update.context_id)
    return ""


async def _settled(remote: _Live) -> Task:
    """The task once it is finished or waits for input (following it while it works)."""
    if remote.task is None:
        raise NodeError(remote.node_id, "the remote agent named no task")
    while remote.task.status.state not in TERMINAL | WAITING:
        task_id = remote.task.id
        try:
            await _stream(remote, remote.client.subscribe(SubscribeToTaskRequest(id=task_id)))
        except A2AError as exc:
            # No live stream to join (the remote restarted, finished meanwhile so it
            # refuses a subscription, or does not offer one): wait a moment and read
            # the task (a bounded poll of another system).
            log.info("cannot subscribe to remote task %s (%s); polling it", task_id, exc)
            await asyncio.sleep(POLL_SECONDS)
        # The stream may end without the final state: read it.
        remote.task = await remote.client.get_task(GetTaskRequest(id=task_id))
    return remote.task


async def _cancel_remote(remote: _Live) -> None:
    """Cancel the remote task (shielded from the cancellation that got us here)."""
    task = remote.task
    if task is None or task.status.state in TERMINAL:
        return

    async def cancel() -> None:
        async with asyncio.timeout(CANCEL_TIMEOUT):
            await remote.client.cancel_task(CancelTaskRequest(id=task.id))

    try:
        await asyncio.shield(cancel())
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the step is going away anyway: say why the remote lives on
        log.warning("could not cancel remote A2A task %s: %s", task.id, exc)
