"""The one way compiled nodes call a chat model: budget, breaker, retries, repairs.

Node kinds pass the model's name and, when they bind tools, a factory giving
the runnable for a model name, so a budget's ``fallback`` can switch models
without the node kind knowing about budgets. With none of ``budgets``,
``retry`` or ``breaker`` declared this is just ``ainvoke``.

A tenant's daily quota (``configurable.plait_quota``, set by the server) is
checked before each call and charged after it. ``PLAIT_MAX_MODEL_CALLS``
caps the model calls in flight in one process (per event loop): the calls
past the cap wait for a slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import weakref
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable
from langgraph.config import get_config

from plait.engine.errors import NodeError
from plait.engine.governance.budgets import charge_reply, current_meter, current_quota
from plait.engine.governance.model_access import ModelAccess, model_access
from plait.engine.governance.model_audit import audit_model_call, audits_model_calls
from plait.engine.governance.retries import emit_repair, guarded_call, repair_prompt
from plait.engine.governance.secrets import current_source
from plait.engine.observability import observe
from plait.engine.observability.node_path import node_path
from plait.engine.spec.models import ModelDef
from plait.engine.tools.cassette import current_cassette

if TYPE_CHECKING:
    from plait.engine.compiler.context import CompileContext

T = TypeVar("T")
#: The runnable for a model name and the run's access to it (its key).
ModelFor = Callable[[str, ModelAccess], Runnable[LanguageModelInput, BaseMessage]]

#: The environment variable capping model calls in flight per process (unset: no cap).
MAX_MODEL_CALLS_ENV = "PLAIT_MAX_MODEL_CALLS"
_UNSET = -1
_limit: int | None = _UNSET
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def model_call_limit() -> int | None:
    """The cap on model calls in flight (``PLAIT_MAX_MODEL_CALLS``), or ``None``."""
    global _limit
    if _limit == _UNSET:
        raw = os.environ.get(MAX_MODEL_CALLS_ENV, "").strip()
        # Checked before it is kept: a cached 0 would make every later call wait forever.
        try:
            limit = int(raw) if raw else None
        except ValueError:
            raise ValueError(f"{MAX_MODEL_CALLS_ENV} must be a whole number, not {raw!r}") from None
        if limit is not None and limit < 1:
            raise ValueError(f"{MAX_MODEL_CALLS_ENV} must be at least 1, not {raw}")
        _limit = limit
    return _limit


def set_model_call_limit(limit: int | None) -> None:
    """Set the process's cap (``None``: no cap); replaces the environment's value."""
    global _limit
    if limit is not None and limit < 1:
        raise ValueError("the model call cap must be at least 1")
    _limit = limit
    _slots.clear()


@contextlib.asynccontextmanager
async def model_call_slot() -> AsyncIterator[None]:
    """Hold one of the process's model call slots for the duration of a call."""
    limit = model_call_limit()
    if limit is None:
        yield
        return
    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None:
        slots = _slots[loop] = asyncio.Semaphore(limit)
    async with slots:
        yield


def endpoint_key(definition: ModelDef, name: str) -> str:
    """The endpoint a model's breaker protects: provider, base URL and model name."""
    return f"model:{definition.provider}:{definition.base_url or '-'}:{definition.model or name}"


async def invoke_model(
    ctx: CompileContext,
    model: str,
    messages: list[Any],
    *,
    model_for: ModelFor | None = None,
) -> BaseMessage:
    """Call ``model`` (or the budget's fallback) with ``messages``; count the reply's usage."""
    bind: ModelFor = model_for if model_for is not None else ctx.model
    meter = current_meter()
    used = meter.model_for_call(model) if meter is not None else model
    definition = ctx.loaded.spec.spec.models[used]
    source = current_source()
    cassette = current_cassette()
    if cassette is not None:
        # A replay (engine/tools/cassette.py): the recorded reply, no provider, key or quota.
        # The recording keeps replies by the node's path among subgraphs, not its bare id.
        node = node_path(_running_node())

        async def call() -> BaseMessage:
            return cassette.model_reply(node, used)

    else:
        quota = current_quota()
        if quota is not None:
            await quota.admit(f"model:{used}")
        # The key comes from the run's secrets at each call (a rotated key needs no restart).
        runnable = bind(used, await model_access(definition, source))

        async def call() -> BaseMessage:
            async with model_call_slot():
                return await runnable.ainvoke(messages)

    # Traced and measured when someone observes (metrics, tracing); else nothing.
    with observe.model_call(
        used, definition.provider, definition.model, definition.price
    ) as observed:
        # With neither ``retry`` nor ``breaker`` this is one plain ``ainvoke``.
        reply = await guarded_call(
            f"model:{used}",
            call,
            retry=definition.retry,
            breaker=definition.breaker,
            breaker_key=endpoint_key(definition, used),
        )
        if observed is not None:
            observed.reply(reply)
    if meter is not None:
        meter.add_reply(used, reply)
    quota = current_quota() if cassette is None else None
    if quota is not None:
        await charge_reply(quota, reply, definition.price)
    if audits_model_calls(ctx.loaded.spec):
        await audit_model_call(ctx.loaded.spec, used, definition, messages, reply, source)
    return reply


def _running_node() -> str:
    """The node of the step running this call (LangGraph's config), ``""`` outside a graph."""
    try:
        config = get_config()
    except RuntimeError:
        return ""
    return str((config.get("metadata") or {}).get("langgraph_node", ""))


async def structured_reply(
    ctx: CompileContext,
    model: str,
    messages: list[Any],
    parse: Callable[[str], T],
) -> T:
    """A reply ``parse`` accepts; a rejected one is asked for again ``repair_attempts`` times.

    ``parse`` raises :class:`NodeError` with what is wrong; the repair prompt
    quotes it, after the rejected reply, so the model sees its own mistake.
    """
    retry = ctx.loaded.spec.spec.models[model].retry
    repairs = retry.repair_attempts if retry is not None else 0
    conversation = list(messages)
    for attempt in range(1, repairs + 2):
        reply = await invoke_model(ctx, model, conversation)
        try:
            return parse(reply.text)
        except NodeError as exc:
            if attempt > repairs:
                raise
            emit_repair(f"model:{model}", attempt, exc.message)
            conversation += [
                AIMessage(reply.text),
                HumanMessage(repair_prompt(exc.message)),
            ]
    raise AssertionError("unreachable")  # the loop returns or raises


class ToolCallRepair:
    """Repairs of tool calls whose arguments are not valid JSON, in one agent step.

    A provider that cannot parse a call's arguments reports it in
    ``invalid_tool_calls``. With ``retry.repair_attempts`` on the model, each
    one is answered with an error tool message quoting the parse error, so the
    model can call again; past the bound the step fails. Without it nothing
    changes (the invalid calls are left out, as before).
    """

    def __init__(self, ctx: CompileContext, model: str, node: str) -> None:
        retry = ctx.loaded.spec.spec.models[model].retry
        self.bound = retry.repair_attempts if retry is not None else 0
        self.model = model
        self.node = node
        self.used = 0

    def messages(self, reply: BaseMessage) -> list[ToolMessage]:
        """Error answers to ``reply``'s invalid tool calls (empty when none, or not enabled)."""
        invalid = reply.invalid_tool_calls if isinstance(reply, AIMessage) else []
        if not invalid or self.bound == 0:
            return []
        problems = [
            f"tool call {call.get('name')!r}: arguments are not valid JSON "
            f"({call.get('error') or 'unparsable'}): {str(call.get('args'))[:200]!r}"
            for call in invalid
        ]
        if self.used >= self.bound:
            raise NodeError(self.node, f"{problems[0]} (after {self.used} repairs)")
        self.used += 1
        emit_repair(f"model:{self.model}", self.used, "; ".join(problems))
        return [
            ToolMessage(
                repair_prompt(problem),
                tool_call_id=call.get("id") or "",
                name=call.get("name") or "",
                status="error",
            )
            for call, problem in zip(invalid, problems, strict=True)
        ]
