"""Every lint rule: a valid fixture, one mutation, and the issue it must produce."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from plait.engine.spec.errors import has_errors
from plait.engine.spec.lint.graph import strongly_connected
from plait.engine.spec.validate import validate_paths
from tests.unit.spec.helpers import (
    fixture_text,
    issues_of,
    line_of,
    mutate,
    one,
    registry_with,
)

MINIMAL = fixture_text("minimal")
TEAM = fixture_text("team")
LLM_NODE = '      kind: llm\n      model: fake\n      prompt: "Answer briefly: {{ state.topic }}"\n'


@dataclass(frozen=True)
class Case:
    """A mutation of a fixture and the issue it must cause."""

    code: str
    old: str
    new: str
    pointer: str
    line: str  # a text on the line the issue must point at
    fix: str  # a text the fix must contain
    base: str = "minimal"

    @property
    def id(self) -> str:
        return f"{self.code}:{self.pointer}"


CASES = [
    # ----------------------------------------------------------------- references
    Case(
        "unknown-node",
        "{from: answer, to: END}",
        "{from: answer, to: answr}",
        "/spec/edges/1/to",
        "to: answr",
        "Did you mean `answer`?",
    ),
    Case(
        "unknown-node",
        "{from: answer, to: END}",
        "{from: nope, to: END}",
        "/spec/edges/1/from",
        "from: nope",
        "spec.nodes",
    ),
    Case(
        "unknown-node",
        "branches: [left, right]",
        "branches: [left, rihgt]",
        "/spec/nodes/fan/branches/1",
        "branches:",
        "`right`",
        "team",
    ),
    Case(
        "unknown-node",
        "join: write",
        "join: wirte",
        "/spec/nodes/fan/join",
        "join: wirte",
        "`write`",
        "team",
    ),
    Case(
        "unknown-model",
        "model: fake",
        "model: faek",
        "/spec/nodes/answer/model",
        "model: faek",
        "Did you mean `fake`?",
    ),
    Case(
        "unknown-model",
        "      model: planner_model\n      system",
        "      model: gpt\n      system",
        "/spec/agents/writer/model",
        "model: gpt",
        "spec.models",
        "team",
    ),
    Case(
        "unknown-tool",
        "tools: [search]",
        "tools: [serch]",
        "/spec/agents/writer/tools/0",
        "tools: [serch]",
        "`search`",
        "team",
    ),
    Case(
        "unknown-tool",
        "tool: search",
        "tool: find",
        "/spec/nodes/right/tool",
        "tool: find",
        "spec.tools",
        "team",
    ),
    Case(
        "unknown-agent",
        "agent: writer",
        "agent: author",
        "/spec/nodes/write/agent",
        "agent: author",
        "spec.agents",
        "team",
    ),
    Case(
        "unknown-ref",
        "ref: minimal@1.0.0",
        "ref: minimal@2.0.0",
        "/spec/nodes/child/ref",
        "ref: minimal@2.0.0",
        "pin a version",
        "team",
    ),
    Case(
        "recursive-ref",
        "ref: minimal@1.0.0",
        "ref: team@1.2.0",
        "/spec/nodes/child/ref",
        "ref: team@1.2.0",
        "cannot contain itself",
        "team",
    ),
    Case(
        "incomplete-node",
        "      kind: agent\n      agent: writer\n",
        "      kind: agent\n",
        "/spec/nodes/write",
        "    write:",
        "agent:",
        "team",
    ),
    Case(
        "incomplete-node",
        '        prompt: "Research {{ item }}"\n',
        "",
        "/spec/nodes/research/do",
        "      do:",
        "prompt:",
        "team",
    ),
    Case(
        "invalid-edge",
        "{from: answer, to: END}",
        "{from: END, to: answer}",
        "/spec/edges/1/from",
        "from: END",
        "remove the edge",
    ),
    Case(
        "invalid-edge",
        "{from: answer, to: END}",
        "{from: answer, to: START}",
        "/spec/edges/1/to",
        "to: START",
        "`END`",
    ),
    Case(
        "missing-file",
        "      script:\n",
        "      fixture: replies.yaml\n      script:\n",
        "/spec/models/fake/fixture",
        "fixture:",
        "relative to the spec",
    ),
    # ----------------------------------------------------------------- graph shape
    Case(
        "no-entry",
        "    - {from: START, to: answer}\n",
        "",
        "/spec/edges",
        "  edges:",
        "{from: START, to: answer}",
    ),
    Case(
        "unreachable-node",
        "    - {from: plan, to: fan}\n",
        "    - {from: plan, to: END}\n",
        "/spec/nodes/fan",
        "    fan:",
        "add an edge to `fan`",
        "team",
    ),
    Case(
        "dead-end",
        "    - {from: answer, to: END}\n",
        "",
        "/spec/nodes/answer",
        "    answer:",
        "{from: answer, to: END}",
    ),
    Case(
        "no-path-to-end",
        "    - {from: child, to: confirm}\n",
        "    - {from: child, to: child}\n",
        "/spec/nodes/child",
        "    child:",
        "reaches `END`",
        "team",
    ),
    Case(
        "unbounded-cycle",
        "      max_visits: 3\n",
        "",
        "/spec/nodes/write",
        "    write:",
        "max_visits",
        "team",
    ),
    Case(
        "ambiguous-edges",
        "    - {from: child, to: confirm}\n",
        "    - {from: child, to: confirm}\n    - {from: child, switch: [{when: 'true', to: END}],"
        " default: END}\n",
        "/spec/edges/6",
        "from: child, switch",
        "default",
        "team",
    ),
    Case(
        "ambiguous-edges",
        "    - {from: child, to: confirm}\n",
        "    - {from: child, route: \"'a'\", to: {a: confirm}}\n"
        "    - {from: child, route: \"'b'\", to: {b: END}}\n",
        "/spec/edges/6",
        "route: \"'b'\"",
        "merge them",
        "team",
    ),
    Case(
        "parallel-writers",
        'writes: {notes: "[result]", cost: "1.5"}',
        'writes: {notes: "[result]", cost: "1.5", verdict: "\'r\'"}',
        "/spec/nodes/right/writes/verdict",
        "verdict: \"'r'\"",
        "reducer",
        "team",
    ),
    Case(
        "route-label-missing",
        "to: {good: research, again: write}",
        "to: {good: research}",
        "/spec/edges/3/to",
        "to: {good: research}",
        "again: <node>",
        "team",
    ),
    Case(
        "route-label-missing",
        "to: {good: research, again: write}",
        "to: {}",
        "/spec/edges/3/to",
        "to: {}",
        "add `default: <node>`",
        "team",
    ),
    Case(
        "approval-route",
        "to: {approve: END, reject: END, edit: END}",
        "to: {approve: END, edit: END}",
        "/spec/edges/6/to",
        "to: {approve: END, edit: END}",
        "reject: <node>",
        "team",
    ),
    # ----------------------------------------------------------------- expressions
    Case(
        "unknown-model",
        "      max_iterations: 4\n",
        "      max_iterations: 4\n"
        "      routes: [{when: \"state.request != ''\", model: planer_model}]\n",
        "/spec/agents/writer/routes/0/model",
        "routes:",
        "`planner_model`",
        "team",
    ),
    Case(
        "cel-unknown-root",
        "      max_iterations: 4\n",
        "      max_iterations: 4\n"
        '      routes: [{when: "result.tokens > 9", model: planner_model}]\n',
        "/spec/agents/writer/routes/0/when",
        "routes:",
        "usage",
        "team",
    ),
    Case(
        "unknown-model",
        "      output: draft\n",
        '      output: draft\n      routes: [{when: "true", model: fast}]\n',
        "/spec/nodes/write/routes/0/model",
        "routes:",
        "spec.models",
        "team",
    ),
    Case(
        "cel-syntax",
        "output: answer",
        'writes: {answer: "state.topic +"}',
        "/spec/nodes/answer/writes/answer",
        "writes:",
        "quote it",
    ),
    Case(
        "cel-unknown-root",
        "output: answer",
        'writes: {answer: "topic"}',
        "/spec/nodes/answer/writes/answer",
        "writes:",
        "`state.topic`",
    ),
    Case(
        "cel-unknown-root",
        'args: {query: "state.request"',
        'args: {query: "result.text"',
        "/spec/nodes/right/args/query",
        "args: {query:",
        "read the state",
        "team",
    ),
    Case(
        "cel-unknown-root",
        "label: \"size(state.draft) > 10 ? 'good' : 'again'\"",
        'label: "item"',
        "/spec/nodes/review/label",
        "label:",
        "here",
        "team",
    ),
    Case(
        "unknown-state-field",
        "output: answer",
        'writes: {answer: "state.topc"}',
        "/spec/nodes/answer/writes/answer",
        "writes:",
        "Did you mean `topic`?",
    ),
    Case(
        "unknown-state-field",
        "{{ state.topic }}",
        "{{ state.subject }}",
        "/spec/nodes/answer/prompt",
        "prompt:",
        "spec.state",
    ),
    Case(
        "unknown-state-field",
        "output: answer",
        "output: reply",
        "/spec/nodes/answer/output",
        "output: reply",
        "declare it",
    ),
    Case(
        "unknown-state-field",
        "  output: [draft, verdict, summary]",
        "  output: [draft, verdicts, summary]",
        "/spec/output/1",
        "output: [draft",
        "`verdict`",
        "team",
    ),
    Case(
        "unknown-input-field",
        'input: {topic: "state.request"}',
        'input: {topic: "input.draft"}',
        "/spec/nodes/child/input/topic",
        "input: {topic:",
        "spec.input",
        "team",
    ),
    Case(
        "template-syntax",
        "{{ state.topic }}",
        "{{ state.topic }",
        "/spec/nodes/answer/prompt",
        "prompt:",
        "Jinja2",
    ),
    # ----------------------------------------------------------------- values
    Case(
        "state-default-type",
        "answer: {type: string}",
        "answer: {type: string, default: 3}",
        "/spec/state/answer/default",
        "answer: {type",
        "type `string`",
    ),
    Case(
        "reducer-type",
        "answer: {type: string}",
        "answer: {type: string, reducer: sum}",
        "/spec/state/answer/reducer",
        "answer: {type",
        "`integer`",
    ),
    Case(
        "invalid-json-schema",
        "required: [steps]",
        "required: steps",
        "/spec/nodes/plan/schema/required",
        "required: steps",
        "type: object",
        "team",
    ),
    Case(
        "invalid-regex",
        '- content: "A short answer."',
        '- content: "A short answer."\n          when: "(unclosed"',
        "/spec/models/fake/script/0/when",
        'when: "(unclosed"',
        "escape",
    ),
    Case(
        "example-unknown-input",
        "input: {topic: greetings}",
        "input: {topik: greetings}",
        "/spec/examples/0/input/topik",
        "topik",
        "Did you mean `topic`?",
    ),
    Case(
        "duplicate-example",
        "      input: {topic: greetings}\n",
        "      input: {topic: greetings}\n    - {name: hello, description: twin}\n",
        "/spec/examples/1/name",
        "description: twin",
        "its own name",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_rule(case: Case) -> None:
    text = mutate(fixture_text(case.base), case.old, case.new)
    registry = registry_with("minimal") if case.base == "team" else None
    issue = one([i for i in issues_of(text, registry) if i.pointer == case.pointer], case.code)
    assert issue.line == line_of(text, case.line), issue.format()
    assert case.fix in issue.fix, issue.format()
    assert issue.column >= 1
    assert issue.message


def test_every_lint_code_is_tested() -> None:
    documented = {case.code for case in CASES}
    assert documented >= {
        "unknown-node",
        "unknown-model",
        "unknown-tool",
        "unknown-agent",
        "unknown-ref",
        "unreachable-node",
        "dead-end",
        "no-path-to-end",
        "unbounded-cycle",
        "ambiguous-edges",
        "parallel-writers",
        "route-label-missing",
        "approval-route",
        "cel-syntax",
        "cel-unknown-root",
        "unknown-state-field",
        "template-syntax",
        "state-default-type",
        "invalid-json-schema",
        "example-unknown-input",
    }


def test_the_fixtures_are_clean() -> None:
    assert issues_of(MINIMAL) == []
    assert issues_of(TEAM, registry_with("minimal")) == []


def test_comprehension_variables_are_not_roots() -> None:
    text = mutate(
        MINIMAL,
        "output: answer",
        "writes: {answer: \"[1, 2].map(x, x * 2).exists(y, y > 1) ? 'a' : 'b'\"}",
    )
    assert issues_of(text) == []


def test_parallel_writers_on_static_fan_out() -> None:
    text = mutate(
        MINIMAL,
        "    - {from: START, to: answer}\n",
        "    - {from: START, to: answer}\n    - {from: START, to: again}\n"
        "    - {from: again, to: END}\n",
    )
    text = mutate(text, "  edges:", "    again:\n" + LLM_NODE + "      output: answer\n  edges:")
    issue = one(issues_of(text), "parallel-writers")
    assert "`answer` and `again`" in issue.message
    assert issue.pointer == "/spec/nodes/again/output"


def test_approval_without_edit_target_is_a_warning() -> None:
    text = mutate(
        TEAM, "to: {approve: END, reject: END, edit: END}", "to: {approve: END, reject: END}"
    )
    issues = issues_of(text, registry_with("minimal"))
    assert one(issues, "approval-route").severity == "warning"
    assert not has_errors(issues)


def test_route_with_default_covers_missing_labels() -> None:
    text = mutate(
        TEAM, "to: {good: research, again: write}", "to: {good: research}\n      default: write"
    )
    assert issues_of(text, registry_with("minimal")) == []


def test_cycle_through_a_switch_needs_a_bound() -> None:
    text = mutate(
        MINIMAL,
        "    - {from: answer, to: END}\n",
        '    - from: answer\n      switch: [{when: "size(state.answer) < 3", to: answer}]\n'
        "      default: END\n",
    )
    issue = one(issues_of(text), "unbounded-cycle")
    assert issue.pointer == "/spec/nodes/answer"
    bounded = mutate(text, "      output: answer\n", "      output: answer\n      max_visits: 2\n")
    assert issues_of(bounded) == []


def test_refs_that_loop_through_another_spec(tmp_path: Path) -> None:
    child = mutate(MINIMAL, "name: minimal", "name: child")
    child = mutate(
        child,
        "    answer:\n      kind: llm",
        "    back:\n      kind: subgraph\n      ref: team@1.2.0\n      output: answer\n"
        "    answer:\n      kind: llm",
    )
    child = mutate(
        child,
        "    - {from: answer, to: END}",
        "    - {from: answer, to: back}\n    - {from: back, to: END}",
    )
    (tmp_path / "child.yaml").write_text(child)
    (tmp_path / "team.yaml").write_text(mutate(TEAM, "ref: minimal@1.0.0", "ref: child@1.0.0"))
    issues = validate_paths([tmp_path])
    looped = [issue for issue in issues if issue.code == "recursive-ref"]
    assert {issue.file for issue in looped} == {
        str(tmp_path / "child.yaml"),
        str(tmp_path / "team.yaml"),
    }
    assert (
        "`team@1.2.0` -> `child@1.0.0` -> `team@1.2.0`"
        in one([i for i in looped if i.file.endswith("team.yaml")], "recursive-ref").message
    )


def test_subgraph_input_must_be_a_child_input() -> None:
    text = mutate(TEAM, 'input: {topic: "state.request"}', 'input: {subject: "state.request"}')
    issue = one(issues_of(text, registry_with("minimal")), "unknown-input-field")
    assert issue.pointer == "/spec/nodes/child/input/subject"
    assert "`topic`" in issue.fix


def test_strongly_connected_components() -> None:
    graph = {"a": ["b"], "b": ["c", "a"], "c": ["c"], "d": []}
    assert strongly_connected(graph) == [["c"], ["a", "b"], ["d"]]
