"""A Plait spec as an Open Agent Spec ``Flow`` (or ``Agent``), built with pyagentspec.

Plait's shared state becomes data flow: each node's inputs are the state fields
it reads (``state.<field>`` arguments and ``{{ state.<field> }}`` placeholders),
its outputs the fields it writes (``result`` and ``result.<field>``), and a data
edge joins every writer of a field to every reader. What Agent Spec cannot say
is found by importing the document back (``agentspec_report``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyagentspec.agent import Agent
from pyagentspec.flows.edges import ControlFlowEdge, DataFlowEdge
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
from pyagentspec.llms import (
    LlmConfig,
    OllamaConfig,
    OpenAiCompatibleConfig,
    OpenAiConfig,
)
from pyagentspec.llms.llmgenerationconfig import LlmGenerationConfig
from pyagentspec.mcp import MCPTool, StdioTransport, StreamableHTTPTransport
from pyagentspec.mcp.clienttransport import ClientTransport
from pyagentspec.property import Property, json_schema_is_castable_to
from pyagentspec.templating import get_placeholders_from_string
from pyagentspec.tools import ServerTool, Tool

from plait.engine.spec.models import (
    END,
    START,
    GraphSpec,
    LiteralArgument,
    PythonNode,
    RouteEdge,
    RouterNode,
    StaticEdge,
    SubgraphNode,
)
from plait.engine.spec.models import (
    AgentNode as PlaitAgentNode,
)
from plait.engine.spec.models import (
    LlmNode as PlaitLlmNode,
)
from plait.engine.spec.models import (
    MapNode as PlaitMapNode,
)
from plait.engine.spec.models import (
    ToolNode as PlaitToolNode,
)

#: ``{{ state.<field> }}``: the one Jinja form that is an Agent Spec placeholder.
_STATE_PLACEHOLDER = re.compile(r"\{\{(\s*)state\.(\w+)(\s*)\}\}")
_STATE_REF = re.compile(r"\s*state\.(\w+)\s*")
_DEFAULT = '"default"'
_BRANCHING = re.compile(r'\s*state\.(\w+) in (\[.*\]) \? state\.(\w+) : "default"\s*')
_RESULT_REF = re.compile(r"\s*result(?:\.(\w+))?\s*")
_JSON_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "object": "object",
    "list": "array",
}

#: Finds the spec a ``subgraph`` node's ``ref`` (``name@version``) names, if it is at hand.
Resolver = Callable[[str], GraphSpec | None]
#: Exports a subgraph's spec as the subflow of its FlowNode.
Subflow = Callable[[GraphSpec], Flow]


def to_placeholders(template: str) -> str:
    """``{{ state.x }}`` -> ``{{ x }}``; the rest of the template is kept as written."""
    return _STATE_PLACEHOLDER.sub(r"{{\1\2\3}}", template)


def branching_label(field_name: str, keys: list[str]) -> str:
    """The router label of a BranchingNode: its input when it is a key, else ``"default"``."""
    return f"state.{field_name} in {json.dumps(keys)} ? state.{field_name} : {_DEFAULT}"


def branch_on(label: str, labels: list[str]) -> tuple[str, list[str]] | None:
    """``(field, keys)`` of a router a BranchingNode can be: a :func:`branching_label`, or
    ``state.<field>`` itself."""
    if match := _STATE_REF.fullmatch(label):
        return match.group(1), labels
    match = _BRANCHING.fullmatch(label)
    if match is None or match.group(1) != match.group(3):
        return None
    try:
        keys = json.loads(match.group(2))
    except ValueError:
        return None
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        return None
    return match.group(1), keys


def native_outputs(node: Any) -> list[tuple[str, str | None]]:
    """``(field, attribute)`` per write Agent Spec can carry: ``result`` or ``result.<field>``."""
    found: list[tuple[str, str | None]] = []
    if node.output is not None:
        found.append((node.output, None))
    for name, source in node.writes.items():
        match = _RESULT_REF.fullmatch(source)
        if match and match.group(1) in (None, name):
            found.append((name, match.group(1)))
    return found


def build_component(
    spec: GraphSpec,
    resolve: Resolver | None = None,
    subflow: Subflow | None = None,
    as_flow: bool = False,
) -> Flow | Agent:
    """The Agent Spec component of ``spec``: an ``Agent`` for a single-agent spec (unless
    ``as_flow``), else a Flow. ``subflow`` exports the specs ``resolve`` finds for subgraphs."""
    exporter = _FlowExporter(spec, resolve, subflow)
    agent = None if as_flow else exporter.single_agent()
    return agent if agent is not None else exporter.flow()


@dataclass
class _FlowExporter:
    spec: GraphSpec
    resolve: Resolver | None
    subflow: Subflow | None
    llms: dict[str, LlmConfig] = field(default_factory=dict)
    transports: dict[str, ClientTransport] = field(default_factory=dict)
    #: field -> (node, output title) of every node that writes it.
    writers: dict[str, list[tuple[Node, str]]] = field(default_factory=dict)
    #: (node, input title, field) of every input fed from the state.
    reads: list[tuple[Node, str, str]] = field(default_factory=list)

    def schema(self, name: str, title: str | None = None) -> dict[str, Any]:
        """The JSON Schema of state field ``name`` as a property titled ``title``."""
        schema: dict[str, Any] = {"title": title or name}
        state = self.spec.spec.state.get(name)
        if state is None:
            return schema
        if state.type in _JSON_TYPES:
            schema["type"] = _JSON_TYPES[state.type]
        elif state.type == "messages":
            schema |= {"type": "array", "items": {"type": "object"}}
        if state.description is not None:
            schema["description"] = state.description
        if state.default is not None:
            schema["default"] = state.default
        return schema

    def prop(self, name: str, title: str | None = None) -> Property:
        return Property(json_schema=self.schema(name, title))

    def single_agent(self) -> Agent | None:
        body = self.spec.spec
        edges = [(e.from_, e.to) for e in body.edges if isinstance(e, StaticEdge)]
        if len(body.nodes) != 1 or len(edges) != len(body.edges):
            return None
        [(name, node)] = body.nodes.items()
        if not isinstance(node, PlaitAgentNode) or sorted(edges) != sorted(
            [(START, name), (name, END)]
        ):
            return None
        # The agent is the graph: it takes the graph's name (import names the node after it).
        agent = self.agent(name, node, self.spec.metadata.name)
        agent.description = self.spec.metadata.description
        agent.metadata = self.metadata()
        return agent

    def metadata(self) -> dict[str, Any]:
        meta = self.spec.metadata
        found: dict[str, Any] = {"version": meta.version}
        if meta.labels:
            found["labels"] = dict(meta.labels)
        return found

    def flow(self) -> Flow:
        body = self.spec.spec
        start = StartNode(name="start", inputs=[self.prop(f) for f in body.input_fields])
        for field_name in body.input_fields:
            self.writers.setdefault(field_name, []).append((start, field_name))
        end = EndNode(name="end", outputs=[self.prop(f) for f in body.output_fields])
        self.reads += [(end, f, f) for f in body.output_fields]
        nodes: dict[str, Node] = {START: start, END: end}
        for node_id, node in body.nodes.items():
            nodes[node_id] = self.node(node_id, node)
        return Flow(
            name=self.spec.metadata.name,
            description=self.spec.metadata.description,
            start_node=start,
            nodes=list(nodes.values()),
            control_flow_connections=self.control_edges(nodes),
            data_flow_connections=self.data_edges(),
            metadata=self.metadata(),
        )

    def control_edges(self, nodes: dict[str, Node]) -> list[ControlFlowEdge]:
        edges: list[ControlFlowEdge] = []

        def connect(source: str, target: str, branch: str | None = None) -> None:
            if source == START and any(e.from_node is nodes[START] for e in edges):
                return  # an Agent Spec flow starts in one place; the report names the rest
            edges.append(
                ControlFlowEdge(
                    name=f"{source}_to_{target}" + (f"_{branch}" if branch else ""),
                    from_node=nodes[source],
                    from_branch=branch,
                    to_node=nodes[target],
                )
            )

        for edge in self.spec.spec.edges:
            if isinstance(edge, StaticEdge):
                connect(edge.from_, edge.to)
            elif (
                isinstance(edge, RouteEdge)
                and edge.route.strip() == "result"
                and isinstance(nodes[edge.from_], BranchingNode)
            ):
                for label, target in edge.to.items():
                    connect(edge.from_, target, label)
                if edge.default is not None:
                    connect(edge.from_, edge.default, BranchingNode.DEFAULT_BRANCH)
            else:
                targets = (
                    [case.to for case in edge.switch] + [edge.default]
                    if not isinstance(edge, RouteEdge)
                    else [*edge.to.values(), *([edge.default] if edge.default else [])]
                )
                for target in dict.fromkeys(targets):
                    connect(edge.from_, target)
        return edges

    def data_edges(self) -> list[DataFlowEdge]:
        edges = []
        for node, title, name in self.reads:
            destination = next(p for p in node.inputs or [] if p.title == title)
            for source, output in self.writers.get(name, []):
                if source is node:
                    continue
                produced = next(p for p in source.outputs or [] if p.title == output)
                if not json_schema_is_castable_to(produced.json_schema, destination.json_schema):
                    continue
                edges.append(
                    DataFlowEdge(
                        name=f"{source.name}.{output}_to_{node.name}.{title}",
                        source_node=source,
                        source_output=output,
                        destination_node=node,
                        destination_input=title,
                    )
                )
        return edges

    # ------------------------------------------------------------------ nodes

    def node(self, node_id: str, node: Any) -> Node:
        if isinstance(node, PlaitLlmNode):
            return self.llm_node(node_id, node)
        if isinstance(node, PlaitAgentNode):
            return self.wired(AgentNode(name=node_id, agent=self.agent(node_id, node)))
        if isinstance(node, PlaitToolNode | PythonNode):
            return self.tool_node(node_id, node)
        if isinstance(node, RouterNode) and (branch := branch_on(node.label, node.labels)):
            field_name, keys = branch
            branching = BranchingNode(
                name=node_id,
                mapping={key: key for key in keys},
                inputs=[Property(json_schema={"title": field_name, "type": "string"})],
            )
            self.reads.append((branching, field_name, field_name))
            return branching
        if isinstance(node, PlaitMapNode) and node.do.kind in ("tool", "python"):
            return self.map_node(node_id, node)
        if isinstance(node, SubgraphNode):
            return self.subgraph_node(node_id, node)
        return self.opaque_node(node_id, node)

    def wired(self, component: Node) -> Node:
        """Record what ``component`` reads (placeholders of state fields) and writes."""
        for prop in component.inputs or []:
            if prop.title in self.spec.spec.state:
                self.reads.append((component, prop.title, prop.title))
        for prop in component.outputs or []:
            self.writers.setdefault(prop.title, []).append((component, prop.title))
        return component

    def inputs_from_template(self, template: str) -> list[Property]:
        return [self.prop(name) for name in sorted(get_placeholders_from_string(template))]

    def llm_node(self, node_id: str, node: PlaitLlmNode) -> Node:
        prompt = to_placeholders(node.prompt or "")
        outputs: list[Property] = []
        for name, attribute in native_outputs(node):
            if node.schema_ is None and attribute is None:
                outputs = [self.prop(name)]
                break
            if node.schema_ is not None and attribute is None:
                outputs = [Property(json_schema={**node.schema_, "title": name})]
                break
            properties = (node.schema_ or {}).get("properties", {})
            if attribute in properties:
                outputs.append(Property(json_schema={**properties[attribute], "title": name}))
        component = LlmNode(
            name=node_id,
            llm_config=self.llm(node.model),
            prompt_template=prompt,
            inputs=self.inputs_from_template(prompt),
            outputs=outputs or None,
        )
        return self.wired(component)

    def agent(self, node_id: str, node: PlaitAgentNode, name: str | None = None) -> Agent:
        named = self.spec.spec.agents.get(node.agent or "")
        system = to_placeholders(node.system or (named.system if named else None) or "")
        tools = self.spec.spec.agent_tools(node.agent, node.tools)
        model = node.model or (named.model if named else "")
        return Agent(
            name=name or node.agent or node_id,
            llm_config=self.llm(model),
            system_prompt=system,
            tools=[self.tool(tool) for tool in tools],
            inputs=self.inputs_from_template(system),
            outputs=[self.prop(name) for name, _ in native_outputs(node)[:1]],
        )

    def tool_node(self, node_id: str, node: PlaitToolNode | PythonNode) -> Node:
        inputs, reads = self.arguments(node.args)
        outputs = [self.prop(name) for name, _ in native_outputs(node)[:1]]
        tool = (
            self.tool(node.tool, inputs, outputs)
            if isinstance(node, PlaitToolNode)
            else ServerTool(name=node.function, inputs=inputs, outputs=outputs)
        )
        component = ToolNode(name=node_id, tool=tool)
        self.reads += [(component, title, name) for title, name in reads]
        for prop in outputs:
            self.writers.setdefault(prop.title, []).append((component, prop.title))
        return component

    def arguments(
        self, args: dict[str, Any], item: str | None = None
    ) -> tuple[list[Property], list[tuple[str, str]]]:
        """Inputs of a call's arguments, and ``(input, state field)`` of those fed by state."""
        inputs, reads = [], []
        for title, value in args.items():
            if isinstance(value, str) and _STATE_REF.fullmatch(value):
                name = _field_of(value)
                inputs.append(self.prop(name, title))
                reads.append((title, name))
            elif item is not None and value == item:
                inputs.append(Property(json_schema={"title": title}))
            elif isinstance(value, LiteralArgument):
                inputs.append(Property(json_schema={"title": title, "default": value.value}))
            elif not isinstance(value, str):
                inputs.append(Property(json_schema={"title": title, "default": value}))
            else:
                inputs.append(Property(json_schema={"title": title}))
        return inputs, reads

    def map_node(self, node_id: str, node: PlaitMapNode) -> Node:
        inner_inputs, _ = self.arguments(node.do.args, item="item")
        result = Property(json_schema={"title": "result"})
        name = node.do.tool if node.do.kind == "tool" else node.do.function
        tool = (
            self.tool(name or "", inner_inputs, [result])
            if node.do.kind == "tool"
            else ServerTool(name=name or "", inputs=inner_inputs, outputs=[result])
        )
        inner = ToolNode(name=f"{node_id}_item", tool=tool)
        start = StartNode(name="start", inputs=[Property(json_schema={"title": "item"})])
        end = EndNode(name="end", outputs=[Property(json_schema={"title": "result"})])
        subflow = Flow(
            name=f"{node_id}_item",
            start_node=start,
            nodes=[start, inner, end],
            control_flow_connections=[
                ControlFlowEdge(name="start_to_item", from_node=start, to_node=inner),
                ControlFlowEdge(name="item_to_end", from_node=inner, to_node=end),
            ],
            data_flow_connections=[
                DataFlowEdge(
                    name=f"item_to_{title}",
                    source_node=start,
                    source_output="item",
                    destination_node=inner,
                    destination_input=title,
                )
                for title, value in node.do.args.items()
                if value == "item"
            ]
            + [
                DataFlowEdge(
                    name="result_to_end",
                    source_node=inner,
                    source_output="result",
                    destination_node=end,
                    destination_input="result",
                )
            ],
        )
        component = MapNode(name=node_id, subflow=subflow)
        if _STATE_REF.fullmatch(node.items):
            self.reads.append((component, "iterated_item", _field_of(node.items)))
        for name_, _ in native_outputs(node)[:1]:
            self.writers.setdefault(name_, []).append((component, "collected_result"))
        return component

    def subgraph_node(self, node_id: str, node: SubgraphNode) -> Node:
        child = self.resolve(node.ref) if self.resolve else None
        if child is not None and self.subflow is not None:
            subflow = self.subflow(child)
        else:
            subflow = self.stub_flow(
                node.ref.split("@")[0],
                list(node.input),
                [a or n for n, a in native_outputs(node)],
                {"version": node.ref.split("@")[1]},
            )
        component = FlowNode(name=node_id, subflow=subflow)
        titles = {p.title for p in component.inputs or []}
        for title, source in node.input.items():
            if title in titles and _STATE_REF.fullmatch(source):
                self.reads.append((component, title, _field_of(source)))
        outputs = {p.title for p in component.outputs or []}
        for name, attribute in native_outputs(node):
            if attribute is not None and attribute in outputs:
                self.writers.setdefault(name, []).append((component, attribute))
        return component

    def opaque_node(self, node_id: str, node: Any) -> Node:
        """A node Agent Spec has no kind for: a FlowNode whose subflow only passes through."""
        outputs = [name for name, attribute in native_outputs(node) if attribute is None][:1]
        subflow = self.stub_flow(f"plait-{node.kind}", [], outputs, {})
        component = FlowNode(name=node_id, subflow=subflow, description=node.description)
        for name in outputs:
            self.writers.setdefault(name, []).append((component, name))
        return component

    def stub_flow(
        self, name: str, inputs: list[str], outputs: list[str], metadata: dict[str, Any]
    ) -> Flow:
        start = StartNode(name="start", inputs=[Property(json_schema={"title": t}) for t in inputs])
        end = EndNode(name="end", outputs=[self.prop(t) for t in outputs])
        return Flow(
            name=name,
            start_node=start,
            nodes=[start, end],
            control_flow_connections=[
                ControlFlowEdge(name="start_to_end", from_node=start, to_node=end)
            ],
            metadata=metadata,
        )

    # ------------------------------------------------------------------ definitions

    def llm(self, name: str) -> LlmConfig:
        if name not in self.llms:
            self.llms[name] = _llm_config(name, self.spec.spec.models.get(name))
        return self.llms[name]

    def tool(
        self,
        name: str,
        inputs: list[Property] | None = None,
        outputs: list[Property] | None = None,
    ) -> Tool:
        definition = self.spec.spec.tools.get(name)
        description = definition.description if definition else None
        if inputs is None:
            parameters = (definition.parameters if definition else None) or {}
            inputs = [
                Property(json_schema={**schema, "title": title})
                for title, schema in parameters.get("properties", {}).items()
            ]
        if definition is not None and definition.kind == "mcp" and definition.server:
            return MCPTool(
                name=name,
                description=description,
                client_transport=self.transport(definition.server),
                inputs=inputs,
                outputs=outputs or [],
            )
        return ServerTool(name=name, description=description, inputs=inputs, outputs=outputs or [])

    def transport(self, name: str) -> ClientTransport:
        if name not in self.transports:
            server = self.spec.spec.mcp_servers[name]
            if server.transport == "stdio":
                self.transports[name] = StdioTransport(
                    name=name,
                    command=server.command or "",
                    args=[a for a in server.args if isinstance(a, str)],
                    env={k: v for k, v in server.env.items() if isinstance(v, str)} or None,
                    cwd=server.cwd,
                )
            else:
                self.transports[name] = StreamableHTTPTransport(name=name, url=server.url or "")
        return self.transports[name]


def _field_of(reference: str) -> str:
    match = _STATE_REF.fullmatch(reference)
    assert match is not None
    return match.group(1)


def _llm_config(name: str, model: Any) -> LlmConfig:
    if model is None:
        return LlmConfig(name=name, model_id=name)
    generation = None
    if model.temperature is not None or model.max_tokens is not None:
        generation = LlmGenerationConfig(temperature=model.temperature, max_tokens=model.max_tokens)
    model_id = model.model or model.provider
    if model.provider == "openai" and model.base_url is None:
        return OpenAiConfig(name=name, model_id=model_id, default_generation_parameters=generation)
    if model.provider == "openai":
        return OpenAiCompatibleConfig(
            name=name,
            model_id=model_id,
            url=model.base_url,
            default_generation_parameters=generation,
        )
    if model.provider == "ollama":
        return OllamaConfig(
            name=name,
            model_id=model_id,
            url=model.base_url or "http://localhost:11434",
            default_generation_parameters=generation,
        )
    return LlmConfig(
        name=name,
        model_id=model_id,
        provider=model.provider,
        url=model.base_url,
        default_generation_parameters=generation,
    )
