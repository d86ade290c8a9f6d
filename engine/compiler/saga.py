"""Compensation (a saga): undo what completed when a later step fails the run.

Nodes and tools may declare ``compensate``. Each completed compensable step is
appended to the private channel ``__saga`` (so it survives resume): a node
step when its node succeeds, a tool step for every successful call of a
compensable tool, whatever node made it. When a node fails for good (a
permanent error, or a transient one on its last attempt), the compensations
of every completed step, plus the tool steps the failing node itself
completed, run in reverse order of completion. Each emits
``{"plait": "compensation", "step", "status"}`` and an audit record; one that
fails is reported in the run's final error for manual action, and the others
still run.

Why in the node's error path and not around the whole run: the node wrapper
is the one place every execution passes through (CLI and server alike, the
engine never imports the server), and it sees the tool calls the failing node
completed before it failed, which never reach the state. For the same reason a
node's step ``timeout`` is enforced here in a spec with compensations (not by
LangGraph, which would cancel the node from outside): a timed-out step is a
failure like any other. Gaps: a failure outside any node (a route edge's
error, ``max_steps``, the run's own ``timeout``) compensates nothing, and
steps completed inside a ``subgraph`` are compensated only by a failure inside
that subgraph.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_RUNTIME
from langgraph.errors import GraphBubbleUp

from plait.engine.compiler.context import CompileContext, Scope
from plait.engine.compiler.state import DefaultBinop
from plait.engine.errors import NodeError
from plait.engine.governance.audit import audit
from plait.engine.governance.policies import is_transient
from plait.engine.observability.emit import emit
from plait.engine.spec.expressions import evaluate, to_plain
from plait.engine.spec.models import Compensation, GraphSpec, duration_seconds, literal_of
from plait.engine.spec.models import _NodeBase as NodeBase
from plait.engine.tools.ledger import LEDGER, Ledger, Step

#: The private channel of completed compensable steps, in order of completion.
SAGA = "__saga"

Action = Callable[[dict[str, Any], RunnableConfig], Awaitable[dict[str, Any]]]
Compute = Callable[[Scope], Awaitable[Any]]


def _extend(current: list[Step] | None, new: list[Step]) -> list[Step]:
    return [*(current or []), *new]


def has_compensation(spec: GraphSpec) -> bool:
    """Whether any node or tool of ``spec`` declares ``compensate``."""
    body = spec.spec
    return any(n.compensate is not None for n in body.nodes.values()) or any(
        t.compensate is not None for t in body.tools.values()
    )


def saga_channels(spec: GraphSpec) -> dict[str, Any]:
    """The ``__saga`` channel, only for specs that declare a compensation."""
    if not has_compensation(spec):
        return {}
    return {SAGA: Annotated[list, DefaultBinop(list, _extend, [])]}


class TrackedCompute:
    """A node kind's work that leaves its result in the ledger (for a node compensation)."""

    def __init__(self, compute: Compute) -> None:
        self.compute = compute

    async def __call__(self, scope: Scope) -> Any:
        result = await self.compute(scope)
        ledger = LEDGER.get()
        if ledger is not None:
            ledger.result = result
        return result


class SagaStep:
    """The LangGraph node around a :class:`NodeRunner`: records steps, compensates on failure.

    A callable object, not a closure, for the reason NodeRunner is one
    (docs/decisions.md 19).
    """

    def __init__(self, node_id: str, node: NodeBase, ctx: CompileContext, inner: Action) -> None:
        self.node_id = node_id
        self.compensable = node.compensate is not None
        self.max_attempts = node.retry.max_attempts if node.retry is not None else 1
        self.ctx = ctx
        self.inner = inner
        #: The node's step ``timeout``: the compiler leaves it to this wrapper (module doc).
        self.timeout = duration_seconds(node.timeout) if node.timeout is not None else None
        tools = ctx.loaded.spec.spec.tools
        self.tools = frozenset(name for name, t in tools.items() if t.compensate is not None)

    async def __call__(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        ledger = Ledger(self.tools)
        token = LEDGER.set(ledger)
        try:
            if self.timeout is not None:
                update = await self._timed(state, config, self.timeout)
            else:
                update = await self.inner(state, config)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            if not self._final(exc, config):
                raise
            done = [*(state.get(SAGA) or []), *ledger.steps]
            failed = await compensate(self.ctx, done, config, node=self.node_id)
            if not failed:
                raise
            message = exc.message if isinstance(exc, NodeError) else str(exc)
            manual = "; ".join(failed)
            raise NodeError(
                self.node_id, f"{message}; compensation failed, manual action needed: {manual}"
            ) from exc
        finally:
            LEDGER.reset(token)
        steps = list(ledger.steps)
        if self.compensable:
            steps.append(
                {
                    "kind": "node",
                    "name": self.node_id,
                    "node": self.node_id,
                    "args": {},
                    "result": to_plain(ledger.result),
                }
            )
        if steps:
            update[SAGA] = steps
        return update

    async def _timed(
        self, state: dict[str, Any], config: RunnableConfig, seconds: float
    ) -> dict[str, Any]:
        """The step under its ``timeout``: cancelled when it runs out, then a (retryable) error."""
        try:
            async with asyncio.timeout(seconds) as limit:
                return await self.inner(state, config)
        except TimeoutError:
            if not limit.expired():
                raise  # the node's own timeout (a tool's), not the step's
            raise NodeError(
                self.node_id, f"the step timed out after {seconds:g}s (timeout)", transient=True
            ) from None

    def _final(self, exc: Exception, config: RunnableConfig) -> bool:
        """Whether LangGraph will not retry this failure (the run fails with it)."""
        if not is_transient(exc):
            return True
        runtime = (config.get("configurable") or {}).get(CONFIG_KEY_RUNTIME)
        info = getattr(runtime, "execution_info", None)
        attempt = info.node_attempt if info is not None else 1
        return attempt >= self.max_attempts


def _definition(ctx: CompileContext, step: Step) -> Compensation | None:
    body = ctx.loaded.spec.spec
    if step["kind"] == "tool":
        return body.tools[step["name"]].compensate
    return body.nodes[step["name"]].compensate


def _label(step: Step) -> str:
    return f"{step['node']}.{step['name']}" if step["kind"] == "tool" else str(step["name"])


async def compensate(
    ctx: CompileContext, steps: list[Step], config: RunnableConfig, *, node: str
) -> list[str]:
    """Run the compensations of ``steps`` in reverse; return the failures (``"step: error"``)."""
    failed: list[str] = []
    for step in reversed(steps):
        definition = _definition(ctx, step)
        if definition is None:
            continue
        label = _label(step)
        try:
            await _undo(ctx, definition, step)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            failed.append(f"{label}: {error}")
            emit({"plait": "compensation", "step": label, "status": "failed", "error": error})
            detail = {"step": label, "status": "failed", "error": error, "manual_action": True}
        else:
            emit({"plait": "compensation", "step": label, "status": "ok"})
            detail = {"step": label, "status": "ok"}
        tool = definition.tool
        await audit(config, "compensation", node=node, tool=tool, actor="saga", detail=detail)
    return failed


async def _undo(ctx: CompileContext, definition: Compensation, step: Step) -> None:
    roots = {"args": step["args"], "result": step["result"]}
    args = {}
    for name, argument in definition.args.items():
        literal, value = literal_of(argument)
        args[name] = copy.deepcopy(value) if literal else evaluate(value, roots)
    if definition.tool is not None:
        await ctx.load_tools((definition.tool,))
        await ctx.tool(definition.tool).ainvoke(args)
        return
    assert definition.function is not None  # lint: exactly one of function and tool
    function = ctx.function(definition.function)
    outcome = function(**(args if definition.args else roots))
    if inspect.isawaitable(outcome):
        await outcome
