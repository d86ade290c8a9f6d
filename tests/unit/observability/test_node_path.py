"""A node's path among subgraphs: what a recording keeps an ``a2a`` node's turns under."""

from __future__ import annotations

import asyncio

import pytest

from plait.engine.observability.node_path import map_item, node_path, within


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
