"""Specs and runs for the tool-safety tests: a real compile, in-memory saver and stores."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from plait.engine.compiler import compile_spec
from plait.engine.governance.audit import AUDIT_KEY, InMemoryAuditStore
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.loader import parse_spec
from plait.engine.tools.idempotency import STORE_KEY, InMemoryToolResultStore

FIXTURES = Path(__file__).parent / "fixtures_py"
FNS = "plait_gov_tools_fns"
_names = itertools.count()


def make_spec(body: dict[str, Any]) -> LoadedSpec:
    """A spec through the real loader, python refs resolved in ``fixtures_py``."""
    name = f"gov-tools-{next(_names)}"
    data = {
        "apiVersion": "plait/v1",
        "kind": "Graph",
        "metadata": {"name": name, "version": "1.0.0"},
        "spec": body,
    }
    return parse_spec(json.dumps(data), f"{name}.yaml", FIXTURES / f"{name}.yaml")


class ModelInputs(AsyncCallbackHandler):
    """Keeps every message list a chat model was given."""

    def __init__(self) -> None:
        self.inputs: list[list[BaseMessage]] = []

    async def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        self.inputs.extend(messages)


class Run:
    """One spec on one thread with an audit store and a tool result store."""

    def __init__(self, loaded: LoadedSpec) -> None:
        self.graph = compile_spec(loaded).bind(InMemorySaver())
        self.audit = InMemoryAuditStore()
        self.results = InMemoryToolResultStore()
        self.models = ModelInputs()
        self.events: list[dict[str, Any]] = []
        self.config: dict[str, Any] = {
            "configurable": {
                "thread_id": "t",
                "run_id": "r1",
                AUDIT_KEY: self.audit,
                STORE_KEY: self.results,
            },
            "callbacks": [self.models],
        }

    async def go(self, payload: Any) -> dict[str, Any]:
        """Stream to the end or the next interrupt; keep custom events; return the state."""
        async for mode, chunk in self.graph.astream(
            payload, self.config, stream_mode=["custom", "updates"]
        ):
            if mode == "custom":
                self.events.append(chunk)
        return dict((await self.graph.aget_state(self.config)).values)

    async def start(self, payload: dict[str, Any]) -> dict[str, Any]:
        return await self.go(payload)

    async def resume(self, value: Any) -> dict[str, Any]:
        return await self.go(Command(resume=value))

    async def interrupts(self) -> list[Any]:
        """Payloads of the pending interrupts."""
        snapshot = await self.graph.aget_state(self.config)
        return [i.value for task in snapshot.tasks for i in task.interrupts]

    def audited(self, kind: str) -> list[Any]:
        return [r for r in self.audit.records if r.kind == kind]
