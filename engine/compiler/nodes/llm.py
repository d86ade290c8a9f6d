"""``llm``: one model call; with ``schema`` the reply is JSON validated against it."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from engine.compiler.context import CompileContext, Scope
from engine.compiler.nodes.base import Compute
from engine.runtime.errors import NodeError
from engine.runtime.model_calls import invoke_model, structured_reply
from engine.spec.models import LlmNode


def llm_compute(
    ctx: CompileContext,
    node_id: str,
    *,
    model: str,
    system: str | None,
    prompt: str,
    schema: dict[str, Any] | None,
) -> Compute:
    """One call of ``model``; the result is the reply text, or the validated dict."""
    validator = _validator(schema) if schema is not None else None

    async def compute(scope: Scope) -> Any:
        messages: list[BaseMessage] = []
        if system is not None:
            messages.append(SystemMessage(scope.render(system)))
        messages.append(HumanMessage(scope.render(prompt)))
        if validator is None:
            return (await invoke_model(ctx, model, messages)).text
        return await structured_reply(
            ctx, model, messages, lambda text: _structured(node_id, text, validator)
        )

    return compute


def build(node_id: str, node: LlmNode, ctx: CompileContext) -> Compute:
    """The ``llm`` node's work."""
    return llm_compute(
        ctx, node_id, model=node.model, system=node.system, prompt=node.prompt, schema=node.schema_
    )


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _structured(node_id: str, text: str, validator: jsonschema.protocols.Validator) -> Any:
    body = text.strip()
    if body.startswith("```"):
        # Models often fence JSON in markdown; the fence is not part of the data.
        body = body.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise NodeError(node_id, f"the model's reply is not JSON ({exc}): {text[:200]!r}") from None
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise NodeError(
            node_id, f"the model's reply does not match the schema at {where}: {error.message}"
        )
    return data
