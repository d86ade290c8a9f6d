"""A node's path among subgraphs: what a recording keeps an ``a2a`` node's turns under."""

from __future__ import annotations

import asyncio

import pytest

from plait.engine.observability.node_path import (
    item_path,
    map_item,
    map_item_work,
    node_path,
    within,
)


def test_a_top_level_node_is_its_id() -> None:
    assert node_path("file_claim") == "file_claim"


def test_each_enclosing_subgraph_node_and_map_item_prefixes_the_path() -> None:
    with within("office"):
        assert node_path("file_claim") == "office/file_claim"
        with within("desk"):
            assert node_path("file_claim") == "office/desk/file_claim"
        with within("claims", 0):
            assert node_path("file_claim") == "office/claims[0]/file_claim"
        assert node_path("file_claim") == "office/file_claim"
    assert node_path("file_claim") == "file_claim"


@pytest.mark.parametrize(
    ("enclosing", "path"),
    [
        ([("a", None), ("b", None)], "a/b/x"),
        ([("a", 1)], "a[1]/x"),
        ([("a", 0), ("b", 1)], "a[0]/b[1]/x"),
        ([("a", 1), ("b", 0)], "a[1]/b[0]/x"),
        ([("a_b", None)], "a_b/x"),
    ],
)
def test_different_places_have_different_paths(
    enclosing: list[tuple[str, int | None]], path: str
) -> None:
    """Node ids hold letters, digits and ``_`` only: ``/`` and ``[i]`` cannot be confused."""

    def at(places: list[tuple[str, int | None]]) -> str:
        if not places:
            return node_path("x")
        (node, index), *rest = places
        with within(node, index):
            return at(rest)

    assert at(enclosing) == path


async def test_items_running_at_once_each_keep_their_own_path() -> None:
    seen: dict[int, str] = {}

    async def item(index: int) -> None:
        with within("claims", index):
            await asyncio.sleep(0.01 * (3 - index))  # finish in the other order
            seen[index] = node_path("file_claim")

    await asyncio.gather(*(item(i) for i in range(3)))

    assert seen == {i: f"claims[{i}]/file_claim" for i in range(3)}
    assert node_path("file_claim") == "file_claim"


def test_the_innermost_map_item_is_known_inside_its_subgraph() -> None:
    assert map_item() is None
    with within("office"):
        assert map_item() is None
        with within("claims", 2), within("desk"):
            assert map_item() == ("claims", 2)
            with within("inner", 0):
                assert map_item() == ("inner", 0)
    assert map_item() is None


def test_a_map_items_own_work_is_at_the_maps_path_with_the_items_index() -> None:
    with map_item_work("each", 1):
        assert node_path("each") == "each[1]"
        assert node_path("other") == "other"  # only the map's own calls are the item's
        assert item_path("each", 1) == "each[1]"  # not `each[1][1]`
    assert node_path("each") == "each"
    assert item_path("each", 1) == "each[1]"


def test_a_map_items_own_work_inside_subgraphs_and_map_items_is_under_them() -> None:
    with within("office"), within("outer", 2), map_item_work("each", 0):
        assert node_path("each") == "office/outer[2]/each[0]"
        assert item_path("each", 0) == "office/outer[2]/each[0]"


def test_a_child_run_inside_an_items_work_has_its_own_paths() -> None:
    """A subgraph item's child is a level down: its node of the map's id is its own."""
    with map_item_work("each", 1), within("each", 1):
        assert node_path("classify") == "each[1]/classify"
        assert node_path("each") == "each[1]/each"


async def test_items_whose_work_runs_at_once_each_keep_their_own_path() -> None:
    seen: dict[int, str] = {}
    # Every item enters its work before any reads its path: all three are in play at once.
    all_in = asyncio.Barrier(3)

    async def item(index: int) -> None:
        with map_item_work("claims", index):
            await all_in.wait()
            seen[index] = node_path("claims")

    await asyncio.gather(*(item(i) for i in range(3)))

    assert seen == {i: f"claims[{i}]" for i in range(3)}
    assert node_path("claims") == "claims"
