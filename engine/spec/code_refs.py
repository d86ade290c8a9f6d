"""Where a spec names code or files of the machine that runs it.

``module:function`` refs (python nodes, map items, python tools,
tools' ``reconcile``, compensations, python graders) are imported and called by
workers; a stdio MCP server's ``command`` is started by them; a scripted
model's ``fixture`` is read from their disk. Lint checks the refs' modules
exist (``lint/imports.py``); the server refuses them in specs uploaded by
tenants it does not trust with code (``server/auth/code_policy.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from plait.engine.spec.document import pointer
from plait.engine.spec.models import GraphBody, MapNode, PythonNode

CodeKind = Literal["function", "command", "fixture"]


@dataclass(frozen=True)
class CodeRef:
    """One place naming code or a file: its JSON pointer, what it is, and its value."""

    pointer: str
    kind: CodeKind
    value: str


def code_refs(body: GraphBody) -> Iterator[CodeRef]:
    """Every function ref, stdio command and fixture file of a spec's body."""
    for name, tool in body.tools.items():
        if tool.function is not None:  # python tools (mcp tools name a server instead)
            yield CodeRef(pointer("spec", "tools", name, "function"), "function", tool.function)
        if tool.compensate is not None and tool.compensate.function is not None:
            where = pointer("spec", "tools", name, "compensate", "function")
            yield CodeRef(where, "function", tool.compensate.function)
        if tool.reconcile is not None:  # python or mcp: reconcile is always a python function
            yield CodeRef(pointer("spec", "tools", name, "reconcile"), "function", tool.reconcile)
    for node_id, node in body.nodes.items():
        if isinstance(node, PythonNode):
            yield CodeRef(pointer("spec", "nodes", node_id, "function"), "function", node.function)
        elif isinstance(node, MapNode) and node.do.function:
            where = pointer("spec", "nodes", node_id, "do", "function")
            yield CodeRef(where, "function", node.do.function)
        if node.compensate is not None and node.compensate.function is not None:
            where = pointer("spec", "nodes", node_id, "compensate", "function")
            yield CodeRef(where, "function", node.compensate.function)
    for name, server in body.mcp_servers.items():
        if server.transport == "stdio" and server.command is not None:
            where = pointer("spec", "mcp_servers", name, "command")
            yield CodeRef(where, "command", server.command)
    for name, model in body.models.items():
        if model.fixture is not None:
            yield CodeRef(pointer("spec", "models", name, "fixture"), "fixture", model.fixture)
    if body.evaluation is not None:
        for name, grader in body.evaluation.graders.items():
            if grader.python is not None:
                where = pointer("spec", "evaluation", "graders", name, "python")
                yield CodeRef(where, "function", grader.python)
