"""Exactly-once tool calls: idempotency keys and the store of recorded results.

When a worker dies mid-node, LangGraph re-runs that node from its start on
resume, so every tool call the node already made would run again. Each call
therefore gets a key that is the same when the node re-runs, and its result is
recorded under that key before the node uses it; the re-run finds the record
and reuses it instead of calling the tool.

How the key is derived (:func:`tool_call_key`):

- ``thread_id`` and ``checkpoint_ns`` from the node's config. Inside a node,
  ``checkpoint_ns`` is ``"<node>:<task_id>"`` (``"<parent>:<id>|<node>:<id>"``
  in a subgraph). LangGraph derives the task id from the checkpoint the step
  starts from (uuid5 of checkpoint id, namespace, step, node name, ...), so it
  is the same when the node re-runs from that checkpoint after a crash, and
  different on the next visit of the node (a new step starts from a new
  checkpoint). Verified on langgraph 1.2.24 with the Postgres saver and
  ``durability="sync"``: a node killed with ``os._exit`` and a node that raised
  both saw the same ``checkpoint_ns`` when the thread was resumed; so did a
  ``Send`` task killed mid-way.
- the call's position in the node: a call index for a ``tool`` node, the
  agent iteration and the call's index in the model's reply for an agent,
  prefixed by the item index inside a ``map``.
- the tool's name and its arguments (canonical JSON). A re-run agent asks its
  model again; a real provider gives fresh tool-call ids every time (so the ids
  cannot be part of the key) and may ask for a different call, which is a new
  call and must run, not reuse another call's result.

The key is a SHA-256 of those parts, so it has a fixed size whatever the ids.

A tool marked ``idempotent: false`` also gets an *intent* under its key,
written and committed before the call acts: a re-run that finds the intent
and no result knows the call may already have happened
(:mod:`plait.engine.tools.in_doubt` decides what then).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig

from plait.engine.store.tool_results import Intent, RecordedResult

#: Where a run's config carries its :class:`ToolResultStore` (absent: nothing is recorded).
STORE_KEY = "plait_tool_results"


class ToolResultStore(Protocol):
    """Recorded tool results and intents by idempotency key."""

    async def get(self, key: str) -> RecordedResult | None:
        """The record under ``key``, if any."""
        ...

    async def put(
        self,
        key: str,
        record: RecordedResult,
        *,
        thread_id: str,
        run_id: str | None,
        node: str,
        tool: str,
        args: Mapping[str, Any],
        path: str | None = None,
    ) -> RecordedResult:
        """Record ``record`` unless ``key`` has one already; return the stored record.

        ``path`` is where ``node`` ran among subgraphs
        (``engine/observability/node_path.py``), which ``plait record`` keeps the result
        under. First writer wins: when two executions of one step race (a worker whose
        lease expired while it still ran), both use the first record.
        """
        ...

    async def intent(self, key: str) -> Intent | None:
        """The intent under ``key``, if a non-idempotent call began there."""
        ...

    async def begin(
        self,
        key: str,
        attempt: int,
        *,
        answered_run: str | None,
        thread_id: str,
        run_id: str | None,
        node: str,
        tool: str,
        args: Mapping[str, Any],
    ) -> bool:
        """Record, committed, that attempt ``attempt`` (1 for the first) began; False if taken.

        Compare and set: attempt ``n`` is recorded only over attempt ``n - 1``,
        so of two executions racing to begin one call, one wins and the other
        learns the call is in doubt.
        """
        ...

    async def park(self, key: str) -> None:
        """Mark the last attempt under ``key`` as parked (its run waits; it did not die)."""
        ...


class InMemoryToolResultStore:
    """A :class:`ToolResultStore` in a dict: for tests and runs without a database."""

    def __init__(self) -> None:
        self.records: dict[str, RecordedResult] = {}
        self.intents: dict[str, Intent] = {}

    async def get(self, key: str) -> RecordedResult | None:
        """The record under ``key``, if any."""
        return self.records.get(key)

    async def put(
        self,
        key: str,
        record: RecordedResult,
        *,
        thread_id: str,
        run_id: str | None,
        node: str,
        tool: str,
        args: Mapping[str, Any],
        path: str | None = None,
    ) -> RecordedResult:
        """Record ``record`` unless ``key`` has one already; return the stored record."""
        return self.records.setdefault(key, record)

    async def intent(self, key: str) -> Intent | None:
        """The intent under ``key``, if any."""
        return self.intents.get(key)

    async def begin(
        self,
        key: str,
        attempt: int,
        *,
        answered_run: str | None,
        thread_id: str,
        run_id: str | None,
        node: str,
        tool: str,
        args: Mapping[str, Any],
    ) -> bool:
        """Record that attempt ``attempt`` began, over attempt ``attempt - 1``; False if taken."""
        found = self.intents.get(key)
        if (found.attempts if found is not None else 0) != attempt - 1:
            return False
        self.intents[key] = Intent(datetime.now(UTC), attempt, answered_run=answered_run)
        return True

    async def park(self, key: str) -> None:
        """Mark the last attempt under ``key`` as parked."""
        found = self.intents.get(key)
        if found is not None:
            self.intents[key] = replace(found, parked=True)


def store_from(config: RunnableConfig) -> ToolResultStore | None:
    """The run's store, from ``config["configurable"]["plait_tool_results"]``."""
    store: ToolResultStore | None = (config.get("configurable") or {}).get(STORE_KEY)
    return store


def tool_call_key(
    config: RunnableConfig, position: tuple[str | int, ...], tool: str, args: Any
) -> str | None:
    """The idempotency key of one tool call (see the module docstring), or None.

    None when the config names no thread or namespace (a graph invoked outside
    a checkpointed run): nothing identifies the call across a re-run then.
    ``args`` must be JSON-like (see :func:`plait.engine.spec.expressions.to_plain`).
    """
    configurable = config.get("configurable") or {}
    thread_id = configurable.get("thread_id")
    namespace = configurable.get("checkpoint_ns")
    if not thread_id or not namespace:
        return None
    parts = [str(thread_id), namespace, list(position), tool, args]
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
