"""The Agent Card of a served graph: name, version, skills, and where to reach it."""

from __future__ import annotations

from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_1_0, TransportProtocol

from plait.engine.spec import GraphSpec

#: Where every served graph lives: ``/a2a/<graph name>/``.
PREFIX = "/a2a"
#: The HTTP+JSON binding of a served graph, below its JSON-RPC endpoint.
REST_PATH = "rest"


def is_exposed(spec: GraphSpec) -> bool:
    """Whether the spec asks to be served over A2A (``spec.a2a.expose``)."""
    exposure = spec.spec.a2a
    return exposure is not None and exposure.expose


def agent_url(base_url: str, graph: str) -> str:
    """The JSON-RPC endpoint of ``graph`` on the server at ``base_url``."""
    return f"{base_url.rstrip('/')}{PREFIX}/{graph}/"


def rest_url(url: str) -> str:
    """The HTTP+JSON binding's base URL of the graph whose JSON-RPC endpoint is ``url``."""
    return f"{url.rstrip('/')}/{REST_PATH}"


def _interfaces(url: str) -> list[AgentInterface]:
    """JSON-RPC at ``url`` and HTTP+JSON below it, each in protocol 1.0 and 0.3.

    The 0.3 interfaces are the same endpoints (the SDK's compatibility layer
    answers 0.3 requests there); listing them lets a 0.3 client, which reads
    the card's legacy fields, find them.
    """
    bindings = ((TransportProtocol.JSONRPC, url), (TransportProtocol.HTTP_JSON, rest_url(url)))
    return [
        AgentInterface(url=where, protocol_binding=binding, protocol_version=version)
        for version in (PROTOCOL_VERSION_1_0, PROTOCOL_VERSION_0_3)
        for binding, where in bindings
    ]


def agent_card(spec: GraphSpec, url: str) -> AgentCard:
    """The card of ``spec`` served at ``url`` (JSON-RPC and HTTP+JSON, 1.0 and 0.3, streaming)."""
    meta = spec.metadata
    exposure = spec.spec.a2a
    description = (
        (exposure.description if exposure is not None else None)
        or meta.description
        or f"The Plait graph {meta.name}."
    )
    skills = [
        AgentSkill(
            id=skill.id,
            name=skill.name,
            description=skill.description,
            tags=skill.tags,
            examples=skill.examples,
        )
        for skill in (exposure.skills if exposure is not None else [])
    ] or [AgentSkill(id=meta.name, name=meta.name, description=description, tags=["plait"])]
    return AgentCard(
        name=meta.name,
        description=description,
        version=meta.version,
        supported_interfaces=_interfaces(url),
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["application/json", "text/plain"],
        skills=skills,
    )
