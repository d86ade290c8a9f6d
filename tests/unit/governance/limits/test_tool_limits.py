"""Tools' ``limits`` in the spec: what the schema accepts, the errors it explains, the keys,
how a Retry-After is read, and the CLI's line for a waiting call."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest

from plait.engine.errors import ToolReportedError
from plait.engine.governance.retries import RateLimited, TransientError, classify
from plait.engine.governance.tool_limits import (
    TOOL_LIMITS_KEY,
    ToolLimits,
    ToolLimitTimeout,
    retry_after_of,
)
from plait.engine.run.events import Custom
from plait.engine.spec.models import McpServerDef, ToolDef, rate_per_second
from plait.engine.store.tool_limits import Turn
from plait.engine.tools.python_tools import load_python_tool
from plait.server.cli.console import RichView
from plait.server.cli.output import make_console
from tests.unit.spec.helpers import issues_of, line_of, one

FIXTURES = Path(__file__).parent / "fixtures_py"

SPEC = """apiVersion: plait/v1
kind: Graph
metadata: {name: limited, version: "1.0.0"}
spec:
  state:
    out: {type: string}
  tools:
    search:
      function: "plait_limits_fns:echo"
      limits: {concurrency: 4, rate: 10/s, wait: 30s}
  nodes:
    a: {kind: tool, tool: search, args: {key: "'x'"}, output: out}
  edges:
    - {from: START, to: a}
    - {from: a, to: END}
"""


@pytest.mark.parametrize(
    ("rate", "per_second"),
    [("10/s", 10.0), ("600/min", 10.0), ("90 / m", 1.5), ("36/hour", 0.01), ("0.5/sec", 0.5)],
)
def test_rates_read_as_calls_per_second(rate: str, per_second: float) -> None:
    assert rate_per_second(rate) == pytest.approx(per_second)


def test_the_example_with_limits_is_clean() -> None:
    assert [issue for issue in issues_of(SPEC) if issue.severity == "error"] == []


def test_a_rate_that_cannot_be_read_is_located_and_says_how_to_write_it() -> None:
    text = SPEC.replace("rate: 10/s", "rate: 10 per second")

    issue = one(issues_of(text), "schema-value")

    assert (issue.line, issue.pointer) == (
        line_of(text, "limits:"),
        "/spec/tools/search/limits/rate",
    )
    assert "`rate` must be a rate" in issue.message and "'10 per second'" in issue.message
    assert issue.fix == "write e.g. `rate: 10/s`, `rate: 600/min` or `rate: 100/h`"


def test_limits_that_limit_nothing_are_an_error() -> None:
    text = SPEC.replace("{concurrency: 4, rate: 10/s, wait: 30s}", "{wait: 30s}")

    issue = one(issues_of(text), "schema-value")

    assert issue.pointer == "/spec/tools/search/limits"
    assert "needs `concurrency`, `rate` or both" in issue.message


def test_a_python_tool_is_limited_by_its_function_an_mcp_tool_by_itself_and_its_server() -> None:
    definition = ToolDef.model_validate(
        {"function": "plait_limits_fns:echo", "limits": {"concurrency": 2, "wait": "5s"}}
    )
    tool = load_python_tool("search", definition, FIXTURES)

    limits = (tool.metadata or {})[TOOL_LIMITS_KEY]

    assert isinstance(limits, ToolLimits)
    assert [(lim.key, lim.concurrency, lim.interval) for lim in limits.limits] == [
        ("tool:plait_limits_fns:echo", 2, None)
    ]
    assert (limits.wait, limits.declared_at) == (
        5.0,
        {"tool:plait_limits_fns:echo": "spec.tools.search"},
    )
    server = McpServerDef.model_validate(
        {"transport": "http", "url": "http://127.0.0.1:9/mcp", "limits": {"rate": "2/s"}}
    )
    assert server.limits is not None and server.limits.wait == 30.0


def test_a_retry_after_is_read_from_the_error_or_its_response() -> None:
    later = datetime.now(UTC) + timedelta(seconds=30)
    request = httpx.Request("GET", "http://127.0.0.1/")

    def http_error(status: int, header: str) -> httpx.HTTPStatusError:
        response = httpx.Response(status, headers={"Retry-After": header}, request=request)
        return httpx.HTTPStatusError("busy", request=request, response=response)

    assert retry_after_of(RateLimited(retry_after=2.5)) == 2.5
    assert retry_after_of(ToolReportedError("t", "slow down", status_code=429, retry_after=4)) == 4
    assert retry_after_of(http_error(429, "7")) == 7.0
    dated = retry_after_of(http_error(503, format_datetime(later, usegmt=True)))
    assert dated is not None and 28 < dated <= 30
    # Only "too many requests" and "unavailable" pause a tool; nothing without a time does.
    assert retry_after_of(http_error(500, "7")) is None
    assert retry_after_of(RateLimited()) is None
    assert retry_after_of(TransientError("down")) is None


def test_a_call_that_ran_out_of_wait_is_not_retried_nor_held_against_the_tool() -> None:
    limits = ToolLimits((), 1.0, {})
    error = ToolLimitTimeout("n", "t", Turn(False, None, "concurrency", "tool:f:g"), limits, 1.0)

    assert classify(error) == "limit_wait"
    assert error.transient  # a node's own `retry` may run the step again


def test_waiting_calls_are_one_line_each_in_the_cli() -> None:
    out = io.StringIO()
    console = make_console(out)
    console.width = 120
    view = RichView(console, stream_tokens=False)
    events = [
        {"reason": "concurrency", "limit": {"concurrency": 4}},
        {"reason": "rate", "limit": {"rate": "10/s", "burst": 1}, "retry_in": 0.1},
        {"reason": "paused", "limit": {}, "retry_in": 2.0},
    ]
    for data in events:
        event = {"plait": "tool_waiting", "node": "a", "tool": "search", "key": "k", **data}
        view.show(Custom(node="a", data=event))

    assert out.getvalue().splitlines() == [
        "⧗ a  waiting for a slot of tool search (4 at once, all runs)",
        "⧗ a  waiting for a turn of tool search (rate 10/s, all runs)",
        "⧗ a  waiting: tool search is paused for 2.0s more",
    ]
