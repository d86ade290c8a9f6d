"""The libyaml fast path reads exactly what the ruamel reader reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.engine.spec.libyaml_reader import read_fast
from plait.engine.spec.limits import MAX_DEPTH, MAX_VALUES
from plait.engine.spec.loader import read_yaml

ROOT = Path(__file__).resolve().parents[3]
SPEC_FILES = sorted(
    [*ROOT.joinpath("specs").glob("*.yaml"), *Path(__file__).parent.glob("fixtures/*.yaml")]
)

TRICKY = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: tricky, version: "1.0.0", labels: {a: "x"}}
spec:
  state:
    flag: {type: boolean, default: no}
    when: {type: string, default: 2024-01-01}
    n: {type: integer, default: 0x1F}
    f: {type: number, default: -.5}
    big: {type: integer, default: 1_000}
    nothing: {type: any, default: ~}
    text:
      type: string
      default: price #1
    quoted: {type: string, default: 'yes'}
    block:
      type: string
      default: |
        line one
        line two
  nodes:
    a:
      kind: python
      function: m:f
      description: keeps # a comment
      writes: {n: "state.n + 1"}
  edges:
    - from: START
      to: a
    - {from: a, to: END}
"""


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.name)
def test_fast_path_matches_ruamel_on_every_spec(path: Path) -> None:
    text = path.read_text()
    assert read_fast(text, max_values=MAX_VALUES, max_depth=MAX_DEPTH) is not None
    assert read_yaml(text, path.name) == read_yaml(text, path.name, fast_path=False)


def test_fast_path_matches_ruamel_on_yaml_traps() -> None:
    fast = read_yaml(TRICKY, "t.yaml")
    slow = read_yaml(TRICKY, "t.yaml", fast_path=False)
    assert fast == slow
    data, _, warnings = fast
    state = data["spec"]["state"]
    assert state["flag"]["default"] == "no"  # YAML 1.2: not a boolean
    assert state["when"]["default"] == "2024-01-01"
    assert (state["n"]["default"], state["big"]["default"]) == (31, 1000)
    assert [w.code for w in warnings] == ["yaml-comment-truncation"]
    assert warnings[0].pointer == "/spec/state/text/default"


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # duplicate key
        "a: !!str 1\n",  # explicit tag
        "base: &b {x: 1}\nother:\n  <<: *b\n",  # merge key
        "a: 1\n---\nb: 2\n",  # two documents
        "a: [1, 2\n",  # syntax error
        "- 1\n- 2\n",  # not a mapping
    ],
)
def test_unusual_documents_fall_back_to_ruamel(text: str) -> None:
    assert read_fast(text, max_values=MAX_VALUES, max_depth=MAX_DEPTH) is None
