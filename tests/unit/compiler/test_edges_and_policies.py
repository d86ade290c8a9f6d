"""Edges (static, switch, route), max_visits, retry and timeout."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from langgraph.errors import NodeTimeoutError

from plait.engine.errors import NodeError
from tests.unit.compiler.helpers import chain, make_spec, run

ECHO = "plait_compiler_fns:async_echo"


def _mark(value: str) -> dict[str, Any]:
    return {"kind": "python", "function": ECHO, "args": {"value": f"'{value}'"}, "output": "path"}


def _switch_spec() -> Any:
    return make_spec(
        {
            "start": _mark("start"),
            "big": _mark("big"),
            "odd": _mark("odd"),
            "other": _mark("other"),
        },
        [
            {"from": "START", "to": "start"},
            {
                "from": "start",
                "switch": [
                    {"when": "state.n > 100", "to": "big"},
                    {"when": "state.n % 2 == 1", "to": "odd"},
                ],
                "default": "other",
            },
            {"from": "big", "to": "END"},
            {"from": "odd", "to": "END"},
            {"from": "other", "to": "END"},
        ],
        {"n": {}, "path": {"reducer": "append"}},
    )


@pytest.mark.parametrize(("n", "expected"), [(101, "big"), (103, "big"), (7, "odd"), (8, "other")])
async def test_switch_takes_the_first_true_case_else_default(n: int, expected: str) -> None:
    assert (await run(_switch_spec(), {"n": n}))["path"] == ["start", expected]


def _route_spec(default: str | None) -> Any:
    edge: dict[str, Any] = {
        "from": "classify",
        "route": "result.kind",
        "to": {"bug": "fix", "true": "yes"},
    }
    if default is not None:
        edge["default"] = default
    return make_spec(
        {
            "classify": {"kind": "python", "function": ECHO, "args": {"value": "state.ticket"}},
            "fix": _mark("fix"),
            "yes": _mark("yes"),
            "triage": _mark("triage"),
        },
        [
            {"from": "START", "to": "classify"},
            edge,
            {"from": "fix", "to": "END"},
            {"from": "yes", "to": "END"},
            {"from": "triage", "to": "END"},
        ],
        {"ticket": {}, "path": {"reducer": "append"}},
    )


async def test_route_maps_labels_from_the_result() -> None:
    spec = _route_spec("triage")
    assert (await run(spec, {"ticket": {"kind": "bug"}}))["path"] == ["fix"]
    assert (await run(spec, {"ticket": {"kind": True}}))["path"] == ["yes"]
    assert (await run(spec, {"ticket": {"kind": "idea"}}))["path"] == ["triage"]


async def test_route_label_without_target_or_default_fails_naming_node_and_label() -> None:
    with pytest.raises(NodeError, match=r"node 'classify': route label 'idea' has no target"):
        await run(_route_spec(None), {"ticket": {"kind": "idea"}})


def _loop(max_visits: int) -> Any:
    return make_spec(
        {
            "work": {
                "kind": "python",
                "function": ECHO,
                "args": {"value": "state.count + 1"},
                "output": "count",
                "max_visits": max_visits,
            }
        },
        [
            {"from": "START", "to": "work"},
            {
                "from": "work",
                "switch": [{"when": "state.count < 3", "to": "work"}],
                "default": "END",
            },
        ],
        {"count": {"default": 0}},
    )


async def test_cycle_within_max_visits_finishes() -> None:
    assert (await run(_loop(3)))["count"] == 3


async def test_exceeding_max_visits_fails_naming_node_and_limit() -> None:
    with pytest.raises(NodeError, match=r"node 'work': visited more than max_visits=2 times"):
        await run(_loop(2))


def _python(function: str, args: dict[str, str], **options: Any) -> Any:
    node = {"kind": "python", "function": function, "args": args, "output": "out", **options}
    return make_spec({"p": node}, chain("p"), {"out": {}})


def _attempts(key: str) -> int:
    # The spec imports the module from its folder, under its own top-level name.
    return int(sys.modules["plait_compiler_fns"].ATTEMPTS[key])


RETRY = {"max_attempts": 3, "initial_interval": "1ms", "jitter": False}


async def test_retry_repeats_transient_errors() -> None:
    spec = _python("plait_compiler_fns:flaky", {"key": "'r1'", "failures": "2"}, retry=RETRY)
    assert (await run(spec))["out"] == "ok after 3"
    spec = _python("plait_compiler_fns:flaky", {"key": "'r2'", "failures": "5"}, retry=RETRY)
    with pytest.raises(NodeError, match=r"node 'p': ConnectionError: attempt 3 failed"):
        await run(spec)
    assert _attempts("r2") == 3


async def test_retry_skips_permanent_errors() -> None:
    spec = _python("plait_compiler_fns:broken", {"key": "'r3'"}, retry=RETRY)
    with pytest.raises(NodeError, match=r"TypeError: broken on purpose"):
        await run(spec)
    assert _attempts("r3") == 1


async def test_timeout_stops_a_slow_node() -> None:
    spec = _python("plait_compiler_fns:sleep_for", {"seconds": "30.0"}, timeout="50ms")
    with pytest.raises(NodeTimeoutError, match=r"'p'"):
        await run(spec)
    spec = _python("plait_compiler_fns:sleep_for", {"seconds": "0.0"}, timeout="5s")
    assert (await run(spec))["out"] == "woke"
