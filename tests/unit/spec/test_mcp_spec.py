"""MCP servers and tools in the spec: shapes, references and secrets."""

from __future__ import annotations

from tests.unit.spec.helpers import issues_of, line_of, mutate, one

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: mcp
  version: "1.0.0"
spec:
  secrets: [DEMO_TOKEN]
  mcp_servers:
    time: {transport: stdio, command: mcp-server-time, args: [--local-timezone, UTC]}
    demo:
      transport: http
      url: http://127.0.0.1:8765/mcp
      headers: {Authorization: DEMO_TOKEN}
  tools:
    now: {kind: mcp, server: time, tool: get_current_time, timeout: 10s}
    ticket: {kind: mcp, server: demo, tool: create_ticket, idempotent: false}
  state:
    out: {type: any}
  nodes:
    call:
      kind: tool
      tool: now
      args: {timezone: "'UTC'"}
      output: out
  edges:
    - {from: START, to: call}
    - {from: call, to: END}
"""


def test_a_spec_with_mcp_servers_and_tools_is_valid() -> None:
    assert [i for i in issues_of(SPEC) if i.severity == "error"] == []


def test_an_unknown_server_is_an_error_with_its_place_and_a_fix() -> None:
    text = mutate(SPEC, "server: time,", "server: tmie,")
    issue = one(issues_of(text), "unknown-mcp-server")
    assert issue.pointer == "/spec/tools/now/server"
    assert issue.line == line_of(text, "server: tmie")
    assert issue.column > 1
    assert "Did you mean `time`?" in issue.fix


def test_a_header_secret_must_be_declared() -> None:
    text = mutate(SPEC, "  secrets: [DEMO_TOKEN]\n", "")
    issue = one(issues_of(text), "undeclared-secret")
    assert issue.pointer == "/spec/mcp_servers/demo/headers/Authorization"
    assert "spec.secrets" in issue.fix


def test_transport_fields_must_match_the_transport() -> None:
    text = mutate(SPEC, "url: http://127.0.0.1:8765/mcp", "command: demo-server")
    issues = issues_of(text)
    assert any("needs `url`" in i.message for i in issues), [i.format() for i in issues]


def test_an_mcp_tool_needs_a_server_and_no_function() -> None:
    text = mutate(SPEC, "server: demo, tool: create_ticket", "function: a.b:c")
    issues = issues_of(text)
    assert any("needs `server`" in i.message for i in issues), [i.format() for i in issues]
