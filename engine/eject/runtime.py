"""The public runtime of ejected graphs (``plait.runtime``): what their governed steps call.

``plait eject`` writes a LangGraph module whose state, reducers, edges and
plain steps are ordinary Python. The steps whose behaviour is Plait's own
(model calls with their retries, breakers, routes and context windows; agents'
tool loops; tool calls through the gateway; approvals; scatter-gather) call
one :class:`Runtime` instead, which runs exactly the code a compiled spec
runs, so an ejected graph behaves as the spec does. This module is the
stable surface (docs/eject.md); everything it uses stays private to Plait.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import RetryPolicy
from pydantic import TypeAdapter

from plait.engine.compiler.context import CompileContext, Expr, Scope
from plait.engine.compiler.edges import label_key
from plait.engine.compiler.nodes import KIND_BUILDERS
from plait.engine.compiler.nodes.base import Compute
from plait.engine.eject.generate import VISITS_FIELD
from plait.engine.errors import NodeError
from plait.engine.governance.policies import retry_policy as _retry_policy
from plait.engine.spec.document import LoadedSpec, SourceMap
from plait.engine.spec.models import GraphSpec, Node, RetrySpec, RouterNode
from plait.engine.tools.gateway import call_tool

__all__ = ["VISITS_FIELD", "NodeError", "Runtime", "Step"]

#: Node definitions as a spec writes them, validated like a spec's nodes.
_NODES: TypeAdapter[Any] = TypeAdapter(Node)
#: The one node of the runtime's own spec: a spec needs a node, the runtime's nodes come per call.
_PLACEHOLDER = {"runtime": RouterNode(kind="router", label="''").model_dump(exclude_unset=True)}


@dataclass(frozen=True)
class Step:
    """What a governed step gave: its ``result``, and the state ``updates`` it adds itself
    (an agent's or a chat's messages, a map's failures)."""

    result: Any
    updates: dict[str, Any] = field(default_factory=dict)


class Runtime:
    """Plait's governed steps for one ejected graph.

    ``definitions`` holds what those steps read from the spec: ``name``,
    ``version``, ``state`` (field -> ``{type, reducer, default}``), ``input``,
    and ``models``, ``tools``, ``agents`` and ``limits`` as the spec writes them.
    ``base_dir`` is where ``module:function`` references and model fixtures
    resolve (the spec's folder).
    """

    def __init__(self, definitions: Mapping[str, Any], base_dir: str | Path) -> None:
        body = {
            key: definitions[key]
            for key in ("state", "input", "models", "tools", "agents", "limits")
            if definitions.get(key) is not None
        }
        data = {
            "apiVersion": "plait/v1",
            "kind": "Graph",
            "metadata": {"name": definitions["name"], "version": definitions["version"]},
            "spec": {**body, "nodes": _PLACEHOLDER},
        }
        base = Path(base_dir).resolve()
        loaded = LoadedSpec(
            file=str(base / f"{definitions['name']}.yaml"),
            text="",
            data=data,
            spec=GraphSpec.model_validate(data),
            source_map=SourceMap(),
            path=base / f"{definitions['name']}.yaml",
        )
        self._ctx = CompileContext(loaded, None)
        self._steps: dict[tuple[str, str], Compute] = {}

    def cel(
        self,
        expression: str,
        state: Mapping[str, Any],
        config: RunnableConfig | None = None,
        **roots: Any,
    ) -> Any:
        """Evaluate a CEL expression over ``state`` (its public fields), ``input``, ``run``
        (from ``config``) and the other ``roots`` given (``result``, ``item``, ``index``)."""
        scope = self._scope(state, config)
        expr = Expr(expression)
        values = {name: roots[name] if name in roots else scope.root(name) for name in expr.roots}
        from plait.engine.spec.expressions import evaluate

        return evaluate(expr.source, values)

    def render(
        self, template: str, state: Mapping[str, Any], config: RunnableConfig | None = None
    ) -> str:
        """A prompt template rendered as Plait renders it (sandboxed Jinja2, strict undefined;
        roots ``state``, ``input``, ``run``)."""
        return self._scope(state, config).render(template)

    def function(self, ref: str) -> Any:
        """The python function ``module:function``, imported from the spec's folder."""
        return self._ctx.function(ref)

    def public(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """The spec's fields of ``state`` (Plait's bookkeeping fields left out)."""
        return dict(self._scope(state, None).state)

    async def call(self, function: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Call a ``python`` step's function, sync or async; its return value."""
        value = function(*args, **kwargs)
        return await value if inspect.isawaitable(value) else value

    async def llm(
        self, node: str, state: Mapping[str, Any], config: RunnableConfig, **fields: Any
    ) -> Step:
        """One model call as an ``llm`` node with ``fields`` (``model``, ``system``,
        ``prompt``, ``schema``, ``messages``) makes it: templates rendered, reply validated."""
        return await self._run("llm", node, state, config, fields)

    async def agent(
        self, node: str, state: Mapping[str, Any], config: RunnableConfig, **fields: Any
    ) -> Step:
        """An ``agent`` node's loop (model, tools, model...) with ``fields`` as the spec
        writes them (``agent`` or ``model``, ``tools``, ``prompt``, ``routes``, ``context``...)."""
        return await self._run("agent", node, state, config, fields)

    async def approval(
        self, node: str, state: Mapping[str, Any], config: RunnableConfig, **fields: Any
    ) -> Step:
        """Ask a person (LangGraph ``interrupt``); the result is ``{decision, arguments,
        comment}``. Resume with ``Command(resume={"decision": "approve"})``."""
        return await self._run("approval", node, state, config, fields)

    async def map(
        self, node: str, state: Mapping[str, Any], config: RunnableConfig, **fields: Any
    ) -> Step:
        """A ``map`` node: ``do`` for each of ``items``, with its concurrency, per-item
        timeout and ``min_success``; the result is the successful items' results."""
        return await self._run("map", node, state, config, fields)

    async def tool(
        self, node: str, config: RunnableConfig, tool: str, args: Mapping[str, Any]
    ) -> Any:
        """Call ``tools[tool]`` with ``args`` through Plait's gateway (its timeout, retries,
        breaker, risk); the result is the tool's JSON-like return value."""
        await self._ctx.load_tools((tool,))
        return await call_tool(self._ctx.tool(tool), args, config=config, node=node, position=(0,))

    def route(
        self, node: str, label: Any, targets: Mapping[str, str], default: str | None = None
    ) -> str:
        """The node a ``route`` edge goes to for ``label`` (``true`` matches ``"true"``)."""
        found = targets.get(key) if (key := label_key(label)) is not None else None
        if found is not None:
            return found
        if default is not None:
            return default
        known = ", ".join(sorted(targets))
        raise NodeError(node, f"route label {label!r} has no target (labels: {known})")

    @staticmethod
    def visit(node: str, state: Mapping[str, Any], max_visits: int) -> dict[str, int]:
        """Check a node's ``max_visits`` bound; the visit to add to the ``_visits`` counter."""
        if (state.get(VISITS_FIELD) or {}).get(node, 0) >= max_visits:
            raise NodeError(node, f"visited more than max_visits={max_visits} times")
        return {node: 1}

    @staticmethod
    def retry_policy(**fields: Any) -> RetryPolicy:
        """LangGraph's ``RetryPolicy`` for a node's ``retry`` block (transient errors only)."""
        return _retry_policy(RetrySpec.model_validate(fields))

    async def _run(
        self,
        kind: str,
        node: str,
        state: Mapping[str, Any],
        config: RunnableConfig,
        fields: Mapping[str, Any],
    ) -> Step:
        compute = self._steps.get((kind, node))
        if compute is None:
            definition = _NODES.validate_python({"kind": kind, **fields})
            compute = KIND_BUILDERS[kind](node, definition, self._ctx)
            self._steps[(kind, node)] = compute
        scope = self._scope(state, config)
        result = await compute(scope)
        return Step(result, dict(scope.updates))

    def _scope(self, state: Mapping[str, Any], config: RunnableConfig | None) -> Scope:
        return Scope(self._ctx, state, config or {})
