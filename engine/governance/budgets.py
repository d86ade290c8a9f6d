"""Per-run budgets (``spec.budgets``): steps, tokens, wall time and cost, checked before
every step and every model call.

Usage lives in the private channel ``__usage``. Each step writes only its own
*delta* and the channel's reducer adds deltas up, so parallel branches never
clash and a resumed run continues from the checkpointed totals. While a step
runs, a :class:`StepMeter` (held in a context variable, so model calls deep in
a node kind find it without being passed it) adds the step's model calls to
the totals it checks.

A limit is *reached* when usage is at or above it: one more step or call
could only go further over. What happens then is ``on_exceed``:

- ``fail``: the step raises :class:`BudgetExceeded` (never retried);
- ``fallback``: the remaining model calls use ``fallback_model``;
- ``return``: the run ends with its state as it is (every edge leads to ``END``
  once ``__usage.stopped`` is set; see :func:`stopped`);
- ``approval``: the run parks on an approval (action ``exceed_budget``); an
  approved limit is lifted for the rest of the run, a rejection fails it.

A *tenant's* daily budget is not the spec's: whoever runs the graph (the
server) puts a :class:`TenantQuota` in ``configurable.plait_quota``
(:func:`with_quota`); every node step and model call is then admitted
against it and charged to it, whatever the spec declares.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

import pydantic
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.types import interrupt

from plait.engine.errors import NodeError
from plait.engine.observability.emit import emit
from plait.engine.spec.models import BudgetSpec, Decision, GraphSpec, ModelPrice, duration_seconds

#: The private channel with the run's usage so far.
USAGE = "__usage"

_SUMMED = ("steps", "input_tokens", "output_tokens", "cost")


def merge_usage(current: Mapping[str, Any] | None, delta: Mapping[str, Any]) -> dict[str, Any]:
    """Reducer of ``__usage``: counters add up, the earliest start wins, flags stick."""
    base = dict(current or {})
    merged = {key: base.get(key, 0) + delta.get(key, 0) for key in _SUMMED}
    starts = [s for s in (base.get("started_at"), delta.get("started_at")) if s is not None]
    merged["started_at"] = min(starts) if starts else None
    merged["waived"] = sorted({*base.get("waived", ()), *delta.get("waived", ())})
    merged["fallback"] = bool(base.get("fallback") or delta.get("fallback"))
    merged["stopped"] = base.get("stopped") or delta.get("stopped")
    return merged


def stopped(state: Mapping[str, Any]) -> bool:
    """Whether the run ended early (``on_exceed: return``): edges then lead to ``END``."""
    usage = state.get(USAGE)
    return bool(usage and usage.get("stopped"))


class BudgetExceeded(NodeError):
    """A budget limit was reached and the spec says to fail (or a person refused more)."""

    def __init__(self, node: str, limit: str, value: float, usage: Mapping[str, Any]) -> None:
        self.limit = limit
        self.value = value
        self.usage = dict(usage)
        super().__init__(
            node, f"budget {limit}={_fmt(value)} exceeded (used {_fmt(usage[_MEASURE[limit]])})"
        )


class StopRun(GraphBubbleUp):
    """Raised inside a step when ``on_exceed: return`` fires; :func:`run_metered` ends the run.

    A ``GraphBubbleUp`` so that node kinds which turn errors into data (agent
    tool calls) let it through, and LangGraph never retries it.
    """


#: Which usage figure each limit bounds.
_MEASURE = {
    "max_steps": "steps",
    "max_tokens": "tokens",
    "max_wall_time": "wall_time",
    "max_cost": "cost",
}


def _fmt(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Budget:
    """A spec's budget, compiled: the limits in seconds/units and the price table."""

    spec: BudgetSpec
    limits: dict[str, float]
    prices: dict[str, ModelPrice]

    @classmethod
    def of(cls, graph: GraphSpec) -> Budget | None:
        """The budget of ``graph``, or ``None`` when it declares none (the default)."""
        spec = graph.spec.budgets
        if spec is None:
            return None
        raw = {
            "max_steps": spec.max_steps,
            "max_tokens": spec.max_tokens,
            "max_wall_time": (
                duration_seconds(spec.max_wall_time) if spec.max_wall_time is not None else None
            ),
            "max_cost": spec.max_cost,
        }
        limits = {name: float(value) for name, value in raw.items() if value is not None}
        prices = {name: model.price for name, model in graph.spec.models.items() if model.price}
        return cls(spec, limits, prices)

    def start_step(self, node: str, state: Mapping[str, Any]) -> StepMeter:
        """A meter for one step of ``node``, starting from the usage in ``state``."""
        return StepMeter(self, node, dict(state.get(USAGE) or {}))

    @property
    def gates_edges(self) -> bool:
        """Whether edges must check :func:`stopped` (only ``on_exceed: return`` stops runs)."""
        return self.spec.on_exceed == "return"


@dataclass
class StepMeter:
    """Usage of one step on top of the run's totals; enforces the budget."""

    budget: Budget
    node: str
    base: dict[str, Any]
    delta: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.time)

    def totals(self) -> dict[str, Any]:
        """Usage so far, this step included (``tokens`` and ``wall_time`` derived)."""
        merged = merge_usage(self.base, self.delta)
        started_at = merged["started_at"] or self.started
        merged["tokens"] = merged["input_tokens"] + merged["output_tokens"]
        merged["wall_time"] = round(time.time() - started_at, 3)
        return merged

    def _reached(self) -> list[str]:
        totals = self.totals()
        waived = set(totals["waived"])
        return [
            name
            for name, value in self.budget.limits.items()
            if name not in waived and totals[_MEASURE[name]] >= value
        ]

    def admit_step(self) -> bool:
        """Check before the step; ``False`` when the run has stopped and the step must not run."""
        if self.base.get("stopped"):
            return False
        try:
            self._enforce()
        except StopRun:
            return False
        return True

    def model_for_call(self, model: str) -> str:
        """Check before a model call; the model to use (the fallback once over budget).

        Raises :class:`StopRun` for ``on_exceed: return``: the node runner ends the run.
        """
        self._enforce()
        if self.delta.get("fallback") or self.base.get("fallback"):
            return self.budget.spec.fallback_model or model
        return model

    def _enforce(self) -> None:
        spec = self.budget.spec
        for limit in self._reached():
            if spec.on_exceed == "fallback":
                if not (self.base.get("fallback") or self.delta.get("fallback")):
                    self.delta["fallback"] = True
                    self._exceeded(limit, "fallback")
                return
            if spec.on_exceed == "fail":
                self._exceeded(limit, "fail")
                raise BudgetExceeded(self.node, limit, self.budget.limits[limit], self.totals())
            if spec.on_exceed == "return":
                self._exceeded(limit, "return")
                self.delta["stopped"] = f"budget {limit}={_fmt(self.budget.limits[limit])} reached"
                raise StopRun
            self._ask(limit)

    def _ask(self, limit: str) -> None:
        """Park on an approval; an approval lifts ``limit`` for the rest of the run."""
        value = self.budget.limits[limit]
        totals = self.totals()
        used = totals[_MEASURE[limit]]
        self._exceeded(limit, "approval")
        answer = interrupt(
            {
                "kind": "approval",
                "node": self.node,
                "action": "exceed_budget",
                "arguments": {"limit": limit, "value": value, "used": used},
                "reason": f"budget {limit}={_fmt(value)} reached (used {_fmt(used)})",
                "expires_at": None,
                "on_expire": "reject",
            }
        )
        try:
            decision = Decision.model_validate(answer)
        except pydantic.ValidationError:
            decision = Decision(decision="reject", comment=f"invalid answer: {answer!r}")
        if decision.decision == "reject":
            raise BudgetExceeded(self.node, limit, value, totals)
        self.delta["waived"] = [*self.delta.get("waived", []), limit]

    def _exceeded(self, limit: str, action: str) -> None:
        emit(
            {
                "plait": "budget",
                "node": self.node,
                "exceeded": limit,
                "limit": self.budget.limits[limit],
                "action": action,
                "usage": _public(self.totals()),
            }
        )

    def add_reply(self, model: str, reply: BaseMessage) -> None:
        """Count a model reply's tokens (``usage_metadata``) and cost."""
        usage = reply.usage_metadata if isinstance(reply, AIMessage) else None
        if not usage:
            return
        tokens_in, tokens_out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        delta = self.delta
        delta["input_tokens"] = delta.get("input_tokens", 0) + tokens_in
        delta["output_tokens"] = delta.get("output_tokens", 0) + tokens_out
        price = self.budget.prices.get(model)
        if price is not None:
            delta["cost"] = delta.get("cost", 0) + price.cost(tokens_in, tokens_out)

    def finish(self, *, ran: bool = True) -> dict[str, Any]:
        """The step's delta for ``__usage``; announces the totals as a ``budget`` event.

        The step counts once it is over (``ran``), so a step's own model calls
        are checked against the steps before it.
        """
        if ran:
            self.delta["steps"] = 1
        if self.base.get("started_at") is None:
            self.delta["started_at"] = self.started
        emit(
            {
                "plait": "budget",
                "node": self.node,
                "usage": _public(self.totals()),
                "limits": dict(self.budget.limits),
            }
        )
        return self.delta


def _public(totals: Mapping[str, Any]) -> dict[str, Any]:
    """The figures events show (no internal bookkeeping such as ``started_at``)."""
    keys = ("steps", "input_tokens", "output_tokens", "tokens", "cost", "wall_time")
    shown = {key: totals[key] for key in keys}
    shown["cost"] = round(shown["cost"], 6)
    for flag in ("fallback", "stopped"):
        if totals.get(flag):
            shown[flag] = totals[flag]
    return shown


_METER: ContextVar[StepMeter | None] = ContextVar("plait_step_meter", default=None)


def current_meter() -> StepMeter | None:
    """The meter of the step running in this context, if its spec has a budget."""
    return _METER.get()


async def run_metered(
    budget: Budget,
    node: str,
    state: Mapping[str, Any],
    step: Callable[[], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """Run one step under ``budget``: check first, meter its model calls, add its usage.

    A stopped run (``on_exceed: return``) skips the step and writes only its usage.
    """
    meter = budget.start_step(node, state)
    if not meter.admit_step():
        return {USAGE: meter.finish(ran=False)}
    token = _METER.set(meter)
    try:
        update = await step()
    except StopRun:
        update = {}
    finally:
        _METER.reset(token)
    update[USAGE] = meter.finish()
    return update


async def read_usage(
    checkpointer: BaseCheckpointSaver[Any], config: RunnableConfig
) -> dict[str, Any] | None:
    """The usage recorded in a thread's latest checkpoint (``None`` without a budget).

    ``__usage`` is private (not in ``values``); this is how callers read it.
    """
    found = await checkpointer.aget_tuple(config)
    if found is None:
        return None
    usage = found.checkpoint["channel_values"].get(USAGE)
    return dict(usage) if usage is not None else None


# --------------------------------------------------------------------------- tenant quotas

#: Where a run's config carries its tenant's :class:`TenantQuota` (absent: no daily budget).
QUOTA_KEY = "plait_quota"


class QuotaExceeded(NodeError):
    """The tenant's daily budget is used up: the step or model call does not start."""

    def __init__(self, node: str, tenant: str, limit: str, value: float, used: float) -> None:
        self.tenant, self.limit, self.value, self.used = tenant, limit, value, used
        super().__init__(
            node,
            f"daily budget {limit}={_fmt(value)} of tenant {tenant!r} reached "
            f"(used {_fmt(used)} today, UTC); the run stops until the day ends or the "
            "limit is raised (PATCH /tenants/{id})",
        )


class TenantQuota(Protocol):
    """A tenant's daily budget, kept by whoever runs the graph (the server, per tenant).

    The engine calls :meth:`admit` before every step and every model call, and
    :meth:`charge` with what each spent; it never knows where the totals live.
    """

    async def admit(self, node: str) -> None:
        """Raise :class:`QuotaExceeded` when a daily limit is reached."""
        ...

    async def charge(self, delta: Mapping[str, float]) -> None:
        """Add ``steps``, ``input_tokens``, ``output_tokens``, ``cost`` to today's totals."""
        ...


def quota_of(config: RunnableConfig | None) -> TenantQuota | None:
    """The run's quota, from ``config["configurable"]["plait_quota"]``."""
    if config is None:
        return None
    quota: TenantQuota | None = (config.get("configurable") or {}).get(QUOTA_KEY)
    return quota


def current_quota() -> TenantQuota | None:
    """The quota of the run this code runs in (LangGraph's context config), if any."""
    try:
        return quota_of(get_config())
    except RuntimeError:  # outside a graph run
        return None


def with_quota(config: dict[str, Any], quota: TenantQuota) -> dict[str, Any]:
    """``config`` with ``quota`` applied to every step and model call of the run.

    Node steps are admitted and charged by the node wrapper
    (``engine/compiler/nodes/base.py``): a step counts once it has ended well,
    so a failed or interrupted step does not; model calls by ``invoke_model``.
    """
    config.setdefault("configurable", {})[QUOTA_KEY] = quota
    return config


async def charge_reply(quota: TenantQuota, reply: BaseMessage, price: ModelPrice | None) -> None:
    """Charge a model reply's tokens (``usage_metadata``) and cost to ``quota``."""
    usage = reply.usage_metadata if isinstance(reply, AIMessage) else None
    if not usage:
        return
    tokens_in, tokens_out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    cost = price.cost(tokens_in, tokens_out) if price is not None else 0.0
    await quota.charge({"input_tokens": tokens_in, "output_tokens": tokens_out, "cost": cost})
