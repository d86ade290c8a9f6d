"""What an incoming A2A message means to Plait: a run's input, or an approval decision.

Pure functions over protobuf messages, so they are tested without a server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import pydantic
from a2a.types.a2a_pb2 import Message
from google.protobuf.json_format import MessageToDict

from plait.engine.spec import Decision, GraphSpec, StateField, validation_problems

#: Words a text follow-up may start with, and the decision each means.
_WORDS: dict[str, Literal["approve", "reject"]] = {
    "approve": "approve",
    "approved": "approve",
    "yes": "approve",
    "ok": "approve",
    "reject": "reject",
    "rejected": "reject",
    "no": "reject",
    "deny": "reject",
}


class NotADecision(ValueError):
    """A follow-up on a task waiting for a decision that carries none."""


def text_of(message: Message) -> str:
    """The message's text parts, joined by newlines."""
    return "\n".join(part.text for part in message.parts if part.HasField("text"))


def data_of(message: Message) -> list[Any]:
    """The message's data parts as JSON values."""
    return [MessageToDict(part.data) for part in message.parts if part.HasField("data")]


def run_input(spec: GraphSpec, message: Message) -> dict[str, Any]:
    """The input of the run a new message starts.

    Objects in data parts give input fields by name (later parts win); the
    text fills ``spec.a2a.text_input``, else the first input field, unless
    a data part already set that field. Only the graph's input fields are kept.
    """
    body = spec.spec
    inputs = body.input_fields
    values: dict[str, Any] = {}
    for item in data_of(message):
        if isinstance(item, Mapping):
            values.update({k: v for k, v in item.items() if k in inputs})
    text = text_of(message)
    exposure = body.a2a
    field = exposure.text_input if exposure is not None and exposure.text_input else None
    if field is None and inputs:
        field = inputs[0]
    if text and field is not None and field not in values:
        values[field] = text
    return _integral(values, body.state)


def _integral(values: dict[str, Any], state: Mapping[str, StateField]) -> dict[str, Any]:
    """Whole floats back to ints for ``integer`` fields (protobuf numbers are doubles)."""
    fixed = dict(values)
    for name, value in values.items():
        declared = state.get(name)
        if (
            declared is not None
            and declared.type == "integer"
            and isinstance(value, float)
            and value.is_integer()
        ):
            fixed[name] = int(value)
    return fixed


def decision_of(message: Message) -> Decision:
    """The approval decision a follow-up carries.

    A data part that is an object with ``decision`` wins (``{decision:
    approve|reject|edit, arguments?, comment?}``); otherwise the text's first
    word (``approve``/``reject``, also ``yes``/``no``), the rest being the comment.
    Raises :class:`NotADecision`.
    """
    for item in data_of(message):
        if isinstance(item, Mapping) and "decision" in item:
            try:
                return Decision.model_validate(item)
            except pydantic.ValidationError as exc:
                raise NotADecision(f"invalid decision: {validation_problems(exc)}") from None
    # Split on any whitespace: "approve\nlooks fine" is as clear as "approve looks fine".
    word, *rest_of_text = text_of(message).split(None, 1) or [""]
    rest = rest_of_text[0] if rest_of_text else ""
    decision = _WORDS.get(word.strip(".,:;!").lower())
    if decision is None:
        raise NotADecision(
            "this task waits for a decision: reply `approve` or `reject` (text), or send a "
            "data part {decision: approve|reject|edit, arguments?, comment?}"
        )
    comment = rest.strip(" :-\n") or None
    return Decision(decision=decision, comment=comment)
