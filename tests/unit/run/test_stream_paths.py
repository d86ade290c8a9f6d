"""The path of a node from LangGraph's namespace: map items named ``map[index]``."""

from __future__ import annotations

from plait.engine.run.stream_items import path_of

MAPS = {("each",), ("office", "desk", "rows")}


def test_a_maps_first_item_is_item_0_and_the_others_carry_their_count() -> None:
    assert path_of(("each:t1",), MAPS) == ["each[0]"]
    assert path_of(("each:t1", "2"), MAPS) == ["each[2]"]
    # A subgraph inside the first item: its segment is no count.
    assert path_of(("each:t1", "file:t2"), MAPS) == ["each[0]", "file"]
    assert path_of(("each:t1", "3", "file:t2"), MAPS) == ["each[3]", "file"]


def test_maps_are_known_by_where_they_are_not_by_their_id_alone() -> None:
    assert path_of(("office:t1", "desk:t2", "rows:t3", "1"), MAPS) == ["office", "desk", "rows[1]"]
    # A subgraph node named like a map elsewhere keeps its name.
    assert path_of(("desk:t1", "rows:t2"), MAPS) == ["desk", "rows"]
    assert path_of((), MAPS) == []
