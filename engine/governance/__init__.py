"""What a run is held to: budgets, loops, breakers, retries, limits, secrets, audit.

Everything here acts during a run (through LangGraph's config and context
variables); it imports the spec, the store and observability, never the
compiler or the run driver.
"""

from plait.engine.governance.breakers import snapshot as breaker_snapshot
from plait.engine.governance.budgets import QuotaExceeded, read_usage, with_quota
from plait.engine.governance.loops import StopsRun
from plait.engine.governance.mcp_trust import (
    MAX_TRUST_ENTRIES,
    TRUST_ALL,
    TrustEntryInvalid,
    TrustList,
    entry_identity,
    server_identity,
)
from plait.engine.governance.secrets import (
    MIN_MASKED_LENGTH,
    EnvironmentSecrets,
    mask_spec_secrets,
    short_secret_warning,
)
from plait.engine.governance.tool_limits import ToolLimiter

__all__ = [
    "MAX_TRUST_ENTRIES",
    "MIN_MASKED_LENGTH",
    "TRUST_ALL",
    "EnvironmentSecrets",
    "QuotaExceeded",
    "StopsRun",
    "ToolLimiter",
    "TrustEntryInvalid",
    "TrustList",
    "breaker_snapshot",
    "entry_identity",
    "mask_spec_secrets",
    "read_usage",
    "server_identity",
    "short_secret_warning",
    "with_quota",
]
