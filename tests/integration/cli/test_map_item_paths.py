"""``plait run --json`` names each map item in the path of the nodes its subgraph runs:
``each[0]`` for the first item as for the others (LangGraph counts nested calls only from
the second on), and a subgraph inside an item under it."""

from __future__ import annotations

from tests.integration.cli.conftest import TEST_SPECS, PlaitRunner

#: claims.yaml maps four claims over desk.yaml, whose `file` node runs cabinet.yaml.
CLAIMS = TEST_SPECS / "map_paths" / "claims.yaml"


def test_each_item_is_named_in_its_nodes_paths(plait: PlaitRunner) -> None:
    ran = plait("run", CLAIMS, "--json")

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
    shown = plait("run", CLAIMS)
    assert shown.code == 0, shown.stdout + shown.stderr
    assert '✓ each[0] > classify  done="0"' in shown.stdout
    assert "✓ each[3] > file > shelve" in shown.stdout
