"""A run's place and deadline in the queue: its priority, how waiting raises it, its expiry.

Claims (:func:`plait.server.queue.runs.claim_runs`) order a tenant's claimable
runs by *effective* priority, ``priority + floor(waited / aging_seconds)``
(``waited`` since the run could first start), ties to the run that waited
longest, then to queue order. So a run of priority ``p`` outranks every run
queued after it at any priority once it has waited ``(9 - p + 1) *
aging_seconds``: a steady stream of high-priority runs delays a low one by a
bounded time, never for ever. Within one priority this order is simply
longest waiting first, which an index keeps (``plait_runs_claim_order``): a
claim reads the first few runs of each priority, not the whole queue.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime

from plait.engine.spec import QueueSpec, duration_seconds

#: The priority of a run when neither its request nor its spec's ``queue`` gives one.
DEFAULT_PRIORITY = 5
LOWEST_PRIORITY, HIGHEST_PRIORITY = 0, 9
#: Seconds of waiting that raise a queued run's priority by one level.
AGING_SECONDS_ENV = "PLAIT_PRIORITY_AGING_SECONDS"
DEFAULT_AGING_SECONDS = 60.0


def aging_seconds() -> float:
    """The aging interval this process claims with (``PLAIT_PRIORITY_AGING_SECONDS``, 60 s)."""
    value = float(os.environ.get(AGING_SECONDS_ENV) or DEFAULT_AGING_SECONDS)
    if value <= 0:
        raise ValueError(f"{AGING_SECONDS_ENV} must be a positive number of seconds, not {value}")
    return value


@dataclass(frozen=True)
class Queueing:
    """What a run-creating request says about the run's queueing (``None``: not said)."""

    priority: int | None = None
    #: An absolute deadline; wins over ``expires_in``.
    expires_at: datetime | None = None
    #: Seconds from when the run may start (its ``after_seconds`` passed) to its deadline.
    expires_in: float | None = None

    def with_defaults(self, spec: QueueSpec | None) -> Queueing:
        """This request's choices, the spec's ``queue`` for what it left out."""
        priority = self.priority
        if priority is None:
            priority = spec.priority if spec is not None else DEFAULT_PRIORITY
        expires_in = self.expires_in
        if self.expires_at is None and expires_in is None and spec and spec.expires_in is not None:
            expires_in = duration_seconds(spec.expires_in)
        return replace(self, priority=priority, expires_in=expires_in)
