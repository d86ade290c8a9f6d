"""The one way compiled nodes call a tool: recorded once, reused on a re-run, announced.

Only successful calls are recorded. A tool that raised is taken to have had no
effect (tools must fail atomically, as any retried call must), so a retry or a
resumed run calls it again; recording the error would turn a node's ``retry``
into a replay of the same failure.

A tool marked ``idempotent: false`` also records that a call began before it
acts; a re-run that finds that intent but no result settles the call first
(:mod:`plait.engine.tools.in_doubt`: its ``reconcile`` function, or a person).

Processes a call starts and leaves running when it fails, times out or is
cancelled are ended (:mod:`plait.engine.tools.children`).

A tool with ``limits`` (or of an MCP server with them) waits its turn, shared
by every run and worker, at each attempt
(:mod:`plait.engine.governance.tool_limits`).

Every call also goes to the ``custom`` stream as
``{"plait": "tool_call", "node", "tool", "args", "status", "reused"}``:
``started`` then ``ok`` or ``error`` (with ``error``, the message) for a call
that runs; a single ``ok`` with ``reused: true`` for one answered from its record
(or settled without running: reconciled, or a result a person gave). An ``ok``
carries the ``result``; one whose JSON is over :data:`RESULT_EVENT_BYTES` is
cut to its beginning, with ``result_truncated: true`` and ``result_bytes``
(the whole result is in the step's state writes and the tool result record).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp

from plait.engine.errors import NodeError
from plait.engine.governance.audit import audit_tool_call, run_id_of
from plait.engine.governance.current_call import ToolCall, calling
from plait.engine.governance.loops import count_tool_call
from plait.engine.governance.retries import invoke_tool
from plait.engine.governance.tool_limits import limits_gate
from plait.engine.observability import observe
from plait.engine.observability.emit import emit
from plait.engine.observability.node_path import node_path
from plait.engine.spec.expressions import to_plain
from plait.engine.store.tool_results import RecordedResult
from plait.engine.tools import children
from plait.engine.tools.cassette import current_cassette
from plait.engine.tools.idempotency import ToolResultStore, store_from, tool_call_key
from plait.engine.tools.in_doubt import Settled, begin_call
from plait.engine.tools.ledger import note_tool_call
from plait.engine.tools.python_tools import NON_IDEMPOTENT_KEY
from plait.engine.tools.risk import approved_arguments, is_high_risk

T = TypeVar("T")

#: Largest tool result (as JSON) sent whole in the ``tool_call`` event.
RESULT_EVENT_BYTES = 8192


async def call_tool(
    tool: BaseTool,
    args: Mapping[str, Any],
    *,
    config: RunnableConfig,
    node: str,
    position: tuple[str | int, ...],
    item: int | None = None,
    call_id: str | None = None,
) -> Any:
    """Call ``tool`` with ``args`` at most once per step position; return its JSON-like result.

    ``position`` places the call in its node (``(0,)`` for a tool node, ``(iteration,
    index)`` in an agent); ``item`` is the map item's index, when in a map. The
    value returned is the recorded one, also on the first run, so a resumed
    run sees exactly what the first run saw. With no store in ``config``
    the tool is just called. ``call_id`` (the model's tool call id) goes on
    the call's trace span.
    """
    if is_high_risk(tool):
        # Before any other await: see engine/tools/risk.py.
        args = await approved_arguments(tool.name, dict(args), config=config, node=node)
    plain_args = to_plain(dict(args))
    count_tool_call(tool.name, plain_args)  # loop detection, when the spec sets a limit
    event: dict[str, Any] = {"plait": "tool_call", "node": node, "tool": tool.name}
    event["args"] = plain_args
    if item is not None:
        event["item"] = item
        position = ("item", item, *position)
    store = store_from(config)
    key = tool_call_key(config, position, tool.name, plain_args) if store is not None else None
    non_idempotent = bool((tool.metadata or {}).get(NON_IDEMPOTENT_KEY))
    if store is not None and key is not None:
        found = await store.get(key)
        if found is not None:
            return await _reused(tool.name, node, config, event, found.value, call_id)
        if non_idempotent:
            in_map = item is not None
            begun = await begin_call(
                tool, plain_args, key, store=store, config=config, node=node, in_map=in_map
            )
            if isinstance(begun, Settled):
                value = await _record(store, key, begun.value, config, node, tool.name, plain_args)
                return await _reused(tool.name, node, config, event, value, call_id)
    emit({**event, "status": "started", "reused": False})
    try:
        # The tool learns its key and run (engine/governance/current_call.py); the
        # processes it starts are its own (engine/tools/children.py).
        with (
            calling(ToolCall(key, node, config)),
            observe.tool_call(tool.name, node, config, call_id=call_id),
            children.owned_by(f"{tool.name} in {node}"),
        ):
            cassette = current_cassette()
            if cassette is not None:  # a replay: the recorded result, the tool is not called
                where = node_path(node)  # the recording keeps it by the node's path
                value = to_plain(cassette.tool_result(where, tool.name, plain_args))
            else:
                gate = limits_gate(tool, config, node)  # the tool's `limits`, across runs
                value = to_plain(await invoke_tool(tool, dict(args), gate=gate))
    except GraphBubbleUp:
        if non_idempotent and store is not None and key is not None:
            # Parked (an MCP task): the resumed call continues it, it is not in doubt.
            await _shielded(store.park(key))
        raise
    except Exception as exc:
        emit({**event, "status": "error", "reused": False, "error": f"{type(exc).__name__}: {exc}"})
        await audit_tool_call(config, {**event, "status": "error", "error": type(exc).__name__})
        if non_idempotent:
            # It may have acted before failing: a node retry must not call it again.
            message = f"tool {tool.name!r} (not idempotent) failed; not retried: {exc}"
            raise NodeError(node, message, transient=False) from exc
        raise
    if store is not None and key is not None:
        value = await _record(store, key, value, config, node, tool.name, plain_args)
    emit({**event, "status": "ok", "reused": False, **result_fields(value)})
    await audit_tool_call(config, {**event, "status": "ok", "reused": False})
    note_tool_call(tool.name, node, plain_args, value)
    return value


def result_fields(value: Any) -> dict[str, Any]:
    """The ``result`` of a ``tool_call`` event: the value, or the beginning of a large one."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    size = len(text.encode())
    if size <= RESULT_EVENT_BYTES:
        return {"result": value}
    return {
        "result": text[: RESULT_EVENT_BYTES // 4] + "…",
        "result_truncated": True,
        "result_bytes": size,
    }


async def _reused(
    tool: str,
    node: str,
    config: RunnableConfig,
    event: dict[str, Any],
    value: Any,
    call_id: str | None,
) -> Any:
    """Announce a call answered without calling the tool (recorded, or settled in doubt)."""
    with observe.tool_call(tool, node, config, call_id=call_id, reused=True):
        pass  # a span and a count, no call
    emit({**event, "status": "ok", "reused": True, **result_fields(value)})
    await audit_tool_call(config, {**event, "status": "ok", "reused": True})
    note_tool_call(tool, node, event["args"], value)
    return value


async def _record(
    store: ToolResultStore,
    key: str,
    value: Any,
    config: RunnableConfig,
    node: str,
    tool: str,
    args: dict[str, Any],
) -> Any:
    """Record ``value`` as the call's result; return the stored value (the first writer's).

    The record keeps where ``node`` ran among subgraphs (its path), which ``plait record``
    keys the result by.
    """
    # Shielded: once the tool has acted, a cancellation (an item timeout, a
    # cancelled run) must not lose the record that stops it acting twice.
    stored = await _shielded(
        store.put(
            key,
            RecordedResult.now(value),
            thread_id=str((config.get("configurable") or {})["thread_id"]),
            run_id=run_id_of(config),
            node=node,
            tool=tool,
            args=args,
            path=node_path(node),
        )
    )
    return stored.value


async def _shielded(awaitable: Awaitable[T]) -> T:
    """``asyncio.shield`` that also takes the error of a write whose caller was cancelled.

    After a cancel the write goes on alone; if it is then refused (the fence:
    the run is another worker's now), nobody is left to tell, and asyncio would
    log "Task exception was never retrieved".
    """
    task = asyncio.ensure_future(awaitable)
    task.add_done_callback(_take_error)
    return await asyncio.shield(task)


def _take_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
