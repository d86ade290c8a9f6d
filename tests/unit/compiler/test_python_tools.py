"""Python tools: description, argument schema, sync/async, timeout."""

from __future__ import annotations

import pytest

from plait.engine.spec.models import ToolDef
from plait.engine.tools.python_tools import import_function, load_python_tool
from tests.unit.compiler.helpers import FIXTURES

FNS = "plait_compiler_fns"


async def test_tool_from_signature_and_docstring() -> None:
    tool = load_python_tool("lookup", ToolDef(function=f"{FNS}:lookup"), FIXTURES)
    assert tool.name == "lookup"
    assert tool.description == "Look a word up in the tiny test dictionary."
    assert tool.args == {"query": {"title": "Query", "type": "string"}}
    assert await tool.ainvoke({"query": "plait"}) == "a braid"
    assert tool.invoke({"query": "x"}) == "unknown"


async def test_tool_from_spec_description_and_parameters() -> None:
    parameters = {
        "type": "object",
        "properties": {"value": {"type": "integer", "description": "anything"}},
        "required": ["value"],
    }
    definition = ToolDef(
        function=f"{FNS}:async_echo", description="Echo it back.", parameters=parameters
    )
    tool = load_python_tool("echo", definition, FIXTURES)
    assert tool.description == "Echo it back."
    assert tool.args == parameters["properties"]
    assert await tool.ainvoke({"value": 3}) == 3


async def test_tool_timeout_applies_to_sync_and_async_functions() -> None:
    slow_sync = load_python_tool(
        "slow", ToolDef(function=f"{FNS}:slow_tool", timeout="50ms"), FIXTURES
    )
    with pytest.raises(TimeoutError, match=r"tool 'slow' timed out after 0.05s"):
        await slow_sync.ainvoke({"seconds": 1.0})
    slow_async = load_python_tool(
        "nap", ToolDef(function=f"{FNS}:sleep_for", timeout="50ms"), FIXTURES
    )
    with pytest.raises(TimeoutError, match=r"tool 'nap' timed out"):
        await slow_async.ainvoke({"seconds": 30})
    assert await slow_async.ainvoke({"seconds": 0}) == "woke"


def test_import_function_names_what_is_missing() -> None:
    with pytest.raises(ImportError, match=r"has no function 'nope'"):
        import_function(f"{FNS}:nope", FIXTURES)
    with pytest.raises(ModuleNotFoundError):
        import_function("no_such_module_here:f", FIXTURES)
