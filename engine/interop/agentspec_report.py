"""What a Plait spec loses in Open Agent Spec, found by difference, and how to restore it.

The exporter imports its own Agent Spec document back (without Plait's metadata)
and compares the result with the spec: every JSON pointer where they differ is a
feature Agent Spec does not express. Each one is listed in the report with a
reason, and its original value is kept as a patch in the document's
``metadata.plait.restore``, which :func:`apply_patches` replays on import.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from plait.engine.spec import escape_pointer

#: The key of Plait's entry in an Agent Spec component's ``metadata``.
PLAIT_METADATA = "plait"


@dataclass(frozen=True)
class Unmapped:
    """One Plait feature with no Agent Spec equivalent: where it is and why."""

    pointer: str
    reason: str
    spec: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON form, for ``--format json`` and tests."""
        return {"spec": self.spec, "pointer": self.pointer, "reason": self.reason}


@dataclass(frozen=True)
class Difference:
    """A pointer where the spec and its Agent Spec round trip differ."""

    pointer: str
    in_spec: bool
    value: Any


def differences(spec: Any, imported: Any, at: str = "") -> list[Difference]:
    """Where ``imported`` differs from ``spec``: dicts by key, equal-length lists by index."""
    if isinstance(spec, dict) and isinstance(imported, dict):
        if "kind" in spec and spec.get("kind") != imported.get("kind"):
            return [Difference(at, True, spec)]  # another kind of thing: one difference, not many
        found: list[Difference] = []
        for key in [*spec, *(k for k in imported if k not in spec)]:
            where = f"{at}/{escape_pointer(str(key))}"
            if key not in imported:
                found.append(Difference(where, True, spec[key]))
            elif key not in spec:
                found.append(Difference(where, False, imported[key]))
            else:
                found += differences(spec[key], imported[key], where)
        return found
    if isinstance(spec, list) and isinstance(imported, list) and len(spec) == len(imported):
        return [
            found
            for index, (left, right) in enumerate(zip(spec, imported, strict=True))
            for found in differences(left, right, f"{at}/{index}")
        ]
    return [] if spec == imported else [Difference(at, True, spec)]


def patches_for(found: list[Difference]) -> list[dict[str, Any]]:
    """Patches that turn the imported spec back into the original one."""
    return [
        {"path": item.pointer, "value": item.value} if item.in_spec else {"path": item.pointer}
        for item in found
    ]


def apply_patches(data: dict[str, Any], patches: list[dict[str, Any]]) -> dict[str, Any]:
    """``data`` with each patch applied: ``{path, value}`` sets, ``{path}`` alone removes."""
    result = copy.deepcopy(data)
    for patch in patches:
        tokens = [_unescape(token) for token in str(patch["path"]).split("/")[1:]]
        parent: Any = result
        for token in tokens[:-1]:
            if isinstance(parent, list):
                parent = parent[int(token)]
            else:
                parent = parent.setdefault(token, {})
        last = tokens[-1]
        if isinstance(parent, list):
            if "value" in patch:
                parent[int(last)] = copy.deepcopy(patch["value"])
        elif "value" in patch:
            parent[last] = copy.deepcopy(patch["value"])
        else:
            parent.pop(last, None)
    return result


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


_GOVERNANCE = "run governance (Plait's own): Agent Spec has no per-run limits"
_REASONS: list[tuple[str, str]] = [
    (r"/metadata/version", "Agent Spec components have no version; kept in metadata"),
    (r"/spec/state/[^/]+/reducer", "Agent Spec data flow keeps the last value: it has no reducers"),
    (r"/spec/state/[^/]+/type", "a `messages` or untyped field has no JSON Schema type of its own"),
    (r"/spec/state/[^/]+/default", "a default of a field no flow input or output carries"),
    (r"/spec/state/[^/]+(/.*)?", "a state field no flow input, node output or template carries"),
    (
        r"/spec/(input|output)",
        "written out: an Agent Spec flow lists its inputs and outputs "
        "(the start and end nodes'), where Plait's default is every state field",
    ),
    (r"/spec/models/[^/]+", "a model no node calls directly (model routes, budget fallbacks)"),
    (
        r"/spec/models/[^/]+/(script|fixture)",
        "scripted replies: Agent Spec LLM configs are endpoints",
    ),
    (r"/spec/models/[^/]+/(price|retry|breaker|params|api_key_env)", "model governance"),
    (r"/spec/models/.*", "this provider's settings have no Agent Spec LLM config field"),
    (r"/spec/tools/[^/]+/function", "an Agent Spec ServerTool names no implementation"),
    (r"/spec/tools/[^/]+/tool", "an MCPTool is named by the server's tool name only"),
    (r"/spec/tools/.*", "tool governance (timeouts, retries, limits, risk, sagas, secrets)"),
    (r"/spec/mcp_servers/.*", "MCP session settings beyond command, args, env, cwd and url"),
    (r"/spec/agents/.*", "agent settings (iterations, tool results, model routes, context)"),
    (r"/spec/nodes/[^/]+/system", "an Agent Spec LlmNode has no system prompt"),
    (
        r"/spec/nodes/[^/]+/prompt",
        "a Jinja template beyond `{{ state.<field> }}` placeholders, "
        "or an agent's user message (Agent Spec agents read the conversation)",
    ),
    (r"/spec/nodes/[^/]+/(retry|timeout|max_visits|compensate)", "node governance"),
    (
        r"/spec/nodes/[^/]+/(writes|output)(/.*)?",
        "a state update in CEL: only `result` and `result.<field>` are node outputs",
    ),
    (
        r"/spec/nodes/[^/]+/(args|input|items|label|labels)(/.*)?",
        "a CEL argument: only `state.<field>`, `item` and literals map to inputs",
    ),
    (
        r"/spec/nodes/[^/]+/(messages|schema)",
        "a conversation field or a reply schema that the node's outputs cannot carry",
    ),
    (r"/spec/nodes/[^/]+/do(/.*)?", "map item work other than one tool or python call"),
    (r"/spec/nodes/[^/]+(/.*)?", "a node setting Agent Spec does not have"),
    (
        r"/spec/edges(/.*)?",
        "a condition in CEL: Agent Spec branches only on a value (BranchingNode)",
    ),
    (r"/spec/examples", "examples and their tests are Plait's own"),
    (r"/spec/(budgets|limits|max_steps|timeout|max_attempts)", _GOVERNANCE),
    (r"/spec/audit", "the audit of model calls is Plait's own"),
    (r"/spec/a2a", "A2A exposure is Plait's own (Agent Spec describes A2A agents it calls)"),
    (r"/spec/secrets", "tenant secrets are Plait's own"),
]
_NO_NODE = {
    "approval": "Agent Spec has no approval node (approve, reject, edit)",
    "parallel": "a Plait parallel node runs nodes of the same graph: no ParallelFlowNode form",
    "a2a": "Agent Spec's A2AAgent has no message template or state mapping",
    "map": "map item work other than one tool or python call",
    "router": "a router label other than `state.<field>`",
}


def reason_for(item: Difference) -> str:
    """Why Agent Spec cannot carry what ``item`` points at."""
    if re.fullmatch(r"/spec/nodes/[^/]+", item.pointer) and isinstance(item.value, dict):
        kind = str(item.value.get("kind"))
        return f"{_NO_NODE.get(kind, 'no Agent Spec node kind')}; exported as an opaque FlowNode"
    if not item.in_spec and item.pointer.startswith("/spec/state/"):
        return (
            "an input Agent Spec cannot feed from the state (a CEL argument, or a Jinja "
            "variable it reads as a placeholder) reads a field of its own name"
        )
    for pattern, reason in _REASONS:
        if re.fullmatch(pattern, item.pointer):
            return reason
    return "no Agent Spec equivalent"
