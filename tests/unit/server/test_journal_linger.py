"""The journal's linger: how long a round of events waits for more (PLAIT_JOURNAL_LINGER_MS)."""

from __future__ import annotations

import pytest

from plait.server.queue.journal_writer import LINGER_ENV, linger_seconds


def test_the_linger_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LINGER_ENV, raising=False)
    assert linger_seconds() == 0.005
    monkeypatch.setenv(LINGER_ENV, "0")
    assert linger_seconds() == 0.0
    monkeypatch.setenv(LINGER_ENV, "12.5")
    assert linger_seconds() == 0.0125


@pytest.mark.parametrize("raw", ["soon", "-1"])
def test_a_bad_linger_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(LINGER_ENV, raw)
    with pytest.raises(ValueError, match=LINGER_ENV):
        linger_seconds()
