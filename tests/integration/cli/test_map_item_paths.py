"""``plait run --json`` names each map item in the path of the nodes its subgraph runs:
``each[0]`` for the first item as for the others (LangGraph counts nested calls only from
the second on), and a subgraph inside an item under it."""

from __future__ import annotations

from pathlib import Path

from tests.integration.cli.conftest import PlaitRunner

PARENT = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: claims, version: "1.0.0"}
spec:
  state:
    claims: {type: list}
    results: {type: list}
  input: [claims]
  nodes:
    each:
      kind: map
      items: state.claims
      concurrency: 2
      do: {kind: subgraph, ref: desk@1.0.0, input: {claim: item}}
      output: results
  edges:
    - {from: START, to: each}
    - {from: each, to: END}
  examples:
    - name: four
      input: {claims: ["/a/0", "/a/1", "/a/2", "/a/3"]}
"""

DESK = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: desk, version: "1.0.0"}
spec:
  state:
    claim: {type: string}
    done: {type: any}
    folder: {type: any}
  input: [claim]
  output: [done, folder]
  nodes:
    classify: {kind: python, function: 'os.path:basename', args: {p: state.claim}, output: done}
    file:
      kind: subgraph
      ref: cabinet@1.0.0
      input: {claim: state.claim}
      writes: {folder: result.folder}
  edges:
    - {from: START, to: classify}
    - {from: classify, to: file}
    - {from: file, to: END}
"""

CABINET = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: cabinet, version: "1.0.0"}
spec:
  state:
    claim: {type: string}
    folder: {type: any}
  input: [claim]
  output: [folder]
  nodes:
    shelve: {kind: python, function: 'os.path:dirname', args: {p: state.claim}, output: folder}
  edges:
    - {from: START, to: shelve}
    - {from: shelve, to: END}
"""


def test_each_item_is_named_in_its_nodes_paths(plait: PlaitRunner, tmp_path: Path) -> None:
    for name, text in (("claims", PARENT), ("desk", DESK), ("cabinet", CABINET)):
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")

    ran = plait("run", tmp_path / "claims.yaml", "--json")

    assert ran.code == 0, ran.stdout + ran.stderr
    finished = [event for event in ran.events() if event["event"] == "node_finished"]
    # Each item's classify wrote the item's own claim: the path names the item that ran it.
    classified = {
        tuple(e["path"]): e["update"]["done"] for e in finished if e["node"] == "classify"
    }
    assert classified == {(f"each[{index}]",): str(index) for index in range(4)}
    shelved = {tuple(e["path"]) for e in finished if e["node"] == "shelve"}
    assert shelved == {(f"each[{index}]", "file") for index in range(4)}

    # The terminal view says the same.
    shown = plait("run", tmp_path / "claims.yaml")
    assert shown.code == 0, shown.stdout + shown.stderr
    assert '✓ each[0] > classify  done="0"' in shown.stdout
    assert "✓ each[3] > file > shelve" in shown.stdout
