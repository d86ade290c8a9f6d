"""One run's context, typed, and the one LangGraph config made from it.

``plait run`` (:mod:`plait.engine.run.runner`) and the server's workers
(``plait.server.workers.execution``) both describe a run with a :class:`RunContext`;
the keys its config carries for the engine's wrappers (the tool-result and
audit stores, the secret source, how python nodes and MCP task tools behave)
are written here only, from their owners' constants.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plait.engine.compiler.nodes.python import OFFLOAD_SYNC_KEY
from plait.engine.governance.audit import AUDIT_KEY, AuditStore
from plait.engine.governance.mcp_trust import TRUST_KEY, TrustSource
from plait.engine.governance.secrets import SecretSource, with_secret_source
from plait.engine.governance.tool_limits import LIMITER_KEY, ToolLimiter
from plait.engine.spec.document import LoadedSpec
from plait.engine.tools.idempotency import STORE_KEY, ToolResultStore
from plait.engine.tools.mcp.parking import PARK_TASKS_KEY


@dataclass(frozen=True)
class RunContext:
    """Who a run is and what it runs with.

    ``requested`` is the config a client sent (``configurable``, ``metadata``,
    ``recursion_limit``, ``tags``): the lowest layer, so a client cannot
    spoof provenance or another thread. ``metadata`` is what the caller adds
    (the server: the run's metadata, the API's ids, the tenant), above it.
    """

    loaded: LoadedSpec
    thread_id: str
    run_id: str
    git_sha: str | None = None
    #: Start from this checkpoint rather than the thread's last (a fork).
    checkpoint_id: str | None = None
    #: Where tool results and intents are recorded (a continued run reuses them).
    tool_results: ToolResultStore | None = None
    audit: AuditStore | None = None
    secrets: SecretSource | None = None
    #: Takes the turns of tools with `limits`, shared in Postgres (absent: not enforced).
    tool_limiter: ToolLimiter | None = None
    #: Sync python nodes run in threads (a worker's loop must keep heartbeating).
    offload_sync: bool = False
    #: MCP task tools park the run for the server's poller instead of waiting.
    park_mcp_tasks: bool = False
    #: The tenant's trusted MCP servers (absent: every server the spec declares is trusted).
    mcp_trust: TrustSource | None = None
    requested: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def config(self) -> dict[str, Any]:
        """The LangGraph config of this run: thread, provenance, stores, step limit."""
        loaded = self.loaded
        # run_id in configurable too: nodes read it there for CEL's `run.id`.
        configurable: dict[str, Any] = {
            **(self.requested.get("configurable") or {}),
            "thread_id": self.thread_id,
            "run_id": self.run_id,
        }
        if self.checkpoint_id:
            configurable["checkpoint_id"] = self.checkpoint_id
        if self.tool_results is not None:
            configurable[STORE_KEY] = self.tool_results
        if self.audit is not None:
            configurable[AUDIT_KEY] = self.audit
        if self.tool_limiter is not None:
            configurable[LIMITER_KEY] = self.tool_limiter
        if self.offload_sync:
            configurable[OFFLOAD_SYNC_KEY] = True
        if self.park_mcp_tasks:
            configurable[PARK_TASKS_KEY] = True
        # Set here or nowhere: a client's `configurable` must not choose a run's trust.
        configurable.pop(TRUST_KEY, None)
        if self.mcp_trust is not None:
            configurable[TRUST_KEY] = self.mcp_trust
        metadata: dict[str, Any] = {
            **(self.requested.get("metadata") or {}),
            **self.metadata,
            "plait_graph": loaded.name,
            "plait_version": loaded.version,
            "plait_digest": loaded.digest,
            "run_id": self.run_id,
        }
        if self.git_sha:
            metadata["plait_git_sha"] = self.git_sha
        config: dict[str, Any] = {
            "configurable": configurable,
            "metadata": metadata,
            "recursion_limit": self.requested.get("recursion_limit") or loaded.spec.spec.max_steps,
        }
        if self.requested.get("tags"):
            config["tags"] = list(self.requested["tags"])
        if self.secrets is not None:
            with_secret_source(config, self.secrets)
        return config
