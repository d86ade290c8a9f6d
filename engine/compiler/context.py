"""What nodes share: the compile-time context of a spec and the per-step scope.

:class:`CompileContext` lives as long as the compiled graph; models, tools and
python functions are created on first use and reused by every run (creating a
real provider's client per step would dominate the step's cost).
:class:`Scope` is built per step and computes the CEL roots lazily, so a node
that reads only ``state`` never builds ``run`` or ``input``.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from plait.engine.governance.audit import run_id_of
from plait.engine.governance.limits import StepLimits
from plait.engine.governance.model_access import ModelAccess
from plait.engine.governance.secrets import current_source
from plait.engine.lru import LruCache
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.expressions import ROOTS, cel_variables, compile_cel, evaluate, render
from plait.engine.spec.models import Argument, literal_of
from plait.engine.spec.registry import SpecRegistry
from plait.engine.tools.python_tools import import_function, load_python_tool

if TYPE_CHECKING:
    from plait.engine.compiler.compiled import CompiledSpec
    from plait.engine.tools.mcp.hub import Credentials

#: Marks "no result yet" (``None`` is a valid result).
NO_RESULT: Any = object()
#: Chat models kept per compiled spec (one per model and key in use).
MODELS_KEPT = 64


class Expr:
    """A CEL expression compiled once, with the roots it reads."""

    __slots__ = ("roots", "source")

    def __init__(self, source: str) -> None:
        compile_cel(source)  # fail at compile time, and warm the cache
        self.source = source
        self.roots = frozenset(cel_variables(source)) & ROOTS


@dataclass(frozen=True, slots=True)
class Const:
    """An argument given as written: its value, never evaluated."""

    value: Any


#: Compiled arguments: (name, CEL or value as written), in the spec's order.
Arguments = list[tuple[str, Expr | Const]]


def compile_arguments(args: Mapping[str, Argument]) -> Arguments:
    """Each argument of an argument map compiled once: CEL as :class:`Expr`, or a :class:`Const`."""
    compiled: Arguments = []
    for name, argument in args.items():
        literal, value = literal_of(argument)
        compiled.append((name, Const(value) if literal else Expr(value)))
    return compiled


@dataclass
class CompileContext:
    """Per compiled spec: the spec, its registry, and lazily created models and tools."""

    loaded: LoadedSpec
    registry: SpecRegistry | None
    children: dict[str, CompiledSpec] = field(default_factory=dict)
    _models: LruCache[tuple[str, ModelAccess], BaseChatModel] = field(
        default_factory=lambda: LruCache(MODELS_KEPT)
    )
    _tools: dict[str, BaseTool] = field(default_factory=dict)
    _functions: dict[str, Callable[..., Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        body = self.loaded.spec.spec
        self.public: tuple[str, ...] = tuple(body.state)
        self.inputs: tuple[str, ...] = tuple(body.input_fields)
        #: Budgets and loop detection, when the spec declares them (engine/governance/limits.py);
        #: built once here and shared by every node (both are read-only per step).
        self.limits: StepLimits | None = StepLimits.of(self.loaded.spec)
        #: Whether an MCP server takes per-run values: node steps then provide their
        #: ``input`` and ``run`` (engine/tools/run_values.py).
        self.per_run_servers = any(server.per_run for server in body.mcp_servers.values())

    @property
    def name(self) -> str:
        return self.loaded.name

    @property
    def version(self) -> str:
        return self.loaded.version

    def model(self, name: str, access: ModelAccess) -> BaseChatModel:
        """The chat model ``spec.models[name]`` with the run's ``access``, created on first use.

        Kept per access: runs of tenants with their own keys share a compiled
        graph, never a client built with another's key.
        """
        key = (name, access)
        found = self._models.get(key)
        if found is None:
            from plait.engine.models.factory import make_chat_model

            definition = self.loaded.spec.spec.models[name]
            found = make_chat_model(definition, base_dir=self.base_dir, access=access)
            self._models.put(key, found)
        return found

    def tool(self, name: str) -> BaseTool:
        """The tool ``spec.tools[name]``; a python tool is loaded on first use, an MCP
        tool must have been loaded by :meth:`load_tools` (it needs the run's secrets)."""
        found = self._tools.get(name)
        if found is None:
            found = self._load(name, None)
        return found

    def _load(self, name: str, credentials: Credentials | None) -> BaseTool:
        body = self.loaded.spec.spec
        found = load_python_tool(
            name, body.tools[name], self.base_dir, body.mcp_servers, credentials
        )
        self._tools[name] = found
        return found

    async def load_tools(self, names: Iterable[str]) -> None:
        """Load the tools ``names`` not loaded yet, off the event loop.

        The first use of an MCP tool connects to its server (about a second
        over stdio) with the run's secrets of that server, and a python tool
        imports its module: in a thread, so a worker's other runs and
        heartbeats go on meanwhile. Later uses find them loaded (:meth:`tool`).
        """
        missing = [name for name in names if name not in self._tools]
        if not missing:
            return
        body = self.loaded.spec.spec
        credentials: dict[str, Credentials] = {}
        for name in missing:
            if body.tools[name].kind == "mcp":
                from plait.engine.tools.mcp.hub import credentials_of  # only MCP specs load the SDK
                from plait.engine.tools.mcp.tool import mcp_connection

                server = mcp_connection(body.tools[name], body.mcp_servers, self.base_dir)
                credentials[name] = await credentials_of(server, current_source())
        await asyncio.to_thread(
            lambda: [self._load(name, credentials.get(name)) for name in missing]
        )

    def function(self, ref: str) -> Callable[..., Any]:
        """The python function ``module:function``, imported on first use."""
        found = self._functions.get(ref)
        if found is None:
            found = import_function(ref, self.base_dir)
            self._functions[ref] = found
        return found

    @property
    def base_dir(self) -> Path:
        """The spec's folder: python refs and fixtures resolve against it."""
        return self.loaded.base_dir


class Scope:
    """The CEL / template roots of one node step (or one map item)."""

    __slots__ = ("_input", "_run", "_state", "config", "ctx", "index", "item", "raw", "updates")

    def __init__(
        self,
        ctx: CompileContext,
        raw: Mapping[str, Any],
        config: RunnableConfig,
        *,
        item: Any = None,
        index: int | None = None,
    ) -> None:
        self.ctx = ctx
        self.raw = raw
        self.config = config
        self.item = item
        self.index = index
        #: Extra state updates a node kind adds besides its result (agent messages, map errors).
        self.updates: dict[str, Any] = {}
        self._state: dict[str, Any] | None = None
        self._input: dict[str, Any] | None = None
        self._run: dict[str, Any] | None = None

    def for_item(self, item: Any, index: int) -> Scope:
        """The scope of one map item: same state, plus ``item`` and ``index``."""
        child = Scope(self.ctx, self.raw, self.config, item=item, index=index)
        child._state, child._input, child._run = self._state, self._input, self._run
        return child

    @property
    def state(self) -> dict[str, Any]:
        """The public state (private ``__`` channels left out)."""
        if self._state is None:
            self._state = self._fields(self.ctx.public)
        return self._state

    @property
    def input(self) -> dict[str, Any]:
        """The run's input fields as they stand in the state."""
        if self._input is None:
            self._input = self._fields(self.ctx.inputs)
        return self._input

    def _fields(self, names: tuple[str, ...]) -> dict[str, Any]:
        raw = self.raw
        return {k: raw[k] for k in names if k in raw}

    @property
    def run(self) -> dict[str, Any]:
        """``{id, thread_id, graph, version}`` from the RunnableConfig."""
        if self._run is None:
            config = self.config
            configurable = config.get("configurable") or {}
            metadata = config.get("metadata") or {}
            self._run = {
                # ``config["run_id"]`` names the outer call only and never reaches
                # nodes, so the run id travels like the Agent Server sends it.
                "id": run_id_of(config),
                "thread_id": configurable.get("thread_id"),
                "graph": metadata.get("plait_graph", self.ctx.name),
                "version": metadata.get("plait_version", self.ctx.version),
            }
        return self._run

    def _root(self, name: str, result: Any) -> Any:
        if name == "state":
            return self.state
        if name == "input":
            return self.input
        if name == "run":
            return self.run
        if name == "item":
            return self.item
        if name == "index":
            return self.index
        return None if result is NO_RESULT else result

    def root(self, name: str) -> Any:
        """A root's value (``state``, ``input``, ``run``, ``item``, ``index``)."""
        return self._root(name, NO_RESULT)

    def eval(self, expr: Expr, result: Any = NO_RESULT) -> Any:
        """Evaluate ``expr`` with just the roots it reads."""
        return evaluate(expr.source, {name: self._root(name, result) for name in expr.roots})

    def arguments(self, compiled: Arguments) -> dict[str, Any]:
        """The values of compiled arguments (a value as written is copied: a call may change it)."""
        return {
            name: copy.deepcopy(arg.value) if isinstance(arg, Const) else self.eval(arg)
            for name, arg in compiled
        }

    def render(self, template: str) -> str:
        """Render a prompt template (roots ``state``, ``input``, ``run``, ``item``, ``index``)."""
        context: dict[str, Any] = {"state": self.state, "input": self.input, "run": self.run}
        if self.index is not None:
            context["item"] = self.item
            context["index"] = self.index
        return render(template, context)
