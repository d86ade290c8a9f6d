"""Open Agent Spec export and import (docs/agentspec.md): the functions the CLI calls.

Export builds the Agent Spec document with pyagentspec, imports it back natively
and compares: each difference is a feature Agent Spec does not express. It is
listed in the report and kept in the document's ``metadata.plait.restore``, so
that importing the document into Plait restores it. Other Agent Spec runtimes
ignore that metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pydantic
import yaml
from pyagentspec.agent import Agent
from pyagentspec.component import Component
from pyagentspec.flows.flow import Flow
from pyagentspec.serialization import AgentSpecDeserializer, AgentSpecSerializer

from plait.engine.interop.agentspec_export import Resolver, build_component
from plait.engine.interop.agentspec_import import (
    AgentSpecImportError,
    restore_patches,
    spec_data,
)
from plait.engine.interop.agentspec_report import (
    PLAIT_METADATA,
    Unmapped,
    apply_patches,
    differences,
    patches_for,
    reason_for,
)
from plait.engine.spec import GraphSpec

Format = Literal["json", "yaml"]


@dataclass
class AgentSpecExport:
    """An exported document and what in the spec it cannot express."""

    component: Flow | Agent
    unmapped: list[Unmapped]

    def text(self, format: Format = "json") -> str:
        """The document as Agent Spec JSON or YAML."""
        serializer = AgentSpecSerializer()
        if format == "yaml":
            return serializer.to_yaml(self.component)
        return serializer.to_json(self.component) + "\n"


@dataclass
class AgentSpecImport:
    """Plait spec data read from a document, the subflows it names, and notes for a person."""

    data: dict[str, Any]
    children: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    restored: bool = False


def normalized(data: dict[str, Any]) -> dict[str, Any]:
    """Spec data as the models read it, without defaults, so two specs compare by meaning."""
    try:
        spec = GraphSpec.model_validate(data)
    except pydantic.ValidationError:
        return data
    return spec.model_dump(mode="json", by_alias=True, exclude_defaults=True)


def export_agentspec(
    spec: GraphSpec, resolve: Resolver | None = None, as_flow: bool = False
) -> AgentSpecExport:
    """``spec`` as an Agent Spec Flow (an Agent for a single-agent spec) and its report.

    ``resolve`` finds the spec a ``subgraph`` names, exported as the FlowNode's
    subflow; without it the subflow only declares the child's inputs and outputs.
    """
    children: list[AgentSpecExport] = []

    def subflow(child: GraphSpec) -> Flow:
        exported = export_agentspec(child, resolve, as_flow=True)
        children.append(exported)
        assert isinstance(exported.component, Flow)
        return exported.component

    component = build_component(spec, resolve, subflow, as_flow)
    original = spec.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    found = differences(original, normalized(spec_data(component).data))
    name = f"{spec.metadata.name}@{spec.metadata.version}"
    unmapped = [Unmapped(item.pointer, reason_for(item), name) for item in found]
    for child in children:
        unmapped += child.unmapped
    component.metadata = {
        **(component.metadata or {}),
        PLAIT_METADATA: {"apiVersion": spec.api_version, "restore": patches_for(found)},
    }
    return AgentSpecExport(component, unmapped)


def read_agentspec(text: str) -> Component:
    """Deserialise (and so validate) an Agent Spec JSON or YAML document.

    Raises :class:`AgentSpecImportError` naming what is wrong.
    """
    deserializer = AgentSpecDeserializer()
    try:
        if text.lstrip().startswith("{"):
            json.loads(text)
            return deserializer.from_json(text)
        return deserializer.from_yaml(text)
    except (ValueError, TypeError, KeyError, NotImplementedError, yaml.YAMLError) as exc:
        raise AgentSpecImportError(f"not a valid Agent Spec document: {exc}") from None


def import_agentspec(component: Component, use_metadata: bool = True) -> AgentSpecImport:
    """Plait spec data for an Agent Spec Flow or Agent.

    With ``use_metadata`` the features a Plait export kept in ``metadata.plait`` are
    restored, so exporting a spec and importing it gives the spec back.
    """
    imported = spec_data(component)
    result = AgentSpecImport(normalized(imported.data), notes=imported.notes)
    patches = restore_patches(component)
    if use_metadata and patches is not None:
        result.data = normalized(apply_patches(result.data, patches))
        result.restored = True
        # What the metadata restores needs no note: the notes are about native reading.
        result.notes = []
    for ref, (child, child_patches) in imported.children.items():
        if use_metadata:
            child = apply_patches(normalized(child), child_patches)
        result.children[ref] = normalized(child)
    return result
