"""Assistants: every graph at every version, read-only (``/assistants/...``).

An assistant id is the uuid5 of ``name@version``; ``name@version`` and the
bare graph name (its newest version) work as ids too. Assistants are made by
uploading specs (``POST /graphs``), not through ``POST /assistants``.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field, TypeAdapter

from plait.server.api.deps import Services, Svc
from plait.server.auth.keys import Tenant
from plait.server.graphs.versions import GraphVersion, by_assistant_id, list_graphs
from plait.server.http.problems import Problem, not_found

router = APIRouter(prefix="/assistants", tags=["assistants"])


class AssistantSearch(BaseModel):
    """Body of ``POST /assistants/search``."""

    metadata: dict[str, Any] | None = None
    graph_id: str | None = None
    name: str | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0)
    sort_by: Literal["assistant_id", "graph_id", "name", "created_at", "updated_at"] | None = None
    sort_order: Literal["asc", "desc"] | None = None
    select: list[str] | None = None


class VersionSearch(BaseModel):
    """Body of ``POST /assistants/{id}/versions``."""

    metadata: dict[str, Any] | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0)


def assistant_to_api(graph: GraphVersion, ordinal: int) -> dict[str, Any]:
    """The protocol's Assistant for one graph version; ``ordinal`` is its 1-based version number."""
    metadata = graph.loaded.spec.metadata
    return {
        "assistant_id": graph.assistant_id,
        "graph_id": graph.name,
        "config": {},
        "context": {},
        "metadata": {
            **metadata.labels,
            "plait_version": graph.version,
            "plait_digest": graph.digest,
            **({"plait_draft": True} if graph.draft else {}),
        },
        "version": ordinal,
        "name": graph.name,
        "description": metadata.description,
        "created_at": graph.created_at,
        # A published version never changes.
        "updated_at": graph.created_at,
    }


async def all_assistants(services: Services, tenant: str) -> list[dict[str, Any]]:
    """Every version ``tenant`` sees as an assistant, by graph name then version."""
    versions = await list_graphs(
        services.pool, specs_dir=services.settings.specs_dir, tenant=tenant
    )
    ordinals: dict[str, int] = {}
    found = []
    for version in versions:  # ordered by name, then SemVer precedence
        ordinals[version.name] = ordinals.get(version.name, 0) + 1
        found.append(assistant_to_api(version, ordinals[version.name]))
    return found


async def resolve_assistant(services: Services, assistant_id: str, tenant: str) -> GraphVersion:
    """The graph version an assistant id names for ``tenant``, or a 404 problem."""
    found = await by_assistant_id(
        services.pool, assistant_id, specs_dir=services.settings.specs_dir, tenant=tenant
    )
    if found is None:
        raise not_found(
            f"assistant {assistant_id}",
            f"assistant {assistant_id!r} not found; use a graph name, name@version, "
            "or an assistant_id from POST /assistants/search",
        )
    return found


@router.post("/search", summary="Search assistants (graph versions)")
async def search_assistants(
    body: AssistantSearch, services: Svc, response: Response, tenant: Tenant
) -> list[dict[str, Any]]:
    """Every graph version matching the filters; ``X-Pagination-Next`` tells the next offset."""
    found = [
        item
        for item in await all_assistants(services, tenant)
        if (body.graph_id is None or item["graph_id"] == body.graph_id)
        and (body.name is None or body.name.lower() in item["name"].lower())
        and _contains(item["metadata"], body.metadata)
    ]
    if body.sort_by is not None:
        sort_key: str = body.sort_by
        found.sort(key=lambda item: item[sort_key], reverse=body.sort_order != "asc")
    page = found[body.offset : body.offset + body.limit]
    if body.offset + body.limit < len(found):
        response.headers["X-Pagination-Next"] = str(body.offset + body.limit)
    return [_select(item, body.select) for item in page]


@router.post("/count", summary="Count assistants")
async def count_assistants(body: AssistantSearch, services: Svc, tenant: Tenant) -> int:
    """How many graph versions match the filters."""
    return sum(
        1
        for item in await all_assistants(services, tenant)
        if (body.graph_id is None or item["graph_id"] == body.graph_id)
        and (body.name is None or body.name.lower() in item["name"].lower())
        and _contains(item["metadata"], body.metadata)
    )


@router.get("/{assistant_id}", summary="Get an assistant")
async def get_assistant(assistant_id: str, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """One graph version as an assistant."""
    graph = await resolve_assistant(services, assistant_id, tenant)
    if graph.draft:  # not published: no place among the graph's versions
        return assistant_to_api(graph, 0)
    for item in await all_assistants(services, tenant):
        if item["assistant_id"] == graph.assistant_id:
            return item
    raise not_found(f"assistant {assistant_id}")


@router.get("/{assistant_id}/graph", summary="The assistant's graph (nodes and edges)")
async def get_assistant_graph(
    assistant_id: str, services: Svc, tenant: Tenant, xray: int | bool = False
) -> dict[str, Any]:
    """LangGraph's drawable graph as JSON: ``{nodes, edges}``."""
    version = await resolve_assistant(services, assistant_id, tenant)
    graph = await _compiled(services, version, tenant)
    drawable: dict[str, Any] = graph.get_graph(xray=xray).to_json()
    return drawable


@router.get("/{assistant_id}/schemas", summary="The assistant's JSON schemas")
async def get_assistant_schemas(assistant_id: str, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """Input, output, state, config and context JSON schemas of the graph."""
    version = await resolve_assistant(services, assistant_id, tenant)
    graph = await _compiled(services, version, tenant)
    return {
        "graph_id": version.name,
        "input_schema": graph.get_input_jsonschema(),
        "output_schema": graph.get_output_jsonschema(),
        "state_schema": _state_schema(graph),
        # Plait graphs take no configurable fields (LangGraph deprecated config schemas).
        "config_schema": None,
        "context_schema": graph.get_context_jsonschema(),
    }


@router.post("/{assistant_id}/versions", summary="Versions of the assistant's graph")
async def list_assistant_versions(
    assistant_id: str, body: VersionSearch, services: Svc, tenant: Tenant
) -> list[dict[str, Any]]:
    """Every version of the graph, newest first."""
    graph = await resolve_assistant(services, assistant_id, tenant)
    versions = [
        item
        for item in await all_assistants(services, tenant)
        if item["graph_id"] == graph.name and _contains(item["metadata"], body.metadata)
    ]
    versions.reverse()
    return versions[body.offset : body.offset + body.limit]


@router.post("", summary="Create an assistant (not supported)", status_code=201)
async def create_assistant() -> None:
    """Plait's assistants are graph versions: publish one with ``POST /graphs``."""
    raise Problem(
        405,
        "assistants are graph versions in Plait: upload a spec with POST /graphs instead",
        kind="not-supported",
        title="Not supported",
    )


async def _compiled(services: Services, version: GraphVersion, tenant: str) -> Any:
    return (await services.graphs.get(version.name, version.version, tenant)).graph


def _state_schema(graph: Any) -> dict[str, Any] | None:
    """The state's JSON schema, or None when a field has none (the protocol allows that)."""
    try:
        schema: dict[str, Any] = TypeAdapter(graph.builder.state_schema).json_schema()
    except Exception:
        return None
    return schema


def _contains(metadata: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return not wanted or all(metadata.get(key) == value for key, value in wanted.items())


def _select(item: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
    return {key: item[key] for key in fields if key in item} if fields else item
