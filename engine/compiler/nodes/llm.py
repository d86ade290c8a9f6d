"""``llm``: one model call; with ``schema`` the reply is JSON validated against it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import jsonschema
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from plait.engine.compiler.context import CompileContext, Scope
from plait.engine.compiler.model_calls import invoke_model, structured_reply
from plait.engine.compiler.model_routes import ModelRouter, StepUsage
from plait.engine.compiler.nodes.base import Compute
from plait.engine.errors import NodeError
from plait.engine.spec.models import LlmNode, ModelRoute


def llm_compute(
    ctx: CompileContext,
    node_id: str,
    *,
    model: str,
    system: str | None,
    prompt: str | None,
    schema: dict[str, Any] | None,
    messages_field: str | None = None,
    routes: Sequence[ModelRoute] = (),
) -> Compute:
    """One call of ``model``; the result is the reply text, or the validated dict.

    With ``messages_field`` the model also sees that conversation, and the
    prompt (if any) and the reply are added to it (as an ``agent`` node does),
    so a chat front end shows the exchange. ``routes`` pick another model tier
    for the call when their condition holds (engine/compiler/model_routes.py).
    """
    validator = _validator(schema) if schema is not None else None
    router = ModelRouter(node_id, model, routes) if routes else None
    extend = messages_field is not None and ctx.loaded.spec.spec.state[messages_field].reducer in (
        "add_messages",
        "extend",
    )

    async def compute(scope: Scope) -> Any:
        head: list[BaseMessage] = []
        if system is not None:
            head.append(SystemMessage(scope.render(system)))
        history = list(scope.raw.get(messages_field) or []) if messages_field else []
        # Without a prompt (a chat), the conversation's last message is what is asked.
        asked = [HumanMessage(scope.render(prompt))] if prompt is not None else []
        messages = [*head, *history, *asked]
        called = router.pick(scope, StepUsage(), None) if router is not None else model
        if validator is None:
            reply = await invoke_model(ctx, called, messages)
            result: Any = reply.text
        else:
            result = await structured_reply(
                ctx, called, messages, lambda text: _structured(node_id, text, validator)
            )
            # The conversation keeps the data the reply was validated as.
            reply = AIMessage(json.dumps(result, ensure_ascii=False))
        if messages_field is not None:
            new = [*asked, reply]
            scope.updates[messages_field] = new if extend else [*history, *new]
        return result

    return compute


def build(node_id: str, node: LlmNode, ctx: CompileContext) -> Compute:
    """The ``llm`` node's work."""
    return llm_compute(
        ctx,
        node_id,
        model=node.model,
        system=node.system,
        prompt=node.prompt,
        schema=node.schema_,
        messages_field=node.messages,
        routes=node.routes,
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
