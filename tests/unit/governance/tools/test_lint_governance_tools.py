"""Lint of compensations, secrets and high-risk tools."""

from __future__ import annotations

from plait.engine.spec.errors import SpecIssue
from tests.unit.spec.helpers import issues_of, one

BASE = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: lint-gov, version: "1.0.0"}
spec:
  secrets: [TOKEN]
  state:
    items: {type: list}
  tools:
    book:
      function: "fns:book"
      secrets: [TOKEN]
      compensate: {tool: unbook, args: {id: result.id}}
    unbook: {function: "fns:unbook"}
    pay: {function: "fns:pay", risk: high}
  nodes:
    reserve:
      kind: tool
      tool: book
    charge:
      kind: tool
      tool: pay
      compensate: {function: "fns:refund"}
  edges:
    - {from: START, to: reserve}
    - {from: reserve, to: charge}
    - {from: charge, to: END}
"""


def _issues(old: str, new: str) -> list[SpecIssue]:
    assert BASE.count(old) == 1
    return issues_of(BASE.replace(old, new))


def test_the_base_spec_is_clean() -> None:
    assert issues_of(BASE) == []


def test_a_compensation_names_exactly_one_action() -> None:
    issue = one(
        _issues('{function: "fns:refund"}', '{function: "fns:refund", tool: unbook}'),
        "compensate-form",
    )
    assert issue.pointer == "/spec/nodes/charge/compensate"
    assert issue.line == BASE.splitlines().index('      compensate: {function: "fns:refund"}') + 1


def test_a_compensation_tool_must_exist_and_should_not_be_high_risk() -> None:
    issue = one(_issues("{tool: unbook,", "{tool: unbok,"), "unknown-tool")
    assert issue.pointer == "/spec/tools/book/compensate/tool"
    assert "Did you mean `unbook`?" in issue.fix
    warning = one(_issues("{tool: unbook,", "{tool: pay,"), "high-risk-compensation")
    assert warning.severity == "warning"


def test_compensation_cel_reads_only_args_and_result() -> None:
    issue = one(_issues("{id: result.id}", "{id: state.items}"), "cel-unknown-root")
    assert issue.pointer == "/spec/tools/book/compensate/args/id"
    assert one(_issues("{id: result.id}", "{id: 'result.'}"), "cel-syntax")


def test_a_tool_secret_must_be_declared() -> None:
    issue = one(
        _issues("secrets: [TOKEN]\n  state", "secrets: [TOKEM]\n  state"), "undeclared-secret"
    )
    assert issue.pointer == "/spec/tools/book/secrets/0"
    assert "Did you mean `TOKEM`?" in issue.fix


def test_a_high_risk_tool_inside_a_map_is_an_error() -> None:
    old = "    reserve:\n      kind: tool\n      tool: book\n"
    new = (
        "    reserve:\n      kind: map\n      items: state.items\n"
        "      do: {kind: tool, tool: pay, args: {x: item}}\n"
    )
    issue = one(_issues(old, new), "high-risk-in-map")
    assert issue.pointer == "/spec/nodes/reserve/do/tool"


def _agent_map(do: str, agents: str = "") -> str:
    """BASE with a scripted model, ``agents``, and its first node a map whose items do ``do``."""
    spec = BASE.replace(
        "  tools:\n",
        f"  models:\n    m: {{provider: scripted, script: [{{content: ok}}]}}\n{agents}  tools:\n",
        1,
    )
    old = "    reserve:\n      kind: tool\n      tool: book\n"
    return spec.replace(
        old, f"    reserve:\n      kind: map\n      items: state.items\n      do: {do}\n"
    )


def test_an_agent_item_offered_a_high_risk_tool_is_an_error() -> None:
    """Its model may call the tool, whose approval cannot wait inside the item."""
    inline = _agent_map("{kind: agent, model: m, prompt: hi, tools: [book, pay]}")
    issue = one(issues_of(inline), "high-risk-in-map")
    assert (issue.pointer, issue.severity) == ("/spec/nodes/reserve/do/tools", "error")
    assert "may call high-risk tool `pay`" in issue.message
    assert "`agent` node outside the map" in issue.fix
    # A named agent's own tools count; one with only low-risk tools is fine.
    named = "{kind: agent, agent: clerk, prompt: hi}"
    risky = _agent_map(named, "  agents:\n    clerk: {model: m, tools: [pay]}\n")
    assert one(issues_of(risky), "high-risk-in-map").pointer == "/spec/nodes/reserve/do/agent"
    safe = _agent_map(named, "  agents:\n    clerk: {model: m, tools: [book]}\n")
    assert issues_of(safe) == []


def test_on_reject_names_a_node_and_a_high_risk_tool() -> None:
    spec = BASE.replace("      tool: pay\n", "      tool: pay\n      on_reject: reserv\n")
    issue = one(issues_of(spec), "unknown-node")
    assert issue.pointer == "/spec/nodes/charge/on_reject"
    assert "Did you mean `reserve`?" in issue.fix
    spec = BASE.replace("      tool: book\n", "      tool: book\n      on_reject: charge\n")
    assert one(issues_of(spec), "on-reject-unused").severity == "warning"
