"""``plait agentspec``: exported examples come back and still pass their tests; a document
built with pyagentspec's own classes imports into a spec that runs offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pyagentspec.serialization import AgentSpecSerializer

from tests.integration.cli.conftest import SPECS, PlaitRunner
from tests.unit.interop.documents import support_flow


def _round_trip(plait: PlaitRunner, tmp_path: Path, name: str) -> Path:
    shutil.copytree(SPECS / "plait_examples", tmp_path / "plait_examples")
    document = tmp_path / f"{name}.agentspec.json"
    exported = plait("agentspec", "export", SPECS / f"{name}.yaml", "-o", document)
    assert exported.code == 0, exported.stderr
    assert "kept in metadata.plait.restore" in exported.stderr
    spec = tmp_path / f"{name}.yaml"
    imported = plait("agentspec", "import", document, "-o", spec)
    assert imported.code == 0, imported.stderr
    return spec


def test_an_exported_example_imports_back_and_passes_its_tests(
    plait: PlaitRunner, tmp_path: Path
) -> None:
    spec = _round_trip(plait, tmp_path, "planner-team")
    assert spec.read_text().startswith("# yaml-language-server: $schema=")

    result = plait("test", spec)

    assert result.code == 0, result.stdout + result.stderr
    assert "2 passed, 0 failed" in result.stdout


def test_a_subgraph_comes_back_with_its_child_beside_it(plait: PlaitRunner, tmp_path: Path) -> None:
    _round_trip(plait, tmp_path, "support-subgraph")
    assert (tmp_path / "summarize.yaml").exists()

    result = plait("test", tmp_path)

    assert result.code == 0, result.stdout + result.stderr
    assert "✓ support-subgraph > duplicate_charge" in result.stdout
    assert "✓ summarize > duplicate_charge" in result.stdout


def test_strict_export_fails_on_what_agent_spec_cannot_say(plait: PlaitRunner) -> None:
    result = plait("agentspec", "export", SPECS / "refund-approval.yaml", "--strict")

    assert result.code == 7, result.stderr
    assert json.loads(result.stdout)["component_type"] == "Flow"
    assert "refund-approval@1.0.0#/spec/nodes/approve: Agent Spec has no approval node" in (
        result.stderr
    )
    assert "refund-approval@1.0.0#/spec/examples" in result.stderr


#: What a person adds to the imported spec to test it offline: replies of the scripted model.
EXAMPLES = """
  examples:
    - name: billing
      input: {question: Why was I charged twice?}
      models:
        gpt:
          script:
            - {when: "^Classify", content: billing}
            - {when: "^Answer this billing", content: The second charge is refunded in 5 days.}
      expect:
        - "steps == ['classify', 'route', 'billing_answer']"
        - state.answer == 'The second charge is refunded in 5 days.'
    - name: other
      input: {question: Where is my parcel?}
      models:
        gpt:
          script:
            - {when: "^Classify", content: other}
            - {content: It left the warehouse this morning.}
      expect:
        - "steps == ['classify', 'route', 'helper']"
        - state.answer == 'It left the warehouse this morning.'
"""


def test_a_pyagentspec_flow_imports_and_runs_offline(plait: PlaitRunner, tmp_path: Path) -> None:
    document = tmp_path / "support.yaml"
    document.write_text(AgentSpecSerializer().to_yaml(support_flow()), encoding="utf-8")
    spec = tmp_path / "support-desk.yaml"

    imported = plait("agentspec", "import", document, "-o", spec)

    assert imported.code == 0, imported.stderr
    assert "note: agent `helper`" in imported.stderr  # its prompt was made from its inputs
    text = spec.read_text(encoding="utf-8")
    assert "prompt: 'Answer this billing question: {{state.question}}'" in text
    assert "kind: router" in text
    assert plait("validate", spec).code == 0
    spec.write_text(text + EXAMPLES, encoding="utf-8")

    result = plait("test", spec)

    assert result.code == 0, result.stdout + result.stderr
    assert "2 passed, 0 failed" in result.stdout
