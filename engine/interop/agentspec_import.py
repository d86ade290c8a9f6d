"""An Open Agent Spec ``Flow`` or ``Agent`` (pyagentspec components) as Plait spec data.

The reverse of ``agentspec_export``: start-node inputs and end-node outputs are
the state's input and output fields, a node's outputs are the fields the data
edges carry them to, placeholders ``{{ x }}`` become ``{{ state.<field> }}``,
and a ``BranchingNode`` is a router. What needs a person's attention (a server
tool's implementation, a prompt made up for an agent) is returned as notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pyagentspec.agent import Agent
from pyagentspec.component import Component
from pyagentspec.flows.flow import Flow
from pyagentspec.flows.node import Node
from pyagentspec.flows.nodes import (
    AgentNode,
    BranchingNode,
    EndNode,
    FlowNode,
    LlmNode,
    MapNode,
    StartNode,
    ToolNode,
)
from pyagentspec.llms import LlmConfig, OllamaConfig, OpenAiCompatibleConfig, OpenAiConfig
from pyagentspec.mcp import MCPTool, StdioTransport
from pyagentspec.mcp.clienttransport import RemoteTransport
from pyagentspec.property import Property
from pyagentspec.tools import Tool

from plait.engine.interop.agentspec_export import branching_label
from plait.engine.interop.agentspec_report import PLAIT_METADATA
from plait.engine.spec.models import API_VERSION, END, FUNCTION_REF_PATTERN, START

_PLACEHOLDER = re.compile(r"\{\{(\s*)(\w+)(\s*)\}\}")
_FIELD_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "object": "object",
    "array": "list",
}


class AgentSpecImportError(ValueError):
    """The Agent Spec document uses something Plait cannot run; the message names it."""


def identifier(name: str) -> str:
    """``name`` as a Plait identifier: other characters become ``_``."""
    cleaned = re.sub(r"\W", "_", name.strip()) or "node"
    return f"_{cleaned}" if cleaned[0].isdigit() else cleaned


def spec_name(name: str) -> str:
    """``name`` as a Plait graph name (lower case, digits and dashes)."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:63].strip("-")
    return cleaned or "imported"


@dataclass
class ImportedSpecs:
    """Plait spec data for the document's flow, and for each subflow a ``subgraph`` names."""

    data: dict[str, Any]
    #: ``name@version`` -> (spec data, the subflow's ``metadata.plait.restore`` patches).
    children: dict[str, tuple[dict[str, Any], list[Any]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def restore_patches(component: Component) -> list[Any] | None:
    """The patches a Plait export kept in ``component``'s ``metadata.plait.restore``."""
    entry = (component.metadata or {}).get(PLAIT_METADATA)
    patches = entry.get("restore") if isinstance(entry, dict) else None
    return patches if isinstance(patches, list) else None


def spec_data(component: Component) -> ImportedSpecs:
    """Plait spec data for ``component`` (a Flow or an Agent), read natively."""
    result = ImportedSpecs(data={})
    if isinstance(component, Agent):
        result.data = _AgentImporter(component, result).data()
    elif isinstance(component, Flow):
        result.data = _FlowImporter(component, result).data()
    else:
        raise AgentSpecImportError(
            f"a {component.component_type} cannot be a Plait graph: import a Flow or an Agent"
        )
    return result


def _state_field(prop: Property) -> dict[str, Any]:
    schema = prop.json_schema
    found: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _FIELD_TYPES:
        found["type"] = _FIELD_TYPES[kind]
    if schema.get("description") is not None:
        found["description"] = schema["description"]
    if schema.get("default") is not None:
        found["default"] = schema["default"]
    return found


def _without_title(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if key != "title"}


def _model(config: LlmConfig) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if isinstance(config, OllamaConfig):
        found = {"provider": "ollama", "model": config.model_id, "base_url": config.url}
    elif isinstance(config, OpenAiCompatibleConfig):
        found = {"provider": "openai", "model": config.model_id, "base_url": config.url}
    elif isinstance(config, OpenAiConfig):
        found = {"provider": "openai", "model": config.model_id}
    else:
        provider = config.provider or "openai"
        found = {"provider": provider}
        if config.model_id != provider:
            found["model"] = config.model_id
        if config.url is not None:
            found["base_url"] = config.url
    generation = config.default_generation_parameters
    if generation is not None and generation.temperature is not None:
        found["temperature"] = generation.temperature
    if generation is not None and generation.max_tokens is not None:
        found["max_tokens"] = generation.max_tokens
    return found


@dataclass
class _Definitions:
    """Models, tools, MCP servers and agents met while reading nodes, by Plait name."""

    result: ImportedSpecs
    models: dict[str, Any] = field(default_factory=dict)
    tools: dict[str, Any] = field(default_factory=dict)
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    agents: dict[str, Any] = field(default_factory=dict)

    def model(self, config: LlmConfig) -> str:
        name = identifier(config.name)
        self.models.setdefault(name, _model(config))
        return name

    def tool(self, tool: Tool) -> str:
        name = identifier(tool.name)
        if name in self.tools:
            return name
        found: dict[str, Any] = {}
        if isinstance(tool, MCPTool):
            server = identifier(tool.client_transport.name)
            found = {"kind": "mcp", "server": server}
            if tool.name != name:
                found["tool"] = tool.name
            if server not in self.mcp_servers:
                self.mcp_servers[server] = self.mcp_server(tool)
        else:
            found = {"function": f"tools:{name}"}
            self.result.notes.append(
                f"tool `{name}` ({tool.component_type}): Agent Spec names no implementation; "
                f"write the python function and set `function: module:function` "
                f"(now `tools:{name}`)"
            )
        if tool.description:
            found["description"] = tool.description
        self.tools[name] = found
        return name

    def mcp_server(self, tool: MCPTool) -> dict[str, Any]:
        transport = tool.client_transport
        if isinstance(transport, StdioTransport):
            found: dict[str, Any] = {"transport": "stdio", "command": transport.command}
            if transport.args:
                found["args"] = list(transport.args)
            if transport.env:
                found["env"] = dict(transport.env)
            if transport.cwd:
                found["cwd"] = transport.cwd
            self.result.notes.append(
                f"MCP server `{identifier(transport.name)}` starts `{transport.command}` when the "
                "spec runs: check that command before you run it"
            )
            return found
        if isinstance(transport, RemoteTransport):
            return {"transport": "http", "url": transport.url}
        raise AgentSpecImportError(f"MCP transport {transport.component_type} is not supported")

    def body(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key in ("models", "tools", "mcp_servers", "agents"):
            if getattr(self, key):
                found[key] = getattr(self, key)
        return found


class _AgentImporter:
    """A lone Agent: one agent node between START and END."""

    def __init__(self, agent: Agent, result: ImportedSpecs) -> None:
        self.agent = agent
        self.definitions = _Definitions(result)

    def data(self) -> dict[str, Any]:
        agent = self.agent
        node_id = identifier(agent.name)
        inputs = [p.title for p in agent.inputs or []]
        outputs = [p.title for p in agent.outputs or []]
        state = {p.title: _state_field(p) for p in [*(agent.inputs or []), *(agent.outputs or [])]}
        node: dict[str, Any] = {
            "kind": "agent",
            "model": self.definitions.model(agent.llm_config),
            "system": _with_state(agent.system_prompt, {}),
            "prompt": _agent_prompt(node_id, inputs, self.definitions.result),
        }
        if agent.tools:
            node["tools"] = [self.definitions.tool(tool) for tool in agent.tools]
        if outputs:
            node["output"] = outputs[0]
        body: dict[str, Any] = {"state": state, "input": inputs, "output": outputs}
        body |= self.definitions.body()
        body["nodes"] = {node_id: node}
        body["edges"] = [{"from": START, "to": node_id}, {"from": node_id, "to": END}]
        return _envelope(agent, body)


def _envelope(component: Component, body: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": spec_name(component.name),
        "version": str((component.metadata or {}).get("version", "1.0.0")),
    }
    if component.description:
        metadata["description"] = component.description
    labels = (component.metadata or {}).get("labels")
    if isinstance(labels, dict) and labels:
        metadata["labels"] = {str(k): str(v) for k, v in labels.items()}
    return {"apiVersion": API_VERSION, "kind": "Graph", "metadata": metadata, "spec": body}


def _with_state(template: str, fields: dict[str, str]) -> str:
    """``{{ x }}`` -> ``{{ state.<field of x> }}``."""
    return _PLACEHOLDER.sub(
        lambda m: f"{{{{{m.group(1)}state.{fields.get(m.group(2), m.group(2))}{m.group(3)}}}}}",
        template,
    )


def _agent_prompt(node_id: str, fields: list[str], result: ImportedSpecs) -> str:
    if not fields:
        result.notes.append(
            f"agent `{node_id}`: an Agent Spec agent reads the conversation; Plait's agent node "
            "needs a user message: `prompt` is `Continue.`, write a better one"
        )
        return "Continue."
    result.notes.append(
        f"agent `{node_id}`: an Agent Spec agent reads the conversation; Plait's agent node "
        f"needs a user message: `prompt` lists {', '.join(fields)}"
    )
    return "\n".join(f"{{{{ state.{name} }}}}" for name in fields)


class _FlowImporter:
    def __init__(self, flow: Flow, result: ImportedSpecs) -> None:
        self.flow = flow
        self.result = result
        self.definitions = _Definitions(result)
        self.ids: dict[str, str] = {}
        for node in flow.nodes:
            if isinstance(node, StartNode):
                self.ids[node.id] = START
            elif isinstance(node, EndNode):
                self.ids[node.id] = END
            else:
                base, index = identifier(node.name), 2
                name = base
                while name in self.ids.values() or name in (START, END):
                    name, index = f"{base}_{index}", index + 1
                self.ids[node.id] = name
        self.state: dict[str, dict[str, Any]] = {}

    def field_of(self, node: Node, output: str) -> str:
        """The state field a node's output writes: the one input title its data edges feed."""
        if isinstance(node, StartNode):
            return output
        titles = {
            edge.destination_input
            for edge in self.flow.data_flow_connections or []
            if edge.source_node.id == node.id and edge.source_output == output
        }
        return titles.pop() if len(titles) == 1 else output

    def source_of(self, node: Node, title: str) -> str | None:
        """The state field feeding a node's input, if data edges feed it from one field."""
        fields = {
            self.field_of(edge.source_node, edge.source_output)
            for edge in self.flow.data_flow_connections or []
            if edge.destination_node.id == node.id and edge.destination_input == title
        }
        return fields.pop() if len(fields) == 1 else None

    def read(self, node: Node, prop: Property) -> str:
        """The field an input reads; an input nothing feeds reads a field of its own name."""
        source = self.source_of(node, prop.title)
        if source is None:
            self.state.setdefault(prop.title, _state_field(prop))
            return prop.title
        return source

    def written(self, node: Node) -> list[tuple[str, Property]]:
        """``(field, output)`` per output of ``node`` a data edge carries or that is not the
        default ``generated_text``."""
        found = []
        for prop in node.outputs or []:
            carried = any(
                edge.source_node.id == node.id and edge.source_output == prop.title
                for edge in self.flow.data_flow_connections or []
            )
            if carried or prop.title != LlmNode.DEFAULT_OUTPUT:
                name = self.field_of(node, prop.title)
                self.state.setdefault(name, _state_field(prop))
                found.append((name, prop))
        return found

    def data(self) -> dict[str, Any]:
        flow = self.flow
        start = flow.start_node
        ends = [node for node in flow.nodes if isinstance(node, EndNode)]
        for prop in start.outputs or []:
            self.state[prop.title] = _state_field(prop)
        outputs: list[str] = []
        for end in ends:
            for prop in end.inputs or []:
                self.state.setdefault(prop.title, _state_field(prop))
                outputs += [prop.title] if prop.title not in outputs else []
        nodes = {
            self.ids[node.id]: self.node(node)
            for node in flow.nodes
            if not isinstance(node, StartNode | EndNode)
        }
        body: dict[str, Any] = {
            "state": self.state,
            "input": [prop.title for prop in start.outputs or []],
            "output": outputs,
        }
        body |= self.definitions.body()
        body["nodes"] = nodes
        body["edges"] = self.edges()
        return _envelope(flow, body)

    def edges(self) -> list[dict[str, Any]]:
        groups: dict[str, list[Any]] = {}
        for edge in self.flow.control_flow_connections:
            groups.setdefault(edge.from_node.id, []).append(edge)
        found: list[dict[str, Any]] = []
        for edges in groups.values():
            source = edges[0].from_node
            origin = self.ids[source.id]
            if isinstance(source, BranchingNode):
                by_branch = {e.from_branch: self.ids[e.to_node.id] for e in edges}
                routes = {
                    key: by_branch[branch]
                    for key, branch in source.mapping.items()
                    if branch in by_branch
                }
                default = BranchingNode.DEFAULT_BRANCH
                if default in by_branch and default not in routes:
                    routes[default] = by_branch[default]
                found.append({"from": origin, "route": "result", "to": routes})
                continue
            targets = list(dict.fromkeys(self.ids[e.to_node.id] for e in edges))
            if len(targets) > 1:
                self.result.notes.append(
                    f"`{origin}` continues to {', '.join(targets)} at once (several control "
                    "edges on one branch)"
                )
            found += [{"from": origin, "to": target} for target in targets]
        return found

    # ------------------------------------------------------------------ nodes

    def node(self, node: Node) -> dict[str, Any]:
        if isinstance(node, LlmNode):
            return self.llm_node(node)
        if isinstance(node, AgentNode):
            return self.agent_node(node)
        if isinstance(node, ToolNode):
            return self.tool_node(node.tool, node, {})
        if isinstance(node, BranchingNode):
            # Agent Spec takes the default branch for a value it has no key for; a Plait
            # router's label must be one it declares, so the label says "default" then.
            [prop] = node.inputs or [Property(json_schema={"title": "branch", "type": "string"})]
            keys = list(node.mapping)
            default = BranchingNode.DEFAULT_BRANCH
            return {
                "kind": "router",
                "label": branching_label(self.read(node, prop), keys),
                "labels": [*keys, *([default] if default not in keys else [])],
            }
        if isinstance(node, MapNode):
            return self.map_node(node)
        if isinstance(node, FlowNode):
            return self.flow_node(node)
        raise AgentSpecImportError(
            f"node `{node.name}` is an {node.component_type}, which Plait cannot import (it "
            "imports StartNode, EndNode, LlmNode, AgentNode, ToolNode, BranchingNode, MapNode "
            "and FlowNode)"
        )

    def writes(self, node: Node, structured: bool = False) -> dict[str, Any]:
        written = self.written(node)
        if len(written) == 1 and not structured:
            return {"output": written[0][0]}
        return (
            {"writes": {name: f"result.{prop.title}" for name, prop in written}} if written else {}
        )

    def llm_node(self, node: LlmNode) -> dict[str, Any]:
        fields = {prop.title: self.read(node, prop) for prop in node.inputs or []}
        found: dict[str, Any] = {
            "kind": "llm",
            "model": self.definitions.model(node.llm_config),
            "prompt": _with_state(node.prompt_template, fields),
        }
        written = self.written(node)
        if len(written) == 1:
            name, prop = written[0]
            if prop.json_schema.get("type") != "string":
                found["schema"] = _without_title(prop.json_schema)
            found["output"] = name
        elif written:
            found["schema"] = {
                "type": "object",
                "properties": {p.title: _without_title(p.json_schema) for _, p in written},
                "required": [p.title for _, p in written],
            }
            found["writes"] = {name: f"result.{prop.title}" for name, prop in written}
        return found

    def agent_node(self, node: AgentNode) -> dict[str, Any]:
        agent = node.agent
        if not isinstance(agent, Agent):
            raise AgentSpecImportError(
                f"node `{node.name}` runs a {agent.component_type}; Plait imports Agents only"
            )
        node_id = self.ids[node.id]
        fields = {prop.title: self.read(node, prop) for prop in node.inputs or []}
        definition: dict[str, Any] = {
            "model": self.definitions.model(agent.llm_config),
            "system": _with_state(agent.system_prompt, fields),
        }
        if agent.tools:
            definition["tools"] = [self.definitions.tool(tool) for tool in agent.tools]
        prompt_fields = list(dict.fromkeys(fields.values())) or [
            prop.title for prop in self.flow.start_node.outputs or []
        ]
        found: dict[str, Any] = {"kind": "agent"}
        if identifier(agent.name) == node_id:
            found |= definition
        else:
            found["agent"] = identifier(agent.name)
            self.definitions.agents.setdefault(identifier(agent.name), definition)
        found["prompt"] = _agent_prompt(node_id, prompt_fields, self.result)
        return found | self.writes(node)

    def arguments(self, node: Node, tool: Tool, item: Node | None = None) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for prop in tool.inputs or []:
            if item is not None and any(
                edge.source_node.id == item.id and edge.destination_input == prop.title
                for edge in self.flow.data_flow_connections or []
            ):
                found[prop.title] = "item"
            elif (
                self.source_of(node, prop.title) is not None
                or prop.default is Property.empty_default
            ):
                found[prop.title] = f"state.{self.read(node, prop)}"
            elif isinstance(prop.default, str):
                found[prop.title] = {"value": prop.default}
            else:
                found[prop.title] = prop.default
        return found

    def tool_node(self, tool: Tool, node: Node, found: dict[str, Any]) -> dict[str, Any]:
        if re.fullmatch(FUNCTION_REF_PATTERN, tool.name) and not isinstance(tool, MCPTool):
            found |= {"kind": "python", "function": tool.name}
        else:
            found |= {"kind": "tool", "tool": self.definitions.tool(tool)}
        args = self.arguments(node, tool)
        if args:
            found["args"] = args
        return found | self.writes(node)

    def map_node(self, node: MapNode) -> dict[str, Any]:
        inner = [n for n in node.subflow.nodes if not isinstance(n, StartNode | EndNode)]
        if len(inner) != 1 or not isinstance(inner[0], ToolNode):
            raise AgentSpecImportError(
                f"map node `{node.name}`: Plait imports a MapNode whose subflow is one ToolNode"
            )
        [iterated] = node.inputs or []
        work = inner[0]
        sub = _FlowImporter(node.subflow, self.result)
        do: dict[str, Any] = sub.tool_node(work.tool, work, {})
        args = sub.arguments(work, work.tool, item=node.subflow.start_node)
        do.pop("output", None)
        do.pop("writes", None)
        if args:
            do["args"] = args
        self.definitions.tools |= sub.definitions.tools
        self.definitions.mcp_servers |= sub.definitions.mcp_servers
        found: dict[str, Any] = {
            "kind": "map",
            "items": f"state.{self.read(node, iterated)}",
            "do": do,
        }
        return found | self.writes(node)

    def flow_node(self, node: FlowNode) -> dict[str, Any]:
        child = _FlowImporter(node.subflow, self.result).data()
        ref = f"{child['metadata']['name']}@{child['metadata']['version']}"
        if child["spec"]["nodes"]:  # a subflow with no steps stands for a node Plait restores
            self.result.children.setdefault(ref, (child, restore_patches(node.subflow) or []))
        found: dict[str, Any] = {"kind": "subgraph", "ref": ref}
        inputs = {
            prop.title: f"state.{self.source_of(node, prop.title)}"
            for prop in node.inputs or []
            if self.source_of(node, prop.title) is not None
        }
        if inputs:
            found["input"] = inputs
        return found | self.writes(node, structured=True)
