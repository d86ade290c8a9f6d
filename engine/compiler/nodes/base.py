"""What every node does around its kind's work: visit bound, writes, result, errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.runtime import get_runtime

from plait.engine.compiler.context import CompileContext, Expr, Scope
from plait.engine.compiler.nodes.waits import in_item_node
from plait.engine.compiler.state import VISITS, result_channel
from plait.engine.errors import NodeError
from plait.engine.governance.budgets import quota_of
from plait.engine.governance.policies import is_transient
from plait.engine.governance.retries import emit_step_retry
from plait.engine.observability import observe
from plait.engine.observability.observe import top_level_step
from plait.engine.spec.models import _NodeBase as NodeBase
from plait.engine.store.checkpointer import StepSaver
from plait.engine.tools.run_values import providing

#: A node kind's work: compute the result from the step's scope.
Compute = Callable[[Scope], Awaitable[Any]]


class NodeRunner:
    """The LangGraph node: bound visits, compute, then the state update.

    A class rather than a closure: LangGraph disassembles closures looking for
    nested graphs (~1.5 ms a node), which alone would blow the compile budget
    of a 500-node spec; callable objects are skipped.
    """

    def __init__(
        self,
        node_id: str,
        node: NodeBase,
        ctx: CompileContext,
        compute: Compute,
        *,
        keep_result: bool,
    ) -> None:
        self.node_id = node_id
        self.kind = str(getattr(node, "kind", "node"))
        self.ctx = ctx
        self.compute = compute
        self.writes = [(name, Expr(source)) for name, source in node.writes.items()]
        self.output = node.output
        self.max_visits = node.max_visits
        self.limits = ctx.limits
        #: ``keep_result`` stores the result in the node's private channel for its route edge.
        self.result_channel = result_channel(node_id) if keep_result else None
        self.retry = node.retry

    async def __call__(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        saver = config.get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER)
        if isinstance(saver, StepSaver):
            # Nothing of a step happens before the step before it is stored (decision 123).
            await saver.stored()
        try:
            # One global check when nobody observes (no metrics, no tracing): see observe.py.
            if observe.watching():
                return await observe.observed_step(
                    self.node_id, self.ctx.name, config, lambda: self._guarded(state, config)
                )
            return await self._guarded(state, config)
        except GraphBubbleUp:
            raise  # an interrupt, not a failure
        except Exception as exc:
            if self.retry is not None and is_transient(exc):
                self._announce_retry(exc)
            raise

    def _announce_retry(self, exc: Exception) -> None:
        """Say the step will run again (LangGraph's retry policy reruns it; nothing else tells)."""
        try:
            info = get_runtime().execution_info
        except RuntimeError:
            return  # called outside a LangGraph run: nothing retries it
        if self.retry is not None and info is not None:
            emit_step_retry(self.node_id, self.retry, info.node_attempt, exc)

    async def _guarded(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        quota = quota_of(config)
        if quota is not None and top_level_step(config):
            # The tenant's daily budget (set by the server): checked before, charged after.
            await quota.admit(self.node_id)
            update = await self._limited(state, config)
            await quota.charge({"steps": 1})
            return update
        return await self._limited(state, config)

    async def _limited(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        if self.limits is not None:
            return await self.limits.run(self.node_id, state, lambda: self._step(state, config))
        return await self._step(state, config)

    async def _step(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        node_id = self.node_id
        max_visits = self.max_visits
        scope = Scope(self.ctx, state, config)
        try:
            if max_visits is not None and state[VISITS].get(node_id, 0) >= max_visits:
                raise NodeError(node_id, f"visited more than max_visits={max_visits} times")
            if self.ctx.per_run_servers:
                # MCP servers with per-run args/env read this step's input and run.
                with providing(scope.root):
                    result = await self.compute(scope)
            else:
                result = await self.compute(scope)
            update = scope.updates
            if self.output is not None:
                update[self.output] = result
            for name, expr in self.writes:
                update[name] = scope.eval(expr, result)
        except GraphInterrupt as exc:
            # Inside a map item's subgraph nothing can resume it: say so, not GraphInterrupt.
            cannot_wait = in_item_node(node_id, self.kind, exc)
            if cannot_wait is not None:
                raise cannot_wait from None
            raise
        except (GraphBubbleUp, NodeError):
            raise
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            raise NodeError(node_id, message, transient=is_transient(exc)) from exc
        if self.result_channel is not None:
            update[self.result_channel] = result
        if max_visits is not None:
            update[VISITS] = {node_id: 1}
        return update
