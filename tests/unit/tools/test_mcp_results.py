"""MCP results as values, error results as typed errors the retry rules classify, lost sessions."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    CallToolResult,
    ContentBlock,
    ImageContent,
    TextContent,
)

from plait.engine.errors import ToolReportedError
from plait.engine.governance.retries import classify
from plait.engine.tools.mcp.hub import is_lost_session
from plait.engine.tools.mcp.results import raise_for_error, result_value
from plait.engine.tools.mcp.schema_check import ToolArgumentsInvalid, check_arguments


def test_structured_content_is_the_value() -> None:
    result = CallToolResult(content=[TextContent(text="x")], structured_content={"a": 1})
    assert result_value(result) == {"a": 1}


def test_a_single_text_block_is_parsed_when_it_is_json() -> None:
    assert result_value(CallToolResult(content=[TextContent(text='{"a": [1]}')])) == {"a": [1]}
    assert result_value(CallToolResult(content=[TextContent(text="plain")])) == "plain"


def test_several_blocks_are_kept_as_dicts() -> None:
    blocks: list[ContentBlock] = [
        TextContent(text="a"),
        ImageContent(data="AA==", mime_type="image/png"),
    ]
    value = result_value(CallToolResult(content=blocks))
    assert [b["type"] for b in value] == ["text", "image"]


@pytest.mark.parametrize(
    ("status", "error_class"),
    [(429, "rate_limit"), (503, "server_error"), (404, "validation"), (None, "other")],
)
def test_an_error_result_is_classified_by_its_status(status: int | None, error_class: str) -> None:
    details = {"message": "no"} if status is None else {"status": status, "message": "no"}
    result = CallToolResult(
        content=[TextContent(text="no")], structured_content=details, is_error=True
    )
    with pytest.raises(ToolReportedError) as raised:
        raise_for_error("t", result)
    assert raised.value.status_code == status
    assert classify(raised.value) == error_class


def test_a_successful_result_raises_nothing() -> None:
    raise_for_error("t", CallToolResult(content=[TextContent(text="ok")]))


def test_schema_check_names_every_problem() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
        "required": ["n", "s"],
    }
    check_arguments("t", schema, {"n": 1, "s": "x"})
    with pytest.raises(ToolArgumentsInvalid) as raised:
        check_arguments("t", schema, {"n": "one"})
    message = str(raised.value)
    assert "n: 'one' is not of type 'integer'" in message
    assert "'s' is a required property" in message


@pytest.mark.parametrize(
    ("error", "lost"),
    [
        (MCPError(CONNECTION_CLOSED, "Connection closed"), True),
        (MCPError(INVALID_REQUEST, "Session not found"), True),  # a restarted HTTP server
        (MCPError(INVALID_PARAMS, "ticket T-1 is closed"), False),  # the server's own refusal
        (MCPError(METHOD_NOT_FOUND, "Method not found"), False),
    ],
)
def test_only_a_lost_session_counts_as_one(error: MCPError, lost: bool) -> None:
    assert is_lost_session(error) is lost
