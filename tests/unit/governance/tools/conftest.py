"""The fixture tools' call log, emptied for each test."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from plait.engine.tools.python_tools import import_function
from tests.unit.governance.tools.helpers import FIXTURES, FNS


@pytest.fixture
def calls() -> list[tuple[str, dict[str, Any]]]:
    """Every real execution of a fixture tool during the test."""
    import_function(f"{FNS}:read_page", FIXTURES)
    log: list[tuple[str, dict[str, Any]]] = sys.modules[FNS].CALLS
    log.clear()
    return log
