"""Interchange with other agent formats: Open Agent Spec (docs/agentspec.md)."""

from __future__ import annotations

from plait.engine.interop.agentspec import (
    AgentSpecExport,
    AgentSpecImport,
    export_agentspec,
    import_agentspec,
    read_agentspec,
)
from plait.engine.interop.agentspec_import import AgentSpecImportError
from plait.engine.interop.agentspec_report import Unmapped, differences
from plait.engine.interop.spec_yaml import spec_yaml

__all__ = [
    "AgentSpecExport",
    "AgentSpecImport",
    "AgentSpecImportError",
    "Unmapped",
    "differences",
    "export_agentspec",
    "import_agentspec",
    "read_agentspec",
    "spec_yaml",
]
