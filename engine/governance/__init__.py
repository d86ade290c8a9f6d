"""What a run is held to: budgets, loops, breakers, retries, limits, secrets, audit.

Everything here acts during a run (through LangGraph's config and context
variables); it imports the spec, the store and observability, never the
compiler or the run driver.
"""

from plait.engine.governance.breakers import snapshot as breaker_snapshot
from plait.engine.governance.budgets import QuotaExceeded, read_usage, with_quota
from plait.engine.governance.loops import StopsRun
from plait.engine.governance.secrets import EnvironmentSecrets, mask_spec_secrets
from plait.engine.governance.tool_limits import ToolLimiter

__all__ = [
    "EnvironmentSecrets",
    "QuotaExceeded",
    "StopsRun",
    "ToolLimiter",
    "breaker_snapshot",
    "mask_spec_secrets",
    "read_usage",
    "with_quota",
]
