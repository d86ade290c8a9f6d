"""Agent Spec round trips of every example: pyagentspec reads the export, the import gives the
spec back, and without Plait's metadata it differs exactly where the report says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyagentspec.flows.edges import ControlFlowEdge
from pyagentspec.flows.flow import Flow
from pyagentspec.flows.nodes import EndNode, InputMessageNode, StartNode
from pyagentspec.serialization import AgentSpecDeserializer

from plait.engine.interop import (
    AgentSpecImportError,
    differences,
    export_agentspec,
    import_agentspec,
    read_agentspec,
    spec_yaml,
)
from plait.engine.spec import GraphSpec, has_errors, load_directory, parse_spec, validate_text
from tests.unit.interop.documents import support_flow

SPECS = Path(__file__).resolve().parents[3] / "specs"
REGISTRY = load_directory(SPECS)
EXAMPLES = sorted(SPECS.glob("*.yaml"))


def _resolve(ref: str) -> GraphSpec | None:
    return REGISTRY.resolve(ref).spec if ref in REGISTRY else None


def _spec(path: Path) -> GraphSpec:
    return next(loaded.spec for loaded in REGISTRY if loaded.path == path.resolve())


def _plain(spec: GraphSpec) -> dict:
    return spec.model_dump(mode="json", by_alias=True, exclude_defaults=True)


def test_every_example_is_covered() -> None:
    assert len(EXAMPLES) >= 10
    assert {_spec(path).metadata.name for path in EXAMPLES} == {p.stem for p in EXAMPLES}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.stem)
def test_export_reads_back_into_the_same_spec(path: Path) -> None:
    spec = _spec(path)
    exported = export_agentspec(spec, _resolve)

    document = AgentSpecDeserializer().from_json(exported.text("json"))  # validates it
    assert document.name == spec.metadata.name
    assert read_agentspec(exported.text("yaml")).name == spec.metadata.name
    imported = import_agentspec(document)

    assert imported.restored
    assert imported.data == _plain(spec)
    text = spec_yaml(imported.data, path)
    assert text.startswith("# yaml-language-server: $schema=../schemas/plait-v1.schema.json\n")
    issues = validate_text(text, str(path), REGISTRY)
    assert not has_errors(issues), [issue.to_dict() for issue in issues]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.stem)
def test_without_plait_metadata_only_the_reported_parts_differ(path: Path) -> None:
    spec = _spec(path)
    exported = export_agentspec(spec, _resolve)
    document = json.loads(exported.text("json"))
    del document["metadata"]["plait"]  # what another Agent Spec runtime reads

    imported = import_agentspec(read_agentspec(json.dumps(document)))

    assert not imported.restored
    changed = [item.pointer for item in differences(_plain(spec), imported.data)]
    name = f"{spec.metadata.name}@{spec.metadata.version}"
    reported = [item.pointer for item in exported.unmapped if item.spec == name]
    assert changed == reported
    assert all(item.reason for item in exported.unmapped)


def test_what_maps_is_read_natively() -> None:
    """Prompts with state placeholders, structured replies, tools, map and subgraph need no
    metadata; reducers, scripts, system prompts of llm nodes and CEL conditions do."""
    planner = export_agentspec(_spec(SPECS / "planner-team.yaml"), _resolve)
    reported = {item.pointer for item in planner.unmapped}
    assert "/spec/state/revisions/reducer" in reported
    assert "/spec/models/planner/script" in reported
    assert "/spec/nodes/planner/system" in reported
    assert "/spec/edges" in reported  # the reviewer's route is CEL over its reply
    assert not {"/spec/nodes/planner/prompt", "/spec/nodes/planner/schema"} & reported
    assert not any(p.startswith("/spec/nodes/planner/output") for p in reported)

    research = export_agentspec(_spec(SPECS / "research-team.yaml")).unmapped
    mapped = ("/spec/nodes/research/do", "/spec/nodes/research/items")
    assert "/spec/nodes/research/item_timeout" in {item.pointer for item in research}
    assert not any(item.pointer.startswith(mapped) for item in research)

    support = export_agentspec(_spec(SPECS / "support-subgraph.yaml"), _resolve)
    parent = [i.pointer for i in support.unmapped if i.spec == "support-subgraph@1.0.0"]
    assert not any(pointer.startswith("/spec/nodes/summarize") for pointer in parent)
    assert {i.spec for i in support.unmapped} == {"support-subgraph@1.0.0", "summarize@1.0.0"}


def test_an_approval_is_reported_as_one_node() -> None:
    refund = export_agentspec(_spec(SPECS / "refund-approval.yaml"))
    [approval] = [item for item in refund.unmapped if item.pointer == "/spec/nodes/approve"]
    assert "approval" in approval.reason
    assert not any(item.pointer.startswith("/spec/nodes/approve/") for item in refund.unmapped)


def test_a_pyagentspec_flow_reads_natively_and_exports_back_without_loss() -> None:
    imported = import_agentspec(support_flow())

    assert not imported.restored
    nodes = imported.data["spec"]["nodes"]
    assert nodes["route"] == {
        "kind": "router",
        "label": 'state.category in ["billing"] ? state.category : "default"',
        "labels": ["billing", "default"],
    }
    assert nodes["billing_answer"]["prompt"] == "Answer this billing question: {{state.question}}"
    assert nodes["helper"]["system"] == "You help customers who ask: {{state.question}}"
    assert {
        "from": "route",
        "route": "result",
        "to": {"billing": "billing_answer", "default": "helper"},
    } in imported.data["spec"]["edges"]
    assert [note for note in imported.notes if "agent `helper`" in note]

    again = export_agentspec(GraphSpec.model_validate(imported.data))
    # Everything came from Agent Spec, so everything goes back (the agent's prompt, made from
    # its inputs, is made again the same way).
    assert again.unmapped == []


SINGLE_AGENT = """
apiVersion: plait/v1
kind: Graph
metadata: {name: helpdesk, version: "2.1.0", labels: {team: support}}
spec:
  state:
    question: {type: string}
    answer: {type: string}
  input: [question]
  output: [answer]
  models:
    main: {provider: openai, model: gpt-4o-mini, temperature: 0.2}
  nodes:
    helpdesk:
      kind: agent
      model: main
      system: "You answer questions about {{ state.question }}."
      prompt: "{{ state.question }}"
      output: answer
  edges:
    - {from: START, to: helpdesk}
    - {from: helpdesk, to: END}
"""


def test_a_single_agent_spec_is_an_agent() -> None:
    spec = parse_spec(SINGLE_AGENT).spec
    exported = export_agentspec(spec)

    document = read_agentspec(exported.text("yaml"))

    assert document.component_type == "Agent"
    assert document.metadata["version"] == "2.1.0"
    assert exported.unmapped == []  # version and labels travel in metadata
    assert import_agentspec(document, use_metadata=False).data == _plain(spec)


def test_what_plait_cannot_import_is_named() -> None:
    with pytest.raises(AgentSpecImportError, match="not a valid Agent Spec document"):
        read_agentspec('{"component_type": "Flow", "name": "x", "agentspec_version": "26.3.1"}')

    start = StartNode(name="start")
    ask = InputMessageNode(name="ask", message="Which order?")
    end = EndNode(name="end")
    flow = Flow(
        name="asks",
        start_node=start,
        nodes=[start, ask, end],
        control_flow_connections=[
            ControlFlowEdge(name="a", from_node=start, to_node=ask),
            ControlFlowEdge(name="b", from_node=ask, to_node=end),
        ],
    )
    with pytest.raises(AgentSpecImportError, match="`ask` is an InputMessageNode"):
        import_agentspec(flow)
