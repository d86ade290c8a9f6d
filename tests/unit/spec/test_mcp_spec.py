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


PER_RUN = mutate(
    mutate(
        SPEC,
        "  state:\n    out: {type: any}\n",
        "  state:\n    out: {type: any}\n    repo: {type: string}\n",
    ),
    "args: [--local-timezone, UTC]}",
    "args: [--local-timezone, {expr: input.repo}], env: {TZ_HOME: {expr: run.thread_id}}}",
)


def test_per_run_server_values_are_cel_over_input_and_run() -> None:
    assert [i.format() for i in issues_of(PER_RUN) if i.severity == "error"] == []


def test_a_per_run_value_may_not_read_the_state() -> None:
    text = mutate(PER_RUN, "{expr: input.repo}", "{expr: state.out}")
    issue = one(issues_of(text), "cel-unknown-root")
    assert issue.pointer == "/spec/mcp_servers/time/args/1/expr"
    assert issue.line == line_of(text, "{expr: state.out}")
    assert "cannot read `state`" in issue.message and "`input`" in issue.fix


def test_a_per_run_value_reads_declared_inputs_only() -> None:
    text = mutate(PER_RUN, "{expr: input.repo}", "{expr: input.rpeo}")
    issue = one(issues_of(text), "unknown-input-field")
    assert issue.pointer == "/spec/mcp_servers/time/args/1/expr"


def test_text_that_looks_like_a_run_value_is_a_warning_with_the_expr_form() -> None:
    text = mutate(PER_RUN, "{expr: input.repo}", "input.repo")
    issue = one(issues_of(text), "server-value-as-written")
    assert issue.severity == "warning"
    assert issue.pointer == "/spec/mcp_servers/time/args/1"
    assert "`{expr: input.repo}`" in issue.fix
    env = one(
        issues_of(mutate(PER_RUN, "{expr: run.thread_id}", "'${HOME}'")), "server-value-as-written"
    )
    assert env.pointer == "/spec/mcp_servers/time/env/TZ_HOME"
    assert "pass a secret with `secrets`" in env.fix
