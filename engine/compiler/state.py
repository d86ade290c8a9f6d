"""The state schema of a compiled spec: one LangGraph channel per field, plus private ones.

Every public field has a value from the first step on (its ``default``, or the
reducer's empty value, or ``null``), so CEL can read ``state.x`` before anyone
wrote it and the output always holds every output field. LangGraph channels
start empty, so two small channel subclasses carry the default (see
docs/decisions.md).

Private channels start with ``__`` and are never part of the input or output schema:
``__visits`` (visit counters for ``max_visits``) and ``__result__<node>`` (a
node's last result, read by its ``route`` edge).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired, Self

from langgraph._internal._typing import MISSING as _LANGGRAPH_MISSING
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.last_value import LastValue
from langgraph.graph.message import add_messages
from pydantic import Field
from typing_extensions import TypedDict

from plait.engine.spec.models import GraphSpec, Reducer, StateField

VISITS = "__visits"
RESULT_PREFIX = "__result__"


def result_channel(node: str) -> str:
    """Private channel that holds ``node``'s last result for its route edge."""
    return RESULT_PREFIX + node


_MISSING: Any = object()


def _fresh(value: Any) -> Any:
    # Defaults come from the spec and are shared by every run: hand each run its own copy.
    return copy.deepcopy(value) if isinstance(value, list | dict) else value


class DefaultLastValue(LastValue[Any]):
    """``replace``: the last value wins, two writers in one step raise ``InvalidUpdateError``.

    Unlike ``LastValue`` it starts with ``default`` instead of empty.
    """

    def __init__(self, typ: Any, default: Any = None) -> None:
        super().__init__(typ)
        self.default = default
        self.value = _fresh(default)

    def copy(self) -> Self:
        new = self.__class__(self.typ, self.default)
        new.key = self.key
        new.value = self.value
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = self.__class__(self.typ, self.default)
        new.key = self.key
        if checkpoint is not _LANGGRAPH_MISSING:
            new.value = checkpoint
        return new

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DefaultLastValue) and other.default == self.default

    def __hash__(self) -> int:
        return id(self)


class DefaultBinop(BinaryOperatorAggregate[Any]):
    """A reducer channel that starts with ``default`` (``BinaryOperatorAggregate`` starts empty)."""

    def __init__(
        self, typ: Any, operator: Callable[[Any, Any], Any], default: Any = _MISSING
    ) -> None:
        super().__init__(typ, operator)
        self.default = default
        self.value = _LANGGRAPH_MISSING if default is _MISSING else _fresh(default)

    def copy(self) -> Self:
        new = self.__class__(self.typ, self.operator, self.default)
        new.key = self.key
        new.value = self.value
        return new

    def from_checkpoint(self, checkpoint: Any) -> Self:
        new = self.__class__(self.typ, self.operator, self.default)
        new.key = self.key
        if checkpoint is not _LANGGRAPH_MISSING:
            new.value = checkpoint
        return new

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DefaultBinop)
            and other.operator is self.operator
            and other.default == self.default
        )

    def __hash__(self) -> int:
        return id(self)


# --------------------------------------------------------------------------- reducers
# Each treats a ``None`` current value as empty, so a field whose default is null
# still combines. They never mutate their arguments: channel values are shared
# with checkpoints and earlier state snapshots.


def _append(current: Any, item: Any) -> list[Any]:
    return [*(current or []), item]


def _extend(current: Any, items: Any) -> list[Any]:
    return [*(current or []), *_as_list(items)]


def _merge(current: Any, update: Any) -> dict[str, Any]:
    return {**(current or {}), **(update or {})}


def _sum(current: Any, value: Any) -> Any:
    return value if current is None else current + value


def _max(current: Any, value: Any) -> Any:
    return value if current is None else max(current, value)


def _min(current: Any, value: Any) -> Any:
    return value if current is None else min(current, value)


def _union(current: Any, items: Any) -> list[Any]:
    # Ordered and JSON-able (a list, not a set); values may be unhashable (dicts).
    merged = list(current or [])
    for item in _as_list(items):
        if item not in merged:
            merged.append(item)
    return merged


def _add_counts(current: Any, update: Any) -> dict[str, int]:
    counts = dict(current or {})
    for key, amount in update.items():
        counts[key] = counts.get(key, 0) + amount
    return counts


def _as_list(value: Any) -> Sequence[Any]:
    if value is None:
        return []
    return value if isinstance(value, list | tuple) else [value]


_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "append": _append,
    "extend": _extend,
    "merge": _merge,
    "add_messages": add_messages,
    "sum": _sum,
    "max": _max,
    "min": _min,
    "union": _union,
}

#: The empty value of each combining reducer, used when a field has no default.
_EMPTY: dict[str, Any] = {
    "append": [],
    "extend": [],
    "merge": {},
    "add_messages": [],
    "union": [],
    "sum": 0,
}


def _channel(field: StateField) -> Any:
    reducer: Reducer = field.reducer
    has_default = "default" in field.model_fields_set and field.default is not None
    if reducer == "replace":
        return DefaultLastValue(Any, field.default)
    default = field.default if has_default else _EMPTY.get(reducer)
    if reducer == "add_messages" and default:
        # add_messages gives messages ids; run the default through it once.
        default = add_messages([], default)
    return DefaultBinop(Any, _OPERATORS[reducer], default)


def _typed_dict(name: str, fields: dict[str, Any]) -> Any:
    return TypedDict(name, fields)  # type: ignore[operator]


def state_schemas(
    spec: GraphSpec,
    *,
    route_sources: Sequence[str],
    counted: bool,
    private: Mapping[str, Any] | None = None,
) -> tuple[Any, Any, Any]:
    """``(state, input, output)`` TypedDicts for a spec.

    ``route_sources`` are the nodes whose result a route edge reads; ``counted``
    adds the visit counter channel (only needed when some node has ``max_visits``);
    ``private`` adds more private channels (name -> annotated type), e.g. ``__usage``.
    """
    body = spec.spec
    fields: dict[str, Any] = {
        name: Annotated[Any, _channel(field)] for name, field in body.state.items()
    }
    for node in route_sources:
        fields[result_channel(node)] = Annotated[Any, LastValue(Any)]
    if counted:
        fields[VISITS] = Annotated[dict, DefaultBinop(dict, _add_counts, {})]
    fields.update(private or {})
    state = _typed_dict(f"{_class_name(spec)}State", fields)
    input_schema = _typed_dict(
        f"{_class_name(spec)}Input", {k: _public_type(body.state.get(k)) for k in body.input_fields}
    )
    output_schema = _typed_dict(
        f"{_class_name(spec)}Output",
        {k: _public_type(body.state.get(k)) for k in body.output_fields},
    )
    return state, input_schema, output_schema


_PYTHON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict[str, Any],
    "list": list[Any],
    "messages": list[Any],
    "any": Any,
}


def _public_type(field: StateField | None) -> Any:
    """A field's type for the input/output JSON Schemas clients and forms read.

    Only the schemas use it (LangGraph filters input keys by name, not type).
    Every key is optional: an input may leave a field to its default.
    """
    if field is None:
        return NotRequired[Any]
    typ = _PYTHON_TYPES[field.type]
    if field.description:
        typ = Annotated[typ, Field(description=field.description)]
    return NotRequired[typ]


def _class_name(spec: GraphSpec) -> str:
    return "".join(part.capitalize() for part in spec.metadata.name.split("-"))
