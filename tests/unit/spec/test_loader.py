"""Loading YAML: positions, plain data, the YAML traps, and schema errors people understand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plait.engine.spec.errors import SpecError, SpecIssue
from plait.engine.spec.loader import load_spec, parse_spec
from plait.engine.spec.models import NODE_KINDS
from tests.unit.spec.helpers import fixture_text, issues_of, line_of, mutate, one

MINIMAL = fixture_text("minimal")


def errors_of(text: str) -> list[SpecIssue]:
    with pytest.raises(SpecError) as caught:
        parse_spec(text, "spec.yaml")
    assert caught.value.issues
    return caught.value.issues


# --------------------------------------------------------------------------- positions


def test_positions_of_nested_keys_and_list_items() -> None:
    source_map = parse_spec(MINIMAL).source_map
    text_lines = MINIMAL.splitlines()

    def at(pointer: str) -> tuple[int, int]:
        position = source_map.positions[pointer]
        return position.line, position.column

    model_line = line_of(MINIMAL, "model: fake")
    assert at("/spec/nodes/answer/model") == (model_line, 7)
    assert at("/metadata/version") == (line_of(MINIMAL, "version:"), 3)
    first_edge = line_of(MINIMAL, "{from: START")
    # A list item is located at its value (after `- `); keys inside a flow map too.
    assert at("/spec/edges/0") == (first_edge, 7)
    assert at("/spec/edges/1/to") == (first_edge + 1, text_lines[first_edge].index("to:") + 1)
    assert at("/spec/models/fake/script/0") == (line_of(MINIMAL, "content:"), 11)
    assert at("/spec/examples/0/input/topic") == (
        line_of(MINIMAL, "topic: greetings"),
        text_lines[line_of(MINIMAL, "topic: greetings") - 1].index("topic") + 1,
    )


def test_locate_falls_back_to_nearest_ancestor() -> None:
    source_map = parse_spec(MINIMAL).source_map
    assert source_map.locate("/spec/nodes/answer/nothing/deeper") == source_map.locate(
        "/spec/nodes/answer"
    )


def test_data_is_plain_python() -> None:
    text = MINIMAL + "  # trailing comment\n"
    data = parse_spec(text).data

    def check(value: Any) -> None:
        assert type(value) in (dict, list, str, int, float, bool, type(None)), type(value)
        if isinstance(value, dict):
            for key, item in value.items():
                assert type(key) is str
                check(item)
        elif isinstance(value, list):
            for item in value:
                check(item)

    check(data)
    assert data["spec"]["nodes"]["answer"]["model"] == "fake"


def test_load_spec_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MINIMAL)
    loaded = load_spec(path)
    assert loaded.ref == "minimal@1.0.0"
    assert loaded.base_dir == tmp_path
    assert loaded.file == str(path)


# --------------------------------------------------------------------------- YAML traps


def test_unquoted_version_float_is_an_error_saying_to_quote_it() -> None:
    text = mutate(MINIMAL, 'version: "1.0.0"', "version: 1.10")
    issue = one(errors_of(text), "version-not-string")
    assert issue.pointer == "/metadata/version"
    assert issue.line == line_of(text, "version: 1.10")
    assert '"1.10.0"' in issue.fix
    assert "1.1" in issue.message


def test_unquoted_version_in_a_flow_mapping() -> None:
    text = mutate(MINIMAL, '  name: minimal\n  version: "1.0.0"', "  {name: minimal, version: 2.5}")
    text = mutate(text, "metadata:\n  {", "metadata: {")
    issue = one(errors_of(text), "version-not-string")
    assert '`version: "2.5.0"`' in issue.fix
    assert "`version: 2.5`" in issue.message


def test_version_that_is_not_semver() -> None:
    issue = one(errors_of(mutate(MINIMAL, '"1.0.0"', '"1.0"')), "version-format")
    assert '"1.0.0"' in issue.fix


def test_missing_version_says_where_to_add_it() -> None:
    text = mutate(MINIMAL, '  version: "1.0.0"\n', "")
    issue = one(errors_of(text), "schema-missing-key")
    assert issue.pointer == "/metadata/version"
    assert issue.fix == 'add `version: "1.0.0"` under metadata'
    assert issue.line == line_of(text, "metadata:")


def test_yes_no_are_strings_and_a_boolean_default_of_no_is_flagged() -> None:
    text = mutate(MINIMAL, "answer: {type: string}", "answer: {type: boolean, default: no}")
    assert parse_spec(text).data["spec"]["state"]["answer"]["default"] == "no"
    issue = one(issues_of(text), "state-default-type")
    assert "`true`/`false`" in issue.fix
    assert issue.pointer == "/spec/state/answer/default"


def test_space_hash_truncating_a_value_warns() -> None:
    text = mutate(
        MINIMAL, 'prompt: "Answer briefly: {{ state.topic }}"', "prompt: Rank item #1 first"
    )
    assert parse_spec(text).data["spec"]["nodes"]["answer"]["prompt"] == "Rank item"
    issue = one(issues_of(text), "yaml-comment-truncation")
    assert issue.severity == "warning"
    assert issue.line == line_of(text, "#1 first")
    assert "quote" in issue.fix


def test_a_real_comment_after_a_value_does_not_warn() -> None:
    text = mutate(MINIMAL, "model: fake", "model: fake  # the scripted one")
    assert issues_of(text) == []


def test_unquoted_cel_conditional_explains_quoting() -> None:
    text = mutate(MINIMAL, "output: answer", "writes: {answer: state.topic ? 'a' : 'b'}")
    issue = one(errors_of(text), "yaml-syntax")
    assert issue.line == line_of(text, "writes:")
    assert "quote" in issue.fix


def test_tab_indentation() -> None:
    text = mutate(MINIMAL, "      output: answer", "\toutput: answer")
    issue = one(errors_of(text), "yaml-tab")
    assert issue.line == line_of(text, "\toutput")
    assert "spaces" in issue.fix


def test_duplicate_keys_are_errors_not_last_wins() -> None:
    text = mutate(MINIMAL, "      output: answer", "      output: answer\n      model: other")
    issue = one(errors_of(text), "yaml-duplicate-key")
    assert issue.line == line_of(text, "model: other")
    assert "`model`" in issue.message


def test_multiple_documents() -> None:
    issue = one(errors_of(MINIMAL + "---\n" + MINIMAL), "yaml-multiple-documents")
    assert issue.line == MINIMAL.count("\n") + 1
    assert "one spec per file" in issue.fix


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n"])
def test_empty_file(text: str) -> None:
    assert one(errors_of(text), "yaml-empty").line == 1


@pytest.mark.parametrize("text", ["- a\n- b\n", "just text\n", "42\n"])
def test_top_level_must_be_a_mapping(text: str) -> None:
    one(errors_of(text), "yaml-not-mapping")


def test_binary_garbage_in_text() -> None:
    issue = one(errors_of("apiVersion: plait/v1\nkind: \x00\x01\x02"), "yaml-encoding")
    assert (issue.line, issue.column) == (2, 7)


def test_binary_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"apiVersion: plait/v1\n\xff\xfe\x00garbage")
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    issue = one(caught.value.issues, "yaml-encoding")
    assert (issue.line, issue.column) == (2, 1)


def test_alias_bomb_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    one(errors_of("\n".join(lines) + "\n"), "yaml-too-large")


# --------------------------------------------------------------------------- schema errors


def test_unknown_key_suggests_the_closest_one() -> None:
    text = mutate(MINIMAL, "prompt:", "promt:")
    issues = errors_of(text)
    issue = one(issues, "schema-unknown-key")
    assert issue.pointer == "/spec/nodes/answer/promt"
    assert issue.line == line_of(text, "promt:")
    assert "did you mean `prompt`?" in issue.fix
    assert len(issues) == 1  # fixing the typo is the fix: no second error about `prompt`


def test_an_llm_node_without_prompt_or_messages_says_it_needs_one() -> None:
    text = mutate(MINIMAL, '      prompt: "Answer briefly: {{ state.topic }}"\n', "")
    issue = one(errors_of(text), "schema-value")
    assert issue.pointer == "/spec/nodes/answer"
    assert "needs a `prompt`, or `messages`" in issue.message


def test_a_mistyped_literal_argument_gets_only_its_own_errors() -> None:
    node = (
        "      kind: python\n      function: mod:fn\n"
        "      args: {a: {valeu: x}, b: 0.5, c: {value: 'not (cel'}}\n"
    )
    text = mutate(
        MINIMAL,
        '      kind: llm\n      model: fake\n      prompt: "Answer briefly: {{ state.topic }}"\n',
        node,
    )
    issues = errors_of(text)
    # Not "must be text or a number": the mapping is meant as `{value: ...}`.
    assert sorted(issue.code for issue in issues) == ["schema-missing-key", "schema-unknown-key"]
    typo = one(issues, "schema-unknown-key")
    assert typo.pointer == "/spec/nodes/answer/args/a/valeu"
    assert "did you mean `value`?" in typo.fix


def test_wrong_node_kind_lists_the_kinds() -> None:
    text = mutate(MINIMAL, "kind: llm", "kind: lmm")
    issue = one(errors_of(text), "unknown-node-kind")
    assert issue.pointer == "/spec/nodes/answer"
    assert all(kind in issue.fix for kind in NODE_KINDS)
    assert "`llm`" in issue.fix
    assert len(errors_of(text)) == 1  # no discriminated-union noise


def test_union_tag_that_is_also_a_key_maps_to_the_right_pointer() -> None:
    text = mutate(
        MINIMAL,
        '      kind: llm\n      model: fake\n      prompt: "Answer briefly: {{ state.topic }}"',
        "      kind: tool\n      tool: [1]",
    )
    issue = one(errors_of(text), "schema-type")
    assert issue.pointer == "/spec/nodes/answer/tool"
    assert issue.line == line_of(text, "tool: [1]")


def test_bad_duration_is_one_error() -> None:
    text = mutate(MINIMAL, "output: answer", "output: answer\n      timeout: 5 years")
    issues = errors_of(text)
    assert len(issues) == 1
    assert issues[0].pointer == "/spec/nodes/answer/timeout"
    assert "30s" in issues[0].fix


def test_bad_identifier_key() -> None:
    text = mutate(MINIMAL, "    answer: {type: string}", "    the-answer: {type: string}")
    issue = one(errors_of(text), "schema-value")
    assert issue.pointer == "/spec/state/the-answer"
    assert issue.line == line_of(text, "the-answer")


def test_literal_choice_suggests() -> None:
    text = mutate(MINIMAL, "topic: {type: string}", "topic: {type: string, reducer: apend}")
    issue = one(errors_of(text), "schema-value")
    assert "did you mean `append`?" in issue.fix


def test_reserved_node_id() -> None:
    text = mutate(MINIMAL, "    answer:\n      kind", "    END:\n      kind")
    assert "reserved" in one(errors_of(text), "schema-value").message


def test_issue_format_and_dict() -> None:
    issue = one(errors_of(mutate(MINIMAL, "prompt:", "promt:")), "schema-unknown-key")
    text = issue.format()
    assert text.startswith(f"spec.yaml:{issue.line}:{issue.column}: error[schema-unknown-key]")
    assert "fix: did you mean" in text
    assert issue.to_dict()["pointer"] == "/spec/nodes/answer/promt"


def test_a_wait_with_a_bad_duration_names_where_and_the_fix() -> None:
    text = mutate(
        MINIMAL,
        '      kind: llm\n      model: fake\n      prompt: "Answer briefly: {{ state.topic }}"',
        "      kind: wait\n      for: 10 minutes",
    )
    issue = one(errors_of(text), "schema-value")
    assert (issue.file, issue.pointer) == ("spec.yaml", "/spec/nodes/answer/for")
    assert (issue.line, issue.column) == (line_of(text, "for: 10 minutes"), 7)
    assert issue.message.startswith("`for` must be a duration such as")
    assert issue.fix == "write e.g. `for: 30s`, `for: 5m` or `for: 30` (seconds)"


def test_a_wait_needs_exactly_one_of_for_and_until() -> None:
    node = '      kind: llm\n      model: fake\n      prompt: "Answer briefly: {{ state.topic }}"'
    for body in ("      kind: wait", "      kind: wait\n      for: 5m\n      until: state.topic"):
        issue = one(errors_of(mutate(MINIMAL, node, body)), "schema-value")
        assert issue.pointer == "/spec/nodes/answer"
        assert "exactly one of `for`" in issue.message
