"""Where a spec names a secret: every name a run resolves through its secret source.

``spec.secrets`` lists them; python tools (``tools.<t>.secrets``), MCP servers
(``headers`` values, stdio ``secrets``) and ``a2a`` nodes (``headers`` values)
name the ones they send; a model's ``api_key_env`` names the one holding its
key. Lint refuses Plait's own settings among them (``secret-reserved``); the
server checks them against the uploading tenant's grants
(``server/auth/tenant_secrets.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from plait.engine.spec.document import pointer
from plait.engine.spec.models import A2aNode, GraphBody

#: Names with this prefix are Plait's own settings: never a secret.
RESERVED_PREFIX = "PLAIT_"


def is_reserved(name: str) -> bool:
    """Whether ``name`` is one of Plait's own settings (``PLAIT_*``), never a secret."""
    return name.upper().startswith(RESERVED_PREFIX)


@dataclass(frozen=True)
class SecretRef:
    """One place naming a secret: its JSON pointer and the name."""

    pointer: str
    name: str


def secret_refs(body: GraphBody) -> Iterator[SecretRef]:
    """Every place of a spec's body naming a secret, ``spec.secrets`` first."""
    for index, name in enumerate(body.secrets):
        yield SecretRef(pointer("spec", "secrets", index), name)
    for tool_name, tool in body.tools.items():
        for index, name in enumerate(tool.secrets):
            yield SecretRef(pointer("spec", "tools", tool_name, "secrets", index), name)
    for server_name, server in body.mcp_servers.items():
        for header, name in server.headers.items():
            yield SecretRef(pointer("spec", "mcp_servers", server_name, "headers", header), name)
        for index, name in enumerate(server.secrets):
            yield SecretRef(pointer("spec", "mcp_servers", server_name, "secrets", index), name)
    for node_id, node in body.nodes.items():
        if isinstance(node, A2aNode):
            for header, name in node.headers.items():
                yield SecretRef(pointer("spec", "nodes", node_id, "headers", header), name)
    for model_name, model in body.models.items():
        if model.api_key_env is not None:
            where = pointer("spec", "models", model_name, "api_key_env")
            yield SecretRef(where, model.api_key_env)
