"""A spec as a LangGraph module: state, reducers, one function per node, edges, comments.

The module is Python a person can read and keep: the state is a ``TypedDict``
with LangGraph reducers, plain steps (python functions, routers, writes,
switch conditions that are paths) are plain Python, and the steps Plait
governs call ``plait.runtime`` (docs/eject.md). What does not map is listed
by :mod:`plait.engine.eject.unsupported`, never dropped silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plait.engine.eject import comments
from plait.engine.eject.python_text import identifier, literal, path_as_python
from plait.engine.eject.unsupported import NotEjectable, Unsupported, unsupported
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.expressions import cel_variables
from plait.engine.spec.models import (
    END,
    START,
    GraphSpec,
    RouteEdge,
    StateField,
    StaticEdge,
    SwitchEdge,
    duration_seconds,
)
from plait.engine.spec.registry import SpecRegistry

__all__ = ["VISITS_FIELD", "eject_source"]

#: The state field that counts visits of nodes with ``max_visits`` (not one of the spec's).
VISITS_FIELD = "_visits"

#: Keys every node kind has, which the generated function handles itself.
_NODE_KEYS = {"kind", "description", "writes", "output", "retry", "timeout", "max_visits"}
#: Node kinds whose work ``plait.runtime`` does: name of the runtime method.
_GOVERNED = {"llm": "llm", "agent": "agent", "approval": "approval", "map": "map"}
_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "object": "dict[str, Any]",
    "list": "list[Any]",
    "messages": "list[AnyMessage]",
    "any": "Any",
}
#: Reducers written into the module as small functions (the others are LangGraph's own).
_REDUCERS = {
    "append": (
        "def append(current: list[Any] | None, item: Any) -> list[Any]:\n"
        '    """`append`: each write is one more item."""\n'
        "    return [*(current or []), item]\n"
    ),
    "extend": (
        "def extend(current: list[Any] | None, items: Any) -> list[Any]:\n"
        '    """`extend`: a write of a list adds its items (a single value adds itself)."""\n'
        "    if items is None:\n"
        "        return [*(current or [])]\n"
        "    return [*(current or []), *(items if isinstance(items, list | tuple) else [items])]\n"
    ),
    "merge": (
        "def merge(current: dict[str, Any] | None, update: dict[str, Any] | None)"
        " -> dict[str, Any]:\n"
        '    """`merge`: a write\'s keys replace those keys only."""\n'
        "    return {**(current or {}), **(update or {})}\n"
    ),
    "union": (
        "def union(current: list[Any] | None, items: Any) -> list[Any]:\n"
        '    """`union`: items not there yet are added, in order (values may be dicts)."""\n'
        "    merged = list(current or [])\n"
        "    for item in items if isinstance(items, list | tuple) else [items]:\n"
        "        if item is not None and item not in merged:\n"
        "            merged.append(item)\n"
        "    return merged\n"
    ),
    "max": (
        "def highest(current: Any, value: Any) -> Any:\n"
        '    """`max`: the largest value written."""\n'
        "    return value if current is None else max(current, value)\n"
    ),
    "min": (
        "def lowest(current: Any, value: Any) -> Any:\n"
        '    """`min`: the smallest value written."""\n'
        "    return value if current is None else min(current, value)\n"
    ),
}
_REDUCER_NAMES = {
    "append": "append",
    "extend": "extend",
    "merge": "merge",
    "union": "union",
    "max": "highest",
    "min": "lowest",
    "sum": "operator.add",
    "add_messages": "add_messages",
}
#: Names the module defines or imports besides the nodes' functions.
_TAKEN = frozenset(
    {
        *(name for name in _REDUCER_NAMES.values() if "." not in name),
        *[
            "operator",
            "Path",
            "Annotated",
            "Any",
            "AnyMessage",
            "RunnableConfig",
            "BaseCheckpointSaver",
            "END",
            "START",
            "StateGraph",
            "add_messages",
            "TypedDict",
            "functools",
            "os",
            "init_chat_model",
            "BaseMessage",
            "HumanMessage",
            "SystemMessage",
            "Runtime",
            "NodeError",
            "SPEC_DIR",
            "DEFINITIONS",
            "plait",
            "State",
            "Output",
            "INPUT_FIELDS",
            "DEFAULTS",
            "initial_state",
            "build_graph",
            "count_visits",
        ],
    }
)
_VISITS = (
    "def count_visits(current: dict[str, int] | None, update: dict[str, int]) -> dict[str, int]:\n"
    '    """Visits per node, for the nodes that have `max_visits`."""\n'
    "    counts = dict(current or {})\n"
    "    for node, visits in update.items():\n"
    "        counts[node] = counts.get(node, 0) + visits\n"
    "    return counts\n"
)


def eject_source(
    loaded: LoadedSpec,
    registry: SpecRegistry | None,
    *,
    target: Path,
    partial: bool = False,
) -> str:
    """The module for ``loaded``, to be written at ``target`` (paths to the spec's folder
    are relative to it). Raises :class:`NotEjectable` unless every feature maps or
    ``partial`` is set. ``registry`` resolves ``subgraph`` refs."""
    sections: list[_Section] = []
    _collect(loaded, registry, sections, prefix="", stack=())
    problems = [problem for section in sections for problem in section.problems]
    if problems and not partial:
        raise NotEjectable(loaded.ref, problems)
    return _Module(loaded, sections, target).text()


class _Section:
    """One spec's part of the module; a subgraph's names carry its prefix."""

    def __init__(self, loaded: LoadedSpec, prefix: str, children: dict[str, str]) -> None:
        self.loaded = loaded
        self.prefix = prefix
        self.children = children  # ref -> prefix of the child's section
        found = [*unsupported(loaded.spec), *_state_problems(loaded.spec)]
        # A subgraph's problems say which spec they are in.
        self.problems = [
            Unsupported(p.feature, f"{loaded.ref} {p.where}", p.why, p.node) if prefix else p
            for p in found
        ]

    @property
    def spec(self) -> GraphSpec:
        return self.loaded.spec

    def name(self, base: str) -> str:
        return f"{self.prefix}{base}"

    def node_function(self, node_id: str) -> str:
        """The name of a node's function: its id, unless the module has that name already."""
        base = identifier(node_id)
        return self.name(f"{base}_node" if base in _TAKEN else base)


def _collect(
    loaded: LoadedSpec,
    registry: SpecRegistry | None,
    sections: list[_Section],
    *,
    prefix: str,
    stack: tuple[str, ...],
) -> None:
    children: dict[str, str] = {}
    for node in loaded.spec.spec.nodes.values():
        if node.kind == "subgraph" and node.ref not in children:
            if registry is None or node.ref in stack:
                raise ValueError(f"{loaded.ref}: cannot resolve subgraph {node.ref!r}")
            child = registry.resolve(node.ref)
            written = {section.loaded.ref: section.prefix for section in sections}
            if child.ref in written:  # another spec of this module uses it too: written once
                children[node.ref] = written[child.ref]
                continue
            named = f"{identifier(child.name)}_"
            if named in written.values():  # two versions of one spec: the version tells them
                named = f"{identifier(child.name)}_{identifier('v' + child.version)}_"
            children[node.ref] = named
            _collect(
                child,
                registry,
                sections,
                prefix=named,
                stack=(*stack, loaded.ref),
            )
    sections.append(_Section(loaded, prefix, children))


def _state_problems(spec: GraphSpec) -> Iterator[Unsupported]:
    inputs = set(spec.spec.input_fields)
    for name, field in spec.spec.state.items():
        if field.reducer == "replace" or not _has_default(field):
            continue
        if field.default == _EMPTY.get(field.reducer, _NO_EMPTY):
            continue  # the value LangGraph's channel starts with anyway
        where = f"spec.state.{name}"
        if field.reducer == "append":
            yield Unsupported("a default on an `append` field", where, "LangGraph starts it empty")
        elif name in inputs:
            yield Unsupported(
                "a default on a reducer field that is also an input",
                where,
                "LangGraph combines the input with an empty value, Plait with the default",
            )


#: The value each reducer's channel starts with (``max`` and ``min`` start with none).
_EMPTY: dict[str, Any] = {
    "append": [],
    "extend": [],
    "merge": {},
    "add_messages": [],
    "union": [],
    "sum": 0,
}
_NO_EMPTY = object()


def _has_default(field: StateField) -> bool:
    return "default" in field.model_fields_set and field.default is not None


class _Module:
    """Writes the module's text: header, imports, then each section, then the entry points."""

    def __init__(self, loaded: LoadedSpec, sections: list[_Section], target: Path) -> None:
        self.loaded = loaded
        self.sections = sections
        self.target = target
        self.imports: set[str] = set()
        self.reducers: set[str] = set()
        self._plain_models: dict[str, list[str]] = {}

    def text(self) -> str:
        body = [line for section in self.sections for line in self._section(section)]
        main = self._main()
        head = self._docstring() + self._import_lines() + [""] + self._spec_dir()
        helpers = [_REDUCERS[name] for name in sorted(self.reducers) if name in _REDUCERS]
        if any(_counted(section.spec) for section in self.sections):
            helpers.append(_VISITS)
        blocks = [*head, "", *(f"\n{helper}" for helper in helpers), *body, *main]
        return "\n".join(blocks).rstrip() + "\n"

    # ------------------------------------------------------------------ header

    def _docstring(self) -> list[str]:
        spec = self.loaded.spec
        lines = [f"{spec.metadata.name} {spec.metadata.version}, ejected from the Plait spec "]
        lines[0] += f"{self.loaded.path.name if self.loaded.path else self.loaded.file}."
        if spec.metadata.description:
            lines += ["", spec.metadata.description]
        if header := comments.header(self.loaded):
            lines += ["", *header]
        lines += [
            "",
            "A LangGraph graph: run it with `build_graph().ainvoke(initial_state(input))`, or",
            "`python <this file> '<input as JSON>'`. The steps Plait governs (model calls, agents,",
            "tools, approvals, maps) call `plait.runtime`, Plait's small public runtime",
            "(docs/eject.md); the rest is plain Python.",
        ]
        dropped = [p for s in self.sections for p in s.problems if p.node is None]
        stubbed = [p for s in self.sections for p in s.problems if p.node is not None]
        if dropped:
            lines += ["", "NOT EJECTED (the spec declares them; this module does not do them):"]
            lines += [f"- {problem}" for problem in dropped]
        if stubbed:
            lines += ["", "Nodes that raise NotImplementedError (ejected with --partial):"]
            lines += [f"- {problem}" for problem in stubbed]
        text = "\n".join(lines).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
        return [f'"""{text}\n"""', ""]

    def _import_lines(self) -> list[str]:
        need = self.imports
        lines: list[str] = []
        if "functools" in need:
            lines.append("import functools")
        if "operator" in need:
            lines.append("import operator")
        if "os" in need:
            lines.append("import os")
        lines.append("from pathlib import Path")
        typing = ["Annotated", "Any"] if "Annotated" in need else ["Any"]
        lines.append(f"from typing import {', '.join(typing)}")
        lines.append("")
        if "init_chat_model" in need:
            lines.append("from langchain.chat_models import init_chat_model")
        messages = sorted(
            (need & {"AnyMessage"})
            | ({"BaseMessage", "HumanMessage", "SystemMessage"} if "messages" in need else set())
        )
        if messages:
            lines.append(f"from langchain_core.messages import {', '.join(messages)}")
        lines.append("from langchain_core.runnables import RunnableConfig")
        lines.append("from langgraph.checkpoint.base import BaseCheckpointSaver")
        lines.append("from langgraph.graph import END, START, StateGraph")
        if "add_messages" in need:
            lines.append("from langgraph.graph.message import add_messages")
        runtime = sorted(need & {"NodeError", "Runtime"})
        if runtime:
            lines.append(f"from plait.runtime import {', '.join(runtime)}")
        lines.append("from typing_extensions import TypedDict")
        return lines

    def _spec_dir(self) -> list[str]:
        base = self.loaded.base_dir.resolve()
        folder = self.target.resolve().parent
        relative = Path(os.path.relpath(base, folder)).as_posix()
        shared = Path(os.path.commonpath([base, folder]))
        # Beside the module or near it (in one project): relative, so the two can move together.
        if relative.split("/").count("..") <= 2 and shared.parent != shared:
            where = f"(Path(__file__).resolve().parent / {relative!r}).resolve()"
        else:
            where = f"Path({base.as_posix()!r})"
        return [
            "#: The spec's folder: `module:function` references and model fixtures resolve there.",
            f"SPEC_DIR = {where}",
        ]

    # ------------------------------------------------------------------ one spec

    def _section(self, section: _Section) -> list[str]:
        spec = section.spec
        lines = ["", ""]
        if section.prefix:
            lines += [
                "# " + "-" * 70,
                f"# The subgraph {section.loaded.ref}"
                + (f": {spec.metadata.description}" if spec.metadata.description else ""),
                *(f"# {line}" if line else "#" for line in comments.header(section.loaded)),
                "# " + "-" * 70,
                "",
            ]
        lines += self._definitions(section)
        lines += self._functions(section)
        lines += self._state(section)
        lines += self._initial_state(section)
        nodes = self._nodes(section)
        lines += self._model_functions(section)
        lines += nodes
        lines += self._edge_functions(section)
        lines += self._build(section)
        return lines

    def _definitions(self, section: _Section) -> list[str]:
        raw = self.loaded_spec_data(section)
        definitions: dict[str, Any] = {
            "name": section.spec.metadata.name,
            "version": section.spec.metadata.version,
        }
        for key in ("state", "input", "models", "tools", "agents", "limits"):
            if raw.get(key):
                definitions[key] = raw[key]
        self.imports.add("Runtime")
        name = section.name("DEFINITIONS")
        return [
            f"#: What Plait's runtime reads of the spec {section.loaded.ref}: its state,",
            "#: models, tools and agents, as the spec writes them.",
            f"{name} = {literal(definitions)}",
            f"{section.name('plait')} = Runtime({name}, SPEC_DIR)",
            "",
        ]

    @staticmethod
    def loaded_spec_data(section: _Section) -> dict[str, Any]:
        data: dict[str, Any] = section.loaded.data.get("spec") or {}
        return data

    def _functions(self, section: _Section) -> list[str]:
        lines: list[str] = []
        seen: dict[str, str] = {}
        # Not a name the module has already: a node's function, a reducer, an import.
        taken = set(_TAKEN) | {section.node_function(node) for node in section.spec.spec.nodes}
        taken |= {f"after_{identifier(node.lower())}" for node in section.spec.spec.nodes}
        for ref in _function_refs(section.spec):
            alias = identifier(ref.rpartition(":")[2])
            if alias in taken:
                alias = f"{alias}_function"
            while alias in taken:
                alias += "_"
            taken.add(alias)
            seen[ref] = alias
        self._function_names = {ref: section.name(alias) for ref, alias in seen.items()}
        if seen:
            lines.append("# The spec's python functions, imported from SPEC_DIR.")
        for ref, name in self._function_names.items():
            lines.append(f"{name} = {section.name('plait')}.function({ref!r})")
        return [*lines, ""] if lines else []

    def _state(self, section: _Section) -> list[str]:
        spec = section.spec
        body = spec.spec
        state = section.name("State")
        lines = ["", f"class {state}(TypedDict):"]
        lines.append(
            '    """The graph\'s state; fields starting with `_` are Plait\'s bookkeeping."""'
        )
        lines.append("")
        for name, field in body.state.items():
            for line in comments.above(section.loaded, "spec", "state", name):
                lines.append(f"    # {line}")
            note = f"  # {field.description}" if field.description else ""
            lines.append(f"    {name}: {self._annotation(field)}{note}")
        for node in _route_sources(spec):
            lines.append(f"    _result_{identifier(node)}: Any  # {node}'s result, for its route")
        if _counted(spec):
            self.imports.add("Annotated")
            lines.append(f"    {VISITS_FIELD}: Annotated[dict[str, int], count_visits]")
        output = section.name("Output")
        lines += ["", "", f"class {output}(TypedDict):", '    """What a run returns."""', ""]
        for name in body.output_fields:
            lines.append(f"    {name}: {self._annotation(body.state[name])}")
        return lines

    def _annotation(self, field: StateField) -> str:
        typ = _TYPES[field.type]
        if field.type == "messages":
            self.imports.add("AnyMessage")
        reducer = field.reducer
        if reducer == "replace":
            return typ
        self.reducers.add(reducer)
        self.imports.add("Annotated")
        function = _REDUCER_NAMES[reducer]
        if reducer == "sum":
            self.imports.add("operator")
            typ = "float" if field.type == "number" else "int"
        elif reducer == "add_messages":
            self.imports.update({"add_messages", "AnyMessage"})
            typ = "list[AnyMessage]"
        elif reducer in ("append", "extend", "union"):
            typ = "list[Any]"
        elif reducer == "merge":
            typ = "dict[str, Any]"
        else:  # max, min: no value until the first write, as in Plait
            typ = f"{typ} | None" if typ != "Any" else "Any"
        return f"Annotated[{typ}, {function}]"

    def _initial_state(self, section: _Section) -> list[str]:
        body = section.spec.spec
        defaults = {
            name: field.default
            for name, field in body.state.items()
            if field.reducer == "replace" or _has_default(field)
        }
        inputs = section.name("INPUT_FIELDS")
        name = section.name("DEFAULTS")
        return [
            "",
            "",
            f"{inputs} = {literal(tuple(body.input_fields))}",
            "#: Every field has a value from the first step on, as in Plait.",
            f"{name} = {literal(defaults)}",
            "",
            "",
            f"def {section.name('initial_state')}(given: dict[str, Any]) -> dict[str, Any]:",
            '    """The first state of a run: the defaults, then the input fields given."""',
            f"    return {{**{name}, **{{k: v for k, v in given.items() if k in {inputs}}}}}",
        ]

    def model_function(self, section: _Section, model: str) -> str:
        """The name of the function that builds ``model`` (written before the nodes)."""
        self._plain_models.setdefault(section.prefix, []).append(model)
        return section.name(f"{identifier(model)}_model")

    def _model_functions(self, section: _Section) -> list[str]:
        lines: list[str] = []
        for name in dict.fromkeys(self._plain_models.get(section.prefix, [])):
            definition = section.spec.spec.models[name]
            kwargs: dict[str, str] = {"model_provider": repr(definition.provider)}
            kwargs.update({key: literal(value) for key, value in definition.params.items()})
            if definition.api_key_env is not None:
                self.imports.add("os")
                kwargs["api_key"] = f"os.environ[{definition.api_key_env!r}]"
            for key in ("base_url", "temperature", "max_tokens"):
                if (value := getattr(definition, key)) is not None:
                    kwargs[key] = literal(value)
            args = ", ".join(f"{key}={value}" for key, value in kwargs.items())
            self.imports.add("functools")
            lines += [
                "",
                "",
                "@functools.cache",
                f"def {section.name(identifier(name) + '_model')}() -> Any:",
                f'    """The model {name!r}, made on first use (its SDK may need its key)."""',
                f"    return init_chat_model({definition.model!r}, {args})",
            ]
        return lines

    # ------------------------------------------------------------------ nodes

    def _nodes(self, section: _Section) -> list[str]:
        lines: list[str] = []
        stubs = {p.node: p for p in section.problems if p.node is not None}
        raw_nodes = self.loaded_spec_data(section).get("nodes") or {}
        for node_id, node in section.spec.spec.nodes.items():
            lines += ["", ""]
            lines += _Node(self, section, node_id, node, raw_nodes[node_id], stubs).lines()
        return lines

    # ------------------------------------------------------------------ edges

    def _edge_functions(self, section: _Section) -> list[str]:
        lines: list[str] = []
        state = section.name("State")
        plait = section.name("plait")
        signature = f"(state: {state}, config: RunnableConfig) -> str:"
        for edge in section.spec.spec.edges:
            if isinstance(edge, SwitchEdge):
                lines += ["", "", f"def {self._edge_name(section, edge)}{signature}"]
                lines.append(f'    """After {edge.from_}: the first case that holds."""')
                for case in edge.switch:
                    condition = _python_or_cel(plait, case.when, {"state": "state"})
                    lines.append(f"    if {condition} is True:")
                    lines.append(f"        return {_target(case.to)}")
                lines.append(f"    return {_target(edge.default)}")
            elif isinstance(edge, RouteEdge):
                lines += ["", "", f"def {self._edge_name(section, edge)}{signature}"]
                lines.append(f'    """After {edge.from_}: by the label of its result."""')
                source = (
                    f"state.get('_result_{identifier(edge.from_)}')"
                    if edge.from_ != START
                    else "None"
                )
                lines.append(f"    result = {source}")
                label = _python_or_cel(plait, edge.route, {"state": "state", "result": "result"})
                lines.append(f"    label = {label}")
                targets = ", ".join(f"{k!r}: {_target(v)}" for k, v in edge.to.items())
                default = f", default={_target(edge.default)}" if edge.default else ""
                lines.append(
                    f"    return {plait}.route({edge.from_!r}, label, {{{targets}}}{default})"
                )
        return lines

    @staticmethod
    def _edge_name(section: _Section, edge: SwitchEdge | RouteEdge) -> str:
        return section.name(f"after_{identifier(edge.from_.lower())}")

    def _build(self, section: _Section) -> list[str]:
        spec = section.spec
        body = spec.spec
        builder = [
            "",
            "",
            f"def {section.name('build_graph')}(checkpointer: BaseCheckpointSaver[Any] | None"
            " = None) -> Any:",
            f'    """The graph of {section.loaded.ref}, compiled; start runs with',
            f"    `{section.name('initial_state')}(input)`. A checkpointer is needed for"
            " approvals (interrupts).",
            '    """',
            f"    builder = StateGraph({section.name('State')}, "
            f"output_schema={section.name('Output')})",
        ]
        for node_id, node in body.nodes.items():
            options = []
            if node.retry is not None:
                fields = node.retry.model_dump(exclude_unset=True, mode="json")
                args = ", ".join(f"{key}={literal(value)}" for key, value in fields.items())
                options.append(f"retry_policy={section.name('plait')}.retry_policy({args})")
            if node.timeout is not None:
                options.append(f"timeout={duration_seconds(node.timeout)!r}")
            extra = "".join(f", {option}" for option in options)
            function = section.node_function(node_id)
            builder.append(f"    builder.add_node({node_id!r}, {function}{extra})")
        implied: set[tuple[str, str]] = set()
        for node_id, node in body.nodes.items():
            if node.kind == "parallel":
                for branch in node.branches:
                    implied.add((node_id, branch))
                    implied.add((branch, node.join))
                    builder.append(f"    builder.add_edge({node_id!r}, {branch!r})")
                builder.append(f"    builder.add_edge({list(node.branches)!r}, {node.join!r})")
        for edge in body.edges:
            if isinstance(edge, StaticEdge):
                if (edge.from_, edge.to) not in implied:
                    builder.append(
                        f"    builder.add_edge({_target(edge.from_)}, {_target(edge.to)})"
                    )
                continue
            if isinstance(edge, SwitchEdge):
                ends = [_target(case.to) for case in edge.switch] + [_target(edge.default)]
            else:
                ends = [_target(to) for to in edge.to.values()]
                if edge.default is not None:
                    ends.append(_target(edge.default))
            destinations = ", ".join(dict.fromkeys(ends))
            builder.append(
                f"    builder.add_conditional_edges({_target(edge.from_)}, "
                f"{self._edge_name(section, edge)}, [{destinations}])"
            )
        builder.append(
            f"    graph = builder.compile(checkpointer=checkpointer, name={spec.metadata.name!r})"
        )
        builder.append("    # The spec's bound on steps (LangGraph's recursion limit).")
        builder.append(f"    return graph.with_config(recursion_limit={body.max_steps})")
        for ref, prefix in section.children.items():
            builder += [
                "",
                "",
                f"#: The subgraph {ref}, compiled once; it checkpoints with its parent.",
                f"{prefix}graph = {prefix}build_graph()",
            ]
        return builder

    # ------------------------------------------------------------------ entry point

    def _main(self) -> list[str]:
        examples = self.loaded.spec.spec.examples
        example = examples[0].input if examples else {}
        return [
            "",
            "",
            "if __name__ == '__main__':",
            "    import asyncio",
            "    import json",
            "    import sys",
            "    import uuid",
            "",
            "    from langgraph.checkpoint.memory import InMemorySaver",
            "    from langgraph.types import Command",
            "",
            "    def main() -> None:",
            '        """Run once with the input given as JSON (default: the spec\'s first'
            " example);",
            '        answer each approval on the terminal."""',
            f"        given = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {literal(example)}",
            "        graph = build_graph(InMemorySaver())",
            '        config: RunnableConfig = {"configurable": {"thread_id": str(uuid.uuid4())}}',
            "        update: Any = initial_state(given)",
            "        while True:",
            "            values = asyncio.run(graph.ainvoke(update, config))",
            "            asked = values.pop('__interrupt__', None)",
            "            if not asked:",
            "                print(json.dumps(values, indent=2, default=str))",
            "                return",
            "            print(json.dumps(asked[0].value, indent=2, default=str))",
            "            answer = input('decision (approve / reject): ').strip() or 'approve'",
            "            update = Command(resume={'decision': answer})",
            "",
            "    main()",
        ]


class _Node:
    """One node's function."""

    def __init__(
        self,
        module: _Module,
        section: _Section,
        node_id: str,
        node: Any,
        raw: dict[str, Any],
        stubs: dict[str, Unsupported],
    ) -> None:
        self.module = module
        self.section = section
        self.node_id = node_id
        self.node = node
        self.raw = raw
        self.stub = stubs.get(node_id)
        self.plait = section.name("plait")

    def lines(self) -> list[str]:
        node, section = self.node, self.section
        name = section.node_function(self.node_id)
        head = [
            f"async def {name}(state: {section.name('State')}, config: RunnableConfig)"
            " -> dict[str, Any]:",
        ]
        doc = node.description or f"The `{node.kind}` node {self.node_id!r}."
        head.append(f"    {_docstring(doc)}")
        for line in comments.above(section.loaded, "spec", "nodes", self.node_id):
            head.append(f"    # {line}")
        if self.stub is not None:
            message = (
                f"{self.node_id}: {self.stub.feature} is not ejected ({self.stub.why}); "
                "run this spec on Plait"
            )
            text = literal(message)
            if text.startswith("("):  # cut in pieces: the call's parentheses hold them
                text = text[1:-1]
            return [*head, f"    raise NotImplementedError({text})"]
        body: list[str] = []
        if node.max_visits is not None:
            bound = f"{self.node_id!r}, state, {node.max_visits}"
            body.append(f"    visit = {self.plait}.visit({bound})")
        work = self._work()
        uses_result = (
            node.output is not None
            or bool(node.writes)
            or self.node_id in _route_sources(section.spec)
        )
        if not uses_result and node.kind == "parallel":
            work = ["    # The branches run next, together (the edges in build_graph)."]
        elif not uses_result:
            work = [line.replace("    result = ", "    ", 1) for line in work]
            work = [line for line in work if line.strip() not in ("step.result", "")]
        body += work
        governed = node.kind in _GOVERNED and not self.plain_model_call
        update = ["**step.updates"] if governed else []
        if node.output is not None:
            update.append(f"{node.output!r}: result")
        roots = {"state": "state", "result": "result"}
        for field, source in node.writes.items():
            update.append(f"{field!r}: {_python_or_cel(self.plait, source, roots)}")
        if self.node_id in _route_sources(section.spec):
            update.append(f"'_result_{identifier(self.node_id)}': result")
        if node.max_visits is not None:
            update.append(f"{VISITS_FIELD!r}: visit")
        body.append(f"    return {{{', '.join(update)}}}")
        return head + body

    def _work(self) -> list[str]:
        node, plait = self.node, self.plait
        kind = node.kind
        if self.plain_model_call:
            return self._plain_llm()
        if kind in _GOVERNED:
            fields = {k: v for k, v in self.raw.items() if k not in _NODE_KEYS}
            args = "".join(f", {key}={literal(value)}" for key, value in fields.items())
            method = _GOVERNED[kind]
            return [
                f"    step = await {plait}.{method}({self.node_id!r}, state, config{args})",
                "    result = step.result",
            ]
        if kind == "python":
            function = self.module._function_names[node.function]
            if node.args:
                args = ", ".join(
                    f"{key}={self._argument(value)}" for key, value in self.raw["args"].items()
                )
                return [f"    result = await {plait}.call({function}, {args})"]
            return [f"    result = await {plait}.call({function}, {plait}.public(state))"]
        if kind == "tool":
            args = ", ".join(
                f"{key!r}: {self._argument(value)}"
                for key, value in (self.raw.get("args") or {}).items()
            )
            return [
                f"    result = await {plait}.tool({self.node_id!r}, config, {node.tool!r},"
                f" {{{args}}})"
            ]
        if kind == "router":
            lines = [f"    result = {_python_or_cel(plait, node.label, {'state': 'state'})}"]
            if node.labels:
                self.module.imports.add("NodeError")
                known = ", ".join(sorted(node.labels))
                lines += [
                    f"    if result not in {tuple(node.labels)!r}:",
                    f"        raise NodeError({self.node_id!r}, "
                    f"f'label {{result!r}} is not one of the declared labels: {known}')",
                ]
            return lines
        if kind == "parallel":
            return [f"    result = {list(node.branches)!r}  # the branches run next, together"]
        if kind == "subgraph":
            prefix = self.section.children[node.ref]
            if node.input:
                payload = ", ".join(
                    f"{key!r}: {_python_or_cel(plait, source, {'state': 'state'})}"
                    for key, source in node.input.items()
                )
                given = f"{{{payload}}}"
            else:
                given = "dict(state)"
            return [
                f"    result = dict(await {prefix}graph.ainvoke({prefix}initial_state({given})))"
            ]
        raise AssertionError(f"no ejection for node kind {kind!r}")  # unsupported() stubs it

    @property
    def plain_model_call(self) -> bool:
        """An ``llm`` node of one plain call: a real provider with no retry, breaker or price,
        no structured output, no conversation, no routes. It calls LangChain's model directly."""
        node = self.node
        if node.kind != "llm" or node.schema_ is not None or node.messages is not None:
            return False
        if node.routes:
            return False  # the runtime's llm step picks the route's model
        model = self.section.spec.spec.models[node.model]
        governed = model.retry is not None or model.breaker is not None or model.price is not None
        return model.provider != "scripted" and model.fixture is None and not governed

    def _plain_llm(self) -> list[str]:
        node, plait = self.node, self.plait
        self.module.imports.update({"init_chat_model", "messages"})
        model = self.module.model_function(self.section, node.model)
        lines = ["    # No governance on this model: LangChain's chat model, called directly."]
        lines.append("    messages: list[BaseMessage] = []")
        if node.system is not None:
            system = f"{plait}.render({literal(node.system)}, state, config)"
            lines.append(f"    messages.append(SystemMessage({system}))")
        prompt = f"{plait}.render({literal(node.prompt)}, state, config)"
        lines.append(f"    messages.append(HumanMessage({prompt}))")
        lines.append(f"    reply = await {model}().ainvoke(messages)")
        lines.append("    result = reply.text")
        return lines

    def _argument(self, value: Any) -> str:
        """An argument as written: a CEL string, or a value (``{value: ...}``, a number...)."""
        if isinstance(value, dict) and set(value) == {"value"}:
            return literal(value["value"])
        if isinstance(value, str):
            return _python_or_cel(self.plait, value, {"state": "state"})
        return literal(value)


def _python_or_cel(plait: str, source: str, roots: dict[str, str]) -> str:
    """A CEL expression as a Python path when it is one, else a ``plait.cel`` call."""
    path = path_as_python(source, roots)
    if path is not None:
        return path
    extra = "".join(
        f", {root}={roots[root]}"
        for root in sorted(set(cel_variables(source)))
        if root in roots and root != "state"
    )
    return f"{plait}.cel({source!r}, state, config{extra})"


def _target(name: str) -> str:
    if name == START:
        return "START"
    if name == END:
        return "END"
    return repr(name)


def _docstring(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return f'"""{escaped}"""'


def _route_sources(spec: GraphSpec) -> list[str]:
    return [e.from_ for e in spec.spec.edges if isinstance(e, RouteEdge) and e.from_ != START]


def _counted(spec: GraphSpec) -> bool:
    return any(node.max_visits is not None for node in spec.spec.nodes.values())


def _function_refs(spec: GraphSpec) -> list[str]:
    return list(
        dict.fromkeys(node.function for node in spec.spec.nodes.values() if node.kind == "python")
    )
