"""A replay's cassette inside compiled nodes: a map item that leaves the recording ends the
run (it is not one lost item), an agent does not hand the divergence to its model."""

from __future__ import annotations

import pytest

from plait.engine.tools.cassette import Cassette, Diverged, RecordedModelCall, playing
from tests.unit.compiler.helpers import Runner, chain, make_spec, scripted


def _map_spec() -> object:
    return make_spec(
        {
            "each": {
                "kind": "map",
                "items": "state.topics",
                "do": {"kind": "llm", "model": "m", "prompt": "{{ item }}"},
                "min_success": 1,
                "errors": "errors",
                "output": "answers",
            }
        },
        chain("each"),
        {"topics": {}, "answers": {}, "errors": {}},
        models={"m": scripted({"content": "live"})},
    )


async def test_a_map_item_that_leaves_the_recording_ends_the_run() -> None:
    recorded = [RecordedModelCall("each", "m", {"content": "recorded"})]  # one of two items
    runner = Runner(_map_spec())  # type: ignore[arg-type]

    with playing(Cassette(recorded, [])), pytest.raises(Diverged, match="diverged from the"):
        await runner.start({"topics": ["a", "b"]})


async def test_with_every_reply_recorded_the_map_takes_them_and_calls_nothing() -> None:
    recorded = [RecordedModelCall("each", "m", {"content": f"recorded {i}"}) for i in range(2)]
    runner = Runner(_map_spec())  # type: ignore[arg-type]

    with playing(Cassette(recorded, [])) as cassette:
        out = await runner.start({"topics": ["a", "b"]})

    assert sorted(out["answers"]) == ["recorded 0", "recorded 1"]
    assert cassette.unused() == (0, 0, 0)
