"""Lint: what a map item's subgraph (at any depth) would wait for. A map item cannot wait:
an approval, a wait or a high-risk tool node there is an error, an a2a node a warning."""

from __future__ import annotations

import pytest

from plait.engine.spec.loader import parse_spec
from plait.engine.spec.registry import SpecRegistry
from tests.unit.spec.helpers import issues_of, line_of

CLAIMS = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: claims, version: "1.0.0"}
spec:
  state:
    claims: {type: list}
    results: {type: list}
    one: {type: any}
  input: [claims]
  nodes:
    each:
      kind: map
      items: state.claims
      do: {kind: subgraph, ref: desk@1.0.0, input: {claim: item}}
      output: results
  edges:
    - {from: START, to: each}
    - {from: each, to: END}
"""

#: The child's nodes, by what they are (each of them alone is the child's one node).
NODES = {
    "approval": "    approve: {kind: approval, action: pay_claim, output: done}\n",
    "wait": "    approve: {kind: wait, for: 1h}\n",
    "a2a": "    approve: {kind: a2a, url: 'http://127.0.0.1:9', message: hi, output: done}\n",
    "high-risk tool": "    approve: {kind: tool, tool: pay, args: {}, output: done}\n",
    "agent with a high-risk tool": (
        "    approve: {kind: agent, model: m, prompt: hi, tools: [pay], output: done}\n"
    ),
    "python": "    approve: {kind: python, function: 'os:getcwd', output: done}\n",
}


def _desk(node: str, name: str = "desk") -> str:
    return f"""\
apiVersion: plait/v1
kind: Graph
metadata: {{name: {name}, version: "1.0.0"}}
spec:
  state:
    claim: {{type: string}}
    done: {{type: any}}
  input: [claim]
  output: [done]
  models:
    m: {{provider: scripted, script: [{{content: ok}}]}}
  tools:
    pay: {{function: "os:getcwd", risk: high}}
  nodes:
{node}  edges:
    - {{from: START, to: approve}}
    - {{from: approve, to: END}}
"""


def _registry(*texts: str) -> SpecRegistry:
    return SpecRegistry(parse_spec(text, "child.yaml") for text in texts)


@pytest.mark.parametrize(
    "what", ["approval", "wait", "high-risk tool", "agent with a high-risk tool"]
)
def test_a_node_that_waits_in_a_map_items_subgraph_is_an_error(what: str) -> None:
    issues = issues_of(CLAIMS, _registry(_desk(NODES[what])))

    (issue,) = [issue for issue in issues if issue.code == "waits-in-map"]
    assert issue.severity == "error"
    assert (issue.line, issue.pointer) == (line_of(CLAIMS, "do: {kind"), "/spec/nodes/each/do/ref")
    assert "map `each` runs `desk@1.0.0` for each item" in issue.message
    assert "`approve` (at `each[i]/approve`) would wait in each item" in issue.message
    assert "a map item cannot wait" in issue.message
    assert issue.fix.startswith("move that node out of the map (before or after it), or run ")


def test_an_approval_two_subgraphs_down_is_found_and_its_path_named() -> None:
    office = _desk("    approve: {kind: subgraph, ref: inner@1.0.0, output: done}\n", "desk")
    inner = _desk(NODES["approval"], "inner")

    issues = issues_of(CLAIMS, _registry(office, inner))

    assert [(issue.code, issue.severity) for issue in issues] == [("waits-in-map", "error")]
    assert "`approve` (at `each[i]/approve/approve`)" in issues[0].message


def test_an_a2a_node_in_a_map_items_subgraph_is_a_warning() -> None:
    issues = issues_of(CLAIMS, _registry(_desk(NODES["a2a"])))

    assert [(issue.code, issue.severity) for issue in issues] == [("a2a-in-map", "warning")]
    assert "fails its item if the remote agent asks for input" in issues[0].message
    assert "call it from an `a2a` node outside the map" in issues[0].fix


def test_nodes_that_do_not_wait_and_approvals_outside_map_items_are_fine() -> None:
    assert issues_of(CLAIMS, _registry(_desk(NODES["python"]))) == []
    # The same child run by a `subgraph` node: its approval parks the run as usual.
    once = CLAIMS.replace(
        """      kind: map
      items: state.claims
      do: {kind: subgraph, ref: desk@1.0.0, input: {claim: item}}
      output: results""",
        """      kind: subgraph
      ref: desk@1.0.0
      input: {claim: "'one'"}
      output: one""",
    )
    assert issues_of(once, _registry(_desk(NODES["approval"]))) == []
