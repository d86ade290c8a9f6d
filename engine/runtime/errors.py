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
