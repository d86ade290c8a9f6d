"""Errors raised while a compiled graph runs, each naming the node it came from."""

from __future__ import annotations


class NodeError(Exception):
    """A node failed. ``transient`` errors may succeed when retried; the others never will.

    The message always starts with the node id so a run's error reads on its own,
    e.g. ``node 'review': visited more than max_visits=3 times``.
    """

    def __init__(self, node: str, message: str, *, transient: bool = False) -> None:
        super().__init__(f"node {node!r}: {message}")
        self.node = node
        self.message = message
        self.transient = transient


class CompileError(Exception):
    """A spec that validated but cannot be turned into a graph (e.g. a missing ``ref``)."""


class ToolReportedError(Exception):
    """A tool answered with an error result (MCP ``is_error``) instead of raising.

    ``status_code`` (an HTTP-like status the tool put in its structured result as
    ``status``) and ``retry_after`` (seconds) are where the retry rules
    (``engine/governance/retries.py``) look: 429 is a rate limit, 5xx a server
    error, 4xx a validation error; an error result without a status is not
    retried, since nothing says another attempt could succeed.
    """

    def __init__(
        self,
        tool: str,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        content: object = None,
    ) -> None:
        super().__init__(f"tool {tool!r} reported an error: {message}")
        self.tool = tool
        self.status_code = status_code
        self.retry_after = retry_after
        self.content = content
