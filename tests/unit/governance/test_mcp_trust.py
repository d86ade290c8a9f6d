"""Which MCP servers an entry of a trust list names (engine/governance/mcp_trust.py)."""

from __future__ import annotations

from typing import Any

import pytest

from plait.engine.governance.mcp_trust import (
    TRUST_ALL,
    TrustEntryInvalid,
    TrustList,
    entry_identity,
    trust_of,
)
from plait.engine.run.context import RunContext
from plait.engine.spec.loader import parse_spec
from plait.engine.spec.models import McpServerDef


def http(url: str) -> McpServerDef:
    return McpServerDef.model_validate({"transport": "http", "url": url})


def stdio(command: str, *args: Any) -> McpServerDef:
    return McpServerDef.model_validate({"transport": "stdio", "command": command, "args": args})


@pytest.mark.parametrize(
    "url",
    [
        "https://mcp.example.com/mcp",
        "HTTPS://MCP.Example.com:443/mcp/",
        "https://mcp.example.com/mcp?session=1",  # a query is not part of the server's name
    ],
)
def test_an_url_entry_names_the_server_by_origin_and_path(url: str) -> None:
    assert TrustList.of(["https://mcp.example.com/mcp"]).trusts(http(url))


@pytest.mark.parametrize(
    "url",
    [
        "http://mcp.example.com/mcp",  # another scheme
        "https://mcp.example.com:8443/mcp",  # another port
        "https://mcp.example.com.evil.example/mcp",  # another host
        "https://mcp.example.com/mcp/other",  # another path
        "https://mcp.example.com/",
    ],
)
def test_an_url_entry_names_no_other_server(url: str) -> None:
    assert not TrustList.of(["https://mcp.example.com/mcp"]).trusts(http(url))


def test_a_command_line_names_a_stdio_server_word_by_word() -> None:
    listed = TrustList.of(["mcp-server-time --local-timezone UTC", "'my server' --root '/srv/a b'"])
    assert listed.trusts(stdio("mcp-server-time", "--local-timezone", "UTC"))
    assert listed.trusts(stdio("my server", "--root", "/srv/a b"))
    assert not listed.trusts(stdio("mcp-server-time", "--local-timezone", "UTC", "--extra"))
    assert not listed.trusts(stdio("mcp-server-time"))
    # An http entry never names a stdio server, whatever its words.
    assert not TrustList.of(["https://x.example/mcp"]).trusts(stdio("https://x.example/mcp"))


def test_a_per_run_argument_is_named_by_its_expression() -> None:
    server = stdio("mcp-server-git", "--repository", {"expr": "input.repository"})
    assert TrustList.of(["mcp-server-git --repository {input.repository}"]).trusts(server)
    assert not TrustList.of(["mcp-server-git --repository /srv/repo"]).trusts(server)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("ftp://files.example/mcp", "only http:// and https://"),
        ("https://mcp.example.com/mcp?x=1", "leave out user info, query and fragment"),
        ("https://user:pw@mcp.example.com/mcp", "leave out user info"),
        ("https:///mcp", "has no host"),
        ("https://mcp.example.com:99999/mcp", "port"),
        ("python 'unbalanced", "not a command line"),
        ("x" * 3000, "over 2048 characters"),
    ],
)
def test_an_entry_that_names_no_server_is_refused(entry: str, says: str) -> None:
    with pytest.raises(TrustEntryInvalid, match=says):
        entry_identity(entry)


def test_an_empty_list_trusts_nothing_and_no_list_everything() -> None:
    servers = {"a": http("https://a.example/mcp"), "b": stdio("b-server")}
    assert TrustList().untrusted(servers) == {"a", "b"}
    assert TrustList.of(["b-server"]).untrusted(servers) == {"a"}
    assert TRUST_ALL.untrusted(servers) == frozenset()


class Listed:
    async def trust_list(self) -> TrustList:
        return TrustList.of(["b-server"])


SPEC = """
apiVersion: plait/v1
kind: Graph
metadata: {name: t, version: "1.0.0"}
spec:
  state: {x: {}}
  nodes: {n: {kind: python, function: "os:getcwd", output: x}}
  edges: [{from: START, to: n}, {from: n, to: END}]
"""


async def test_a_client_config_cannot_choose_the_runs_trust() -> None:
    loaded = parse_spec(SPEC, "t.yaml")
    spoofed = {"configurable": {"plait_mcp_trust": "everything"}}
    without = RunContext(loaded, "t", "r", requested=spoofed).config()
    assert "plait_mcp_trust" not in without["configurable"]
    assert await trust_of(without) is TRUST_ALL  # no source: a local run (`plait run`)
    with_list = RunContext(loaded, "t", "r", requested=spoofed, mcp_trust=Listed()).config()
    assert await trust_of(with_list) == TrustList.of(["b-server"])
