"""`spec.evaluation` as a user writes it: what lint says, where, and how to fix it."""

from __future__ import annotations

from pathlib import Path

from plait.engine.spec.loader import parse_spec
from plait.engine.spec.validate import validate_paths, validate_text
from plait.server.auth.code_policy import refused_code
from tests.unit.spec.helpers import line_of, mutate, one

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: graded, version: "1.0.0"}
spec:
  state:
    answer: {type: string}
  models:
    judge:
      provider: scripted
      script: [{data: {score: 1, reason: fine}}]
  nodes:
    write:
      kind: python
      function: "graded_code:write"
      writes: {answer: result}
  edges:
    - {from: START, to: write}
    - {from: write, to: END}
  evaluation:
    sample: 0.25
    graders:
      short:
        python: "graded_code:short"
      judged:
        llm:
          model: judge
          prompt: "Is {{ output.answer }} right after {{ steps | length }} steps?"
"""


def test_a_spec_with_both_kinds_of_grader_is_valid(tmp_path: Path) -> None:
    (tmp_path / "graded_code.py").write_text(
        "def write(**state):\n    return 'x'\n\n\ndef short(trajectory):\n    return 1.0\n"
    )
    path = tmp_path / "graded.yaml"
    path.write_text(SPEC)
    assert [issue.format() for issue in validate_paths([path])] == []


def test_a_grader_of_an_unknown_model_names_the_line_and_the_models() -> None:
    text = mutate(SPEC, "          model: judge", "          model: juge")
    issue = one(validate_text(text, "graded.yaml"), "unknown-model")
    assert issue.line == line_of(text, "          model: juge")
    assert issue.pointer == "/spec/evaluation/graders/judged/llm/model"
    assert "judge" in issue.fix


def test_a_graders_prompt_reading_state_is_an_error_with_the_fix() -> None:
    text = mutate(SPEC, "{{ output.answer }}", "{{ state.answer }}")
    issue = one(validate_text(text, "graded.yaml"), "grader-reads-state")
    assert issue.line == line_of(text, "prompt:")
    assert "output.<field>" in issue.fix


def test_a_grader_is_python_or_llm_a_sample_a_share_and_a_timeout_bounded() -> None:
    python = '        python: "graded_code:short"'
    both = mutate(SPEC, python, python + "\n        llm: {model: judge, prompt: hi}")
    issue = one(validate_text(both, "graded.yaml"), "schema-value")
    assert issue.pointer == "/spec/evaluation/graders/short"
    assert issue.line == line_of(both, "      short:")
    assert "either `python: module:function` or `llm: {model, prompt}`" in issue.message
    over = mutate(SPEC, "sample: 0.25", "sample: 25")
    issue = one(validate_text(over, "graded.yaml"), "schema-value")
    assert (issue.pointer, issue.line) == ("/spec/evaluation/sample", line_of(over, "sample: 25"))
    assert "<= 1.0" in issue.fix
    long = mutate(SPEC, "    sample: 0.25", "    sample: 0.25\n    timeout: 1h")
    issue = one(validate_text(long, "graded.yaml"), "schema-value")
    assert (issue.pointer, issue.line) == ("/spec/evaluation/timeout", line_of(long, "timeout: 1h"))
    assert "at most 600s" in issue.message


def test_a_tenant_not_trusted_with_code_gets_no_python_grader() -> None:
    loaded = parse_spec(SPEC, "graded.yaml")
    refused = refused_code(loaded, frozenset({"plait_examples"}))
    pointers = [issue.pointer for issue in refused]
    assert "/spec/evaluation/graders/short/python" in pointers
    issue = next(i for i in refused if i.pointer == "/spec/evaluation/graders/short/python")
    assert issue.line == line_of(SPEC, 'python: "graded_code:short"')
    assert refused_code(loaded, frozenset({"graded_code"})) == []
