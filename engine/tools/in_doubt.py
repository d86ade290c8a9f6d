"""Calls of ``idempotent: false`` tools that began and never ended: settled, never repeated blindly.

Before such a call acts, the gateway records that it began (an intent under its
idempotency key, committed). A re-run of the step that finds the intent and no
recorded result cannot know whether the call acted: the worker may have died
after the effect and before the record. The call is *in doubt*, and
:func:`begin_call` settles it before anything runs again:

- the tool's ``reconcile`` function (``module:function(args, key)``) is asked.
  It returns ``{"happened": true, "result": ...}`` (the result is recorded and
  used, the tool is not called) or ``{"happened": false}`` (the call runs);
- otherwise the run parks on an approval: "this call may already have
  happened", with the tool, its arguments, the key and when it began.
  ``approve`` runs it again, ``reject`` fails the step (the run, in an agent:
  the model must not be told to try again), ``edit`` gives the result to use
  instead (its ``arguments`` are the result, recorded as the call's).

The approval's interrupt id is derived from the key and the attempt it is about
(not LangGraph's per-task counter), and the answer is read from the resume the
run was given. So an answer lets exactly one more attempt begin: if that
attempt dies too, the re-sent command of the same run finds an id of the
attempt before and asks again. Inside a ``map`` item, where interrupts are not
supported, a call in doubt without ``reconcile`` fails its item.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pydantic
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph._internal._constants import CONFIG_KEY_RESUME_MAP, CONFIG_KEY_SCRATCHPAD
from langgraph.errors import GraphInterrupt
from langgraph.types import Interrupt
from xxhash import xxh3_128_hexdigest

from plait.engine.governance.audit import audit, run_id_of
from plait.engine.governance.loops import StopsRun
from plait.engine.governance.retries import RETRYABLE, classify
from plait.engine.observability.emit import emit
from plait.engine.spec.expressions import to_plain
from plait.engine.spec.models import Decision
from plait.engine.store.tool_results import Intent
from plait.engine.tools.idempotency import ToolResultStore

#: ``tool.metadata`` key of a tool's reconcile function (``async (args, key) -> outcome``).
RECONCILE_KEY = "plait_reconcile"
REASON = "this call may already have happened"
#: Concurrent executions of one step racing to begin the same call: after this many
#: lost races the step fails (transient), and its retry looks again.
_BEGIN_TRIES = 3

Reconcile = Callable[[dict[str, Any], str], Awaitable[Any]]


class InDoubtRejected(StopsRun):
    """A person rejected running again a call that may already have happened."""

    def __init__(self, node: str, tool: str, comment: str | None) -> None:
        suffix = f": {comment}" if comment else ""
        super().__init__(
            node, f"the call of tool {tool!r} was in doubt and its re-run was rejected{suffix}"
        )
        self.tool = tool


class CallUnsettled(StopsRun):
    """A call in doubt that could not be settled (reconcile failed, no one can be asked)."""


@dataclass(frozen=True)
class Begun:
    """The call may run: its attempt was recorded as begun."""


@dataclass(frozen=True)
class Settled:
    """The call is not to run: ``value`` is its result (reconciled, or given by a person)."""

    value: Any
    how: str


@dataclass(frozen=True)
class _RunAgain:
    """The call in doubt may run again; ``answered_run`` is the run whose answer allowed it."""

    answered_run: str | None


def interrupt_id(key: str, attempt: int) -> str:
    """The approval's interrupt id for ``attempt`` of the call under ``key``.

    In LangGraph's id format (32 hex digits), so a resume map may name it.
    """
    return xxh3_128_hexdigest(f"plait:in-doubt:{key}:{attempt}".encode())


async def begin_call(
    tool: BaseTool,
    args: dict[str, Any],
    key: str,
    *,
    store: ToolResultStore,
    config: RunnableConfig,
    node: str,
    in_map: bool,
) -> Begun | Settled:
    """Record that the call begins, settling it first if an earlier attempt is in doubt.

    Returns :class:`Begun` (call the tool now) or :class:`Settled` (use its
    value; record it as the call's result). May raise ``GraphInterrupt`` (the
    run parks on the in-doubt approval), :class:`InDoubtRejected` or
    :class:`CallUnsettled`.
    """
    thread_id = str((config.get("configurable") or {})["thread_id"])
    for _ in range(_BEGIN_TRIES):
        intent = await store.intent(key)
        answered = intent.answered_run if intent is not None else None
        if intent is not None and not intent.parked:
            outcome = await _settle(
                tool, args, key, intent, config=config, node=node, in_map=in_map
            )
            if isinstance(outcome, Settled):
                return outcome
            answered = outcome.answered_run
        attempt = intent.attempts + 1 if intent is not None else 1
        # Shielded: a cancelled step must not leave the record half-decided.
        began = store.begin(
            key,
            attempt,
            answered_run=answered,
            thread_id=thread_id,
            run_id=run_id_of(config),
            node=node,
            tool=tool.name,
            args=args,
        )
        if await asyncio.shield(began):
            return Begun()
        # Another execution of this step began the call meanwhile: it is in doubt now.
    raise CallUnsettled(
        node, f"tool {tool.name!r}: other executions kept beginning this call", transient=True
    )


async def _settle(
    tool: BaseTool,
    args: dict[str, Any],
    key: str,
    intent: Intent,
    *,
    config: RunnableConfig,
    node: str,
    in_map: bool,
) -> Settled | _RunAgain:
    """Settle a call in doubt: its result, or leave to run it again."""
    facts = {"key": key, "began_at": intent.began_at.isoformat(), "attempts": intent.attempts}
    event = {"plait": "tool_in_doubt", "node": node, "tool": tool.name, **facts}
    reconcile: Reconcile | None = (tool.metadata or {}).get(RECONCILE_KEY)
    if reconcile is not None:
        happened, value = await _reconciled(reconcile, tool.name, args, key, node)
        emit({**event, "outcome": "reconciled" if happened else "not_happened"})
        await audit(
            config,
            "tool_call",
            node=node,
            tool=tool.name,
            actor=f"node:{node}",
            detail={"in_doubt": facts, "reconciled": happened, "arguments": args},
        )
        return Settled(value, "reconciled") if happened else _RunAgain(None)
    if in_map:
        emit({**event, "outcome": "unsettled"})
        raise CallUnsettled(
            node,
            f"tool {tool.name!r}: {REASON} (it began at {facts['began_at']}, key {key}), and "
            "no one can be asked inside a map item; give the tool a `reconcile` function",
        )
    asked = interrupt_id(key, intent.attempts)
    answer = _answer(config, asked, intent)
    if answer is None:
        emit({**event, "outcome": "asked"})
        payload = _payload(tool.name, args, node, facts)
        raise GraphInterrupt((Interrupt(value=payload, id=asked),))
    return await _decided(answer, tool.name, args, facts, config=config, node=node, event=event)


async def _reconciled(
    reconcile: Reconcile, tool: str, args: dict[str, Any], key: str, node: str
) -> tuple[bool, Any]:
    """``(happened, result)`` from the tool's reconcile function."""
    try:
        outcome = await reconcile(dict(args), key)
    except Exception as exc:
        # Not handed to an agent's model (it could only call again with a new key):
        # the step fails, and a node retry asks reconcile again where that may help.
        raise CallUnsettled(
            node,
            f"tool {tool!r}: {REASON} and its reconcile failed: {type(exc).__name__}: {exc}",
            transient=classify(exc) in RETRYABLE,
        ) from exc
    if isinstance(outcome, Mapping) and isinstance(outcome.get("happened"), bool):
        return outcome["happened"], to_plain(outcome.get("result"))
    shown = json.dumps(to_plain(outcome), default=str)[:200]
    raise CallUnsettled(
        node,
        f"tool {tool!r}: reconcile returned {shown}; it must return "
        "{happened: true, result: ...} or {happened: false}",
    )


def _payload(tool: str, args: dict[str, Any], node: str, facts: dict[str, Any]) -> dict[str, Any]:
    """The approval a person sees (the inbox and the editor card show action, arguments, reason)."""
    reason = (
        f"{REASON}: it began at {facts['began_at']} and its result was never recorded "
        f"(idempotency key {facts['key']}). Approve to run it again, reject to fail the step, "
        "or edit to give its result (as the arguments) to use instead."
    )
    return {
        "kind": "approval",
        "node": node,
        "action": tool,
        "arguments": args,
        "reason": reason,
        "in_doubt": facts,
        "expires_at": None,
        "on_expire": "reject",
    }


def _answer(config: RunnableConfig, wanted: str, intent: Intent) -> Any:
    """The person's answer to the approval ``wanted``, from the resume this run was given.

    A resume map names the interrupt (and so the attempt); a single resume value
    (``command.resume`` without ids, allowed while one interrupt is pending)
    is used unless this very run's answer already let the last attempt begin.
    """
    configurable = config.get("configurable") or {}
    answers = configurable.get(CONFIG_KEY_RESUME_MAP) or {}
    if wanted in answers:
        return answers[wanted]
    scratchpad = configurable.get(CONFIG_KEY_SCRATCHPAD)
    if scratchpad is None or intent.answered_run == run_id_of(config):
        return None
    return scratchpad.get_null_resume(True)


async def _decided(
    answer: Any,
    tool: str,
    args: dict[str, Any],
    facts: dict[str, Any],
    *,
    config: RunnableConfig,
    node: str,
    event: dict[str, Any],
) -> Settled | _RunAgain:
    """Apply a person's decision on a call in doubt (see the module docstring)."""
    try:
        decision = Decision.model_validate(answer)
    except pydantic.ValidationError as exc:
        message = f"invalid decision on the call of {tool!r} in doubt: {exc}"
        raise CallUnsettled(node, message) from None
    if decision.decision == "edit" and decision.arguments is None:
        raise CallUnsettled(
            node, f"an edit of the call of {tool!r} in doubt gives the result to use as `arguments`"
        )
    actor = (config.get("configurable") or {}).get("plait_actor") or "reviewer"
    outcome = {"approve": "approved", "reject": "rejected", "edit": "edited"}[decision.decision]
    emit({**event, "outcome": outcome})
    detail: dict[str, Any] = {
        "decision": decision.decision,
        "comment": decision.comment,
        "reason": REASON,
        "in_doubt": facts,
        "arguments": args,
    }
    if decision.decision == "edit":
        detail["result"] = decision.arguments
    await audit(config, "approval", node=node, tool=tool, actor=str(actor), detail=detail)
    if decision.decision == "reject":
        raise InDoubtRejected(node, tool, decision.comment)
    if decision.decision == "edit":
        return Settled(to_plain(decision.arguments), "edited")
    return _RunAgain(run_id_of(config))
