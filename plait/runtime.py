"""Plait's public runtime for ejected graphs (``plait eject``, docs/eject.md).

Stable: what an ejected module imports from Plait. :class:`Runtime` runs the
steps Plait governs (model calls, agents, tools, approvals, maps) exactly as
a compiled spec does; :class:`Step` is what they return; :class:`NodeError`
is the error a step raises for a spec-level failure.
"""

from plait.engine.eject.runtime import VISITS_FIELD, NodeError, Runtime, Step

__all__ = ["VISITS_FIELD", "NodeError", "Runtime", "Step"]
