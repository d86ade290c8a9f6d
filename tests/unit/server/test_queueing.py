"""A run's queueing: the request's choices win over the spec's ``queue``, then the defaults."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plait.engine.spec import QueueSpec
from plait.server.queue.queueing import AGING_SECONDS_ENV, Queueing, aging_seconds


def test_the_request_wins_over_the_spec_and_the_spec_over_the_defaults() -> None:
    spec = QueueSpec(priority=2, expires_in="10m")
    assert Queueing().with_defaults(None) == Queueing(priority=5)
    assert Queueing().with_defaults(spec) == Queueing(priority=2, expires_in=600.0)
    assert Queueing(priority=9, expires_in=30.0).with_defaults(spec) == Queueing(9, None, 30.0)
    # An absolute deadline from the request: the spec's relative one does not apply.
    deadline = datetime(2030, 1, 1, tzinfo=UTC)
    assert Queueing(expires_at=deadline).with_defaults(spec) == Queueing(2, deadline, None)


def test_the_aging_interval_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AGING_SECONDS_ENV, raising=False)
    assert aging_seconds() == 60.0
    monkeypatch.setenv(AGING_SECONDS_ENV, "15")
    assert aging_seconds() == 15.0
    monkeypatch.setenv(AGING_SECONDS_ENV, "0")
    with pytest.raises(ValueError, match="must be a positive number of seconds"):
        aging_seconds()
