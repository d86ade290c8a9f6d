"""``plait eject``: a spec as a readable LangGraph module that needs Plait only for governance.

The module's governed steps call :mod:`plait.runtime` (the public runtime,
``engine/eject/runtime.py``); see docs/eject.md.
"""

from __future__ import annotations

from pathlib import Path

from plait.engine.eject.formatting import formatted
from plait.engine.eject.generate import eject_source
from plait.engine.eject.unsupported import NotEjectable, Unsupported, unsupported
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.registry import SpecRegistry

__all__ = ["NotEjectable", "Unsupported", "eject", "unsupported"]


def eject(
    loaded: LoadedSpec,
    registry: SpecRegistry | None,
    *,
    target: Path,
    partial: bool = False,
) -> str:
    """The module's source for ``loaded`` written at ``target``, formatted by ruff when it is
    installed. Raises :class:`NotEjectable` unless every feature maps or ``partial``."""
    return formatted(eject_source(loaded, registry, target=target, partial=partial))
