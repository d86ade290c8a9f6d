"""Property tests: randomly broken specs give clean issues, never an exception."""

from __future__ import annotations

import copy
import io
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from plait.engine.spec.errors import SpecIssue
from plait.engine.spec.loader import parse_spec
from plait.engine.spec.validate import validate_paths
from tests.unit.spec.helpers import fixture_text, issues_of, registry_with

BASES = {name: fixture_text(name) for name in ("minimal", "team")}
DATA = {name: parse_spec(text).data for name, text in BASES.items()}
REGISTRY = registry_with("minimal")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["START", "END", "state.x", "{{ state.topic", "a ? b : c", "1.10", "no"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in ``data``."""
    found = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += paths(value, (*prefix, index))
    return found


def names_in(data: dict[str, Any]) -> list[str]:
    body = data["spec"]
    return [*body["nodes"], *body.get("state", {}), *body.get("models", {}), "START", "END"]


def mutate(original: dict[str, Any], draw: st.DrawFn) -> dict[str, Any]:
    """Up to three random edits: delete, retype, rename a reference, add garbage, swap."""
    data = copy.deepcopy(original)
    names = names_in(original)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        where = draw(st.sampled_from(paths(data)))
        parent = data
        for part in where[:-1]:
            parent = parent[part]
        key = where[-1]
        operation = draw(st.sampled_from(["delete", "retype", "rename", "garbage", "swap"]))
        if operation == "delete":
            del parent[key]
        elif operation == "retype":
            parent[key] = draw(values)
        elif operation == "rename":
            parent[key] = draw(st.sampled_from(names)) + draw(st.sampled_from(["", "x"]))
        elif operation == "garbage" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(values)
        elif operation == "swap":
            other = draw(st.sampled_from(paths(data)))
            shorter = min(len(other), len(where))
            if other[:shorter] == where[:shorter]:
                continue  # one holds the other: swapping would nest a value in itself
            holder = data
            for part in other[:-1]:
                holder = holder[part]
            parent[key], holder[other[-1]] = holder[other[-1]], parent[key]
        if not paths(data):
            break
    return data


def dump(data: Any) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def assert_clean(issues: list[SpecIssue], text: str) -> None:
    lines = max(1, text.count("\n") + 1)
    for issue in issues:
        assert issue.code != "internal", issue.format()
        assert 1 <= issue.line <= lines + 1, issue.format()
        assert issue.column >= 1, issue.format()
        assert issue.message.strip(), issue.format()
        assert issue.fix.strip(), issue.format()
        assert issue.severity in ("error", "warning")


@SETTINGS
@given(st.sampled_from(sorted(BASES)), st.data())
def test_mutated_data_gives_clean_issues(base: str, data: st.DataObject) -> None:
    mutated = mutate(DATA[base], data.draw)
    text = dump(mutated)
    assert_clean(issues_of(text, REGISTRY), text)


@SETTINGS
@given(
    st.sampled_from(sorted(BASES)),
    st.sampled_from(["truncate", "insert", "delete_line", "duplicate_line", "replace"]),
    st.integers(min_value=0, max_value=10**6),
    st.text(min_size=1, max_size=8),
)
def test_mutated_text_gives_clean_issues(base: str, operation: str, at: int, junk: str) -> None:
    text = BASES[base]
    position = at % (len(text) + 1)
    lines = text.splitlines(keepends=True)
    line = at % len(lines)
    if operation == "truncate":
        text = text[:position]
    elif operation == "insert":
        text = text[:position] + junk + text[position:]
    elif operation == "delete_line":
        text = "".join(lines[:line] + lines[line + 1 :])
    elif operation == "duplicate_line":
        text = "".join(lines[: line + 1] + lines[line:])
    else:
        text = text[:position] + junk + text[position + len(junk) :]
    assert_clean(issues_of(text, REGISTRY), text)


@settings(max_examples=25, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_through_validate_paths(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spec.yaml"
        path.write_bytes(raw)
        issues = validate_paths([path])
    text = raw.decode("utf-8", errors="replace")
    assert_clean(issues, text)
    assert issues  # random bytes are never a valid spec
