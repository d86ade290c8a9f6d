"""``agent``: model -> tools -> model until the reply calls no tool (bounded)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import ToolCall
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp

from plait.engine.compiler.context import MODELS_KEPT, CompileContext, Scope
from plait.engine.compiler.context_window import Summarize, fit, transcript
from plait.engine.compiler.model_calls import ToolCallRepair, invoke_model
from plait.engine.compiler.model_routes import ModelRouter, StepUsage
from plait.engine.compiler.nodes.base import Compute
from plait.engine.errors import NodeError
from plait.engine.governance.audit import audit
from plait.engine.governance.loops import StopsRun
from plait.engine.governance.mcp_trust import trust_of
from plait.engine.governance.model_access import ModelAccess
from plait.engine.observability.emit import emit
from plait.engine.observability.roles import acting_as
from plait.engine.spec.models import AgentNode, ContextPolicy, ModelRoute
from plait.engine.tools.allowlist import refuse
from plait.engine.tools.data_marking import as_data, with_data_line
from plait.engine.tools.gateway import call_tool
from plait.engine.tools.untrusted_tools import untrusted_tool_spec

DEFAULT_MAX_ITERATIONS = 10
SUMMARY_PROMPT = (
    "Summarise this conversation for the assistant that continues it: the task, what was "
    "found or decided, and what is still open. Be brief; keep names, numbers and ids."
)


def agent_compute(
    ctx: CompileContext,
    node_id: str,
    *,
    agent: str | None,
    model: str | None,
    system: str | None,
    tools: list[str],
    max_iterations: int | None,
    prompt: str,
    messages_field: str | None = None,
    tool_results: str | None = None,
    routes: list[ModelRoute] | None = None,
    context: ContextPolicy | None = None,
) -> Compute:
    """The agent loop; inline settings override the named agent's."""
    definition = ctx.loaded.spec.spec.agents[agent] if agent is not None else None
    model_name = model or (definition.model if definition else None)
    if model_name is None:
        raise ValueError(f"agent node {node_id!r} names neither an agent nor a model")
    system = system if system is not None else (definition.system if definition else None)
    tool_names = ctx.loaded.spec.spec.agent_tools(agent, tools)
    limit = max_iterations or (definition.max_iterations if definition else DEFAULT_MAX_ITERATIONS)
    as_data_ = (tool_results or (definition.tool_results if definition else "plain")) == "data"
    extend = messages_field is not None and ctx.loaded.spec.spec.state[messages_field].reducer in (
        "add_messages",
        "extend",
    )
    loaded_tools: dict[str, BaseTool] | None = None
    limits = ctx.loaded.spec.spec.limits
    parallel = limits.parallel_tool_calls if limits is not None else None
    # The MCP tools of the agent by name -> (the spec's name of its server, the server).
    spec_tools, servers = ctx.loaded.spec.spec.tools, ctx.loaded.spec.spec.mcp_servers
    mcp_tools = {
        name: (tool_def.server, servers[tool_def.server])
        for name in tool_names
        if (tool_def := spec_tools.get(name)) is not None
        and tool_def.kind == "mcp"
        and tool_def.server is not None
    }
    # Keyed by the tools whose descriptions this run withholds too: the compiled graph is
    # shared by tenants, each of whom trusts its own servers (engine/governance/mcp_trust.py).
    bound: dict[
        tuple[str, ModelAccess, frozenset[str]], Runnable[LanguageModelInput, BaseMessage]
    ] = {}

    def agent_tools() -> dict[str, BaseTool]:
        # Loaded on first use, like the context's models and tools.
        nonlocal loaded_tools
        if loaded_tools is None:
            loaded_tools = {name: ctx.tool(name) for name in tool_names}
        return loaded_tools

    def shown(withheld: frozenset[str]) -> list[BaseTool | dict[str, Any]]:
        # What the model is told of each tool: itself, or for an untrusted server's tool
        # its name and schema's structure only (engine/tools/untrusted_tools.py).
        return [
            untrusted_tool_spec(
                name,
                mcp_tools[name][0],
                _schema_of(tool),
                spec_tools[name].description,
            )
            if name in withheld
            else tool
            for name, tool in agent_tools().items()
        ]

    def with_tools(
        name: str, access: ModelAccess, withheld: frozenset[str] = frozenset()
    ) -> Runnable[LanguageModelInput, BaseMessage]:
        # Bound once per compiled graph, model, key and trusted view: binding converts
        # every tool's schema. A budget's fallback model gets the same tools
        # (engine/compiler/model_calls.py).
        key = (name, access, withheld)
        if key not in bound:
            found = agent_tools()
            base = ctx.model(name, access)
            if len(bound) >= MODELS_KEPT:  # keys rotate: the oldest binding goes
                del bound[next(iter(bound))]
            bound[key] = base.bind_tools(shown(withheld)) if found else base
        return bound[key]

    async def untrusted(scope: Scope) -> frozenset[str]:
        """The agent's tools whose server the run's tenant does not trust (noted once a step)."""
        if not mcp_tools:
            return frozenset()
        trust = await trust_of(scope.config)
        withheld = trust.untrusted({name: server for name, (_, server) in mcp_tools.items()})
        if withheld:
            names = sorted(withheld)
            server_names = sorted({mcp_tools[name][0] for name in withheld})
            emit(
                {"plait": "mcp_untrusted", "node": node_id, "tools": names, "servers": server_names}
            )
            await audit(
                scope.config,
                "mcp_untrusted",
                node=node_id,
                tool=None,
                actor=f"node:{node_id}",
                detail={"tools": names, "servers": server_names},
            )
        return withheld

    if routes is None:
        routes = definition.routes if definition else []
    router = ModelRouter(node_id, model_name, routes) if routes else None
    window = context if context is not None else (definition.context if definition else None)

    def summarizer(model: str) -> Summarize:
        async def summarize(messages: Sequence[BaseMessage]) -> str:
            writer = (window.summary_model if window else None) or model
            asked = [SystemMessage(SUMMARY_PROMPT), HumanMessage(transcript(messages))]
            return (await invoke_model(ctx, writer, asked)).text

        return summarize

    async def compute(scope: Scope) -> Any:
        # Its model and tool calls, their audit records and log lines carry its role.
        with acting_as(agent or node_id):
            return await loop(scope)

    async def loop(scope: Scope) -> Any:
        await ctx.load_tools(tool_names)
        by_name = agent_tools()
        withheld = await untrusted(scope)

        def model_for(name: str, access: ModelAccess) -> Runnable[LanguageModelInput, BaseMessage]:
            return with_tools(name, access, withheld)

        rendered = scope.render(system) if system else None
        if as_data_:  # tool results are marked as data: the system prompt says so
            rendered = with_data_line(rendered)
        head: list[BaseMessage] = [SystemMessage(rendered)] if rendered else []
        history = list(scope.raw.get(messages_field) or []) if messages_field else []
        new: list[BaseMessage] = [HumanMessage(scope.render(prompt))]
        repair = ToolCallRepair(ctx, model_name, node_id)  # unparsable tool-call arguments
        # `limits.parallel_tool_calls`: at most that many of one reply's calls run at once.
        slots = asyncio.Semaphore(parallel) if parallel is not None else None

        async def limited(call: ToolCall, position: tuple[int, int]) -> ToolMessage:
            if slots is None:
                return await _call(by_name, call, scope, node_id, position, as_data_)
            async with slots:
                return await _call(by_name, call, scope, node_id, position, as_data_)

        # What the model is sent: the conversation, trimmed or summarised by `context`.
        sent = [*history, *new]
        usage, model = StepUsage(), None
        for iteration in range(limit):
            model = router.pick(scope, usage, model) if router is not None else model_name
            if window is not None:
                head, sent = await fit(window, head, sent, summarizer(model))
            reply = await invoke_model(ctx, model, [*head, *sent], model_for=model_for)
            usage.add(reply)
            added: list[BaseMessage] = [reply]
            calls = reply.tool_calls if isinstance(reply, AIMessage) else []
            repairs = repair.messages(reply)
            if not calls and not repairs:
                new.append(reply)
                if messages_field is not None:
                    scope.updates[messages_field] = new if extend else [*history, *new]
                return reply.text
            added.extend(
                await asyncio.gather(
                    *(limited(call, (iteration, index)) for index, call in enumerate(calls))
                )
            )
            added.extend(repairs)
            new.extend(added)
            sent.extend(added)
        raise NodeError(node_id, f"the agent did not finish within max_iterations={limit}")

    return compute


def _schema_of(tool: BaseTool) -> dict[str, Any]:
    """An MCP tool's input schema: the server's JSON Schema, as it was loaded."""
    schema = tool.args_schema
    assert isinstance(schema, dict), f"MCP tool {tool.name!r} has no JSON Schema"
    return schema


async def _call(
    tools: dict[str, BaseTool],
    call: ToolCall,
    scope: Scope,
    node_id: str,
    position: tuple[int, int],
    as_data_: bool = False,
) -> ToolMessage:
    """Run one tool call through the gateway; an error goes back to the model as its answer.

    ``position`` is (agent iteration, index of the call in the model's reply):
    with the tool and its arguments it identifies the call when the node re-runs.
    """
    call_id = call.get("id") or ""
    tool = tools.get(call["name"])
    if tool is None:
        # The allowlist: tools holds exactly the agent's list (engine/tools/allowlist.py).
        return await refuse(
            scope.config, node=node_id, tool=call["name"], allowed=tools, call_id=call_id
        )
    try:
        value = await call_tool(
            tool,
            call["args"],
            config=scope.config,
            node=node_id,
            position=position,
            item=scope.index,
        )
    except (GraphBubbleUp, StopsRun):  # StopsRun: loop detection ends the run, not the call
        raise
    except Exception as exc:
        text = f"error: {type(exc).__name__}: {exc}"
        return ToolMessage(text, tool_call_id=call_id, name=call["name"], status="error")
    if as_data_:
        return ToolMessage(as_data(call["name"], value), tool_call_id=call_id, name=call["name"])
    content = value if isinstance(value, str) else json.dumps(value, default=str)
    return ToolMessage(content, tool_call_id=call_id, name=call["name"])


def build(node_id: str, node: AgentNode, ctx: CompileContext) -> Compute:
    """The ``agent`` node's work."""
    return agent_compute(
        ctx,
        node_id,
        agent=node.agent,
        model=node.model,
        system=node.system,
        tools=node.tools,
        max_iterations=node.max_iterations,
        prompt=node.prompt,
        messages_field=node.messages,
        tool_results=node.tool_results,
        routes=node.routes,
        context=node.context,
    )
