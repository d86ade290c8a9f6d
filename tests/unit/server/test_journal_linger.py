"""The journal's linger: how long a round of events waits for more.

``PLAIT_JOURNAL_LINGER_MS`` for each run whose events the round holds, at most
``PLAIT_JOURNAL_LINGER_MAX_MS``.
"""

from __future__ import annotations

import pytest

from plait.server.queue.journal_writer import (
    LINGER_ENV,
    MOST_LINGER_ENV,
    linger_seconds,
    most_linger_seconds,
    round_linger,
)


def test_the_linger_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LINGER_ENV, raising=False)
    assert linger_seconds() == 0.005
    monkeypatch.setenv(LINGER_ENV, "0")
    assert linger_seconds() == 0.0
    monkeypatch.setenv(LINGER_ENV, "12.5")
    assert linger_seconds() == 0.0125


def test_the_cap_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MOST_LINGER_ENV, raising=False)
    assert most_linger_seconds() == 0.02
    monkeypatch.setenv(MOST_LINGER_ENV, "50")
    assert most_linger_seconds() == 0.05


@pytest.mark.parametrize("name", [LINGER_ENV, MOST_LINGER_ENV])
@pytest.mark.parametrize("raw", ["soon", "-1"])
def test_a_bad_linger_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, raw: str
) -> None:
    monkeypatch.setenv(name, raw)
    with pytest.raises(ValueError, match=name):
        linger_seconds() if name == LINGER_ENV else most_linger_seconds()


def test_a_round_waits_for_each_run_it_holds_up_to_the_cap() -> None:
    assert round_linger(1, 0.005, 0.02) == 0.005
    assert round_linger(3, 0.005, 0.02) == 0.015
    assert round_linger(10, 0.005, 0.02) == 0.02
    # Events all taken back by a finishing run: nothing to wait for.
    assert round_linger(0, 0.005, 0.02) == 0


def test_no_linger_stays_none_and_a_cap_below_one_run_s_linger_is_no_cap() -> None:
    assert round_linger(8, 0.0, 0.02) == 0
    assert round_linger(1, 0.03, 0.02) == 0.03
    assert round_linger(4, 0.03, 0.02) == 0.03
