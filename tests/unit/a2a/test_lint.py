"""Lint of ``a2a`` nodes and ``spec.a2a``."""

from __future__ import annotations

from plait.engine.spec.lint import lint
from plait.engine.spec.loader import parse_spec

SPEC = """
apiVersion: plait/v1
kind: Graph
metadata: {name: caller, version: "1.0.0"}
spec:
  a2a: {expose: true, text_input: %(text_input)s}
  secrets: [AGENT_TOKEN]
  state:
    question: {type: string}
    answer: {type: object}
  input: %(inputs)s
  nodes:
    ask:
      kind: a2a
      %(target)s
      message: "{{ state.question }} {{ state.nope }}"
      headers: {Authorization: %(secret)s}
      output: answer
  edges:
    - {from: START, to: ask}
    - {from: ask, to: END}
"""


def codes(**values: str) -> list[tuple[str, str]]:
    defaults = {
        "text_input": "question",
        "inputs": "[question]",
        "target": "url: http://x",
        "secret": "AGENT_TOKEN",
    }
    loaded = parse_spec(SPEC % {**defaults, **values}, "caller.yaml")
    return [(issue.code, issue.pointer) for issue in lint(loaded)]


def test_a_valid_node_reports_only_the_unknown_template_field() -> None:
    assert codes() == [("unknown-state-field", "/spec/nodes/ask/message")]


def test_the_node_needs_exactly_one_of_url_and_card() -> None:
    assert ("incomplete-node", "/spec/nodes/ask") in codes(target="description: no target")
    both = codes(target="url: http://x\n      card: http://x/card.json")
    assert ("incomplete-node", "/spec/nodes/ask") in both


def test_header_secrets_must_be_declared() -> None:
    assert ("undeclared-secret", "/spec/nodes/ask/headers/Authorization") in codes(secret="OTHER")


def test_text_input_must_be_a_state_field() -> None:
    assert ("unknown-state-field", "/spec/a2a/text_input") in codes(text_input="missing")


def test_text_input_must_be_an_input_field() -> None:
    # A run refuses non-input fields, so every text message would be rejected.
    assert ("unknown-input-field", "/spec/a2a/text_input") in codes(inputs="[answer]")
