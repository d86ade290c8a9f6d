"""LangGraph's long-term store as the Agent Server serves it (``/store/...``).

The items are the caller's tenant's (``plait.engine.store.items.TenantStore``): the
same namespace in another tenant is another item, never seen. Runs of the
tenant's threads see the same items through ``get_store()`` in their nodes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from plait.engine.store import TenantStore
from plait.server.api.deps import Services, Svc
from plait.server.auth.keys import Tenant
from plait.server.http.problems import Problem

router = APIRouter(prefix="/store", tags=["store"])


def _label(label: str) -> str:
    if not label:
        raise ValueError("a namespace label cannot be empty")
    if "." in label:
        raise ValueError(f"namespace label {label!r} contains '.', which labels cannot")
    return label


Label = Annotated[str, AfterValidator(_label)]
#: A namespace: labels like ``["users", "u-1", "memories"]``.
Namespace = Annotated[list[Label], Field(max_length=64)]
Key = Annotated[str, Field(min_length=1, max_length=1024)]


class ItemPut(BaseModel):
    """Body of ``PUT /store/items``: ``ttl`` in minutes (``null``: never expires)."""

    model_config = ConfigDict(extra="ignore")

    namespace: Annotated[Namespace, Field(min_length=1)]
    key: Key
    value: dict[str, Any]
    index: Literal[False] | list[str] | None = None
    ttl: Annotated[float, Field(gt=0)] | None = None


class ItemDelete(BaseModel):
    """Body of ``DELETE /store/items``."""

    model_config = ConfigDict(extra="ignore")

    namespace: Annotated[Namespace, Field(min_length=1)]
    key: Key


class ItemSearch(BaseModel):
    """Body of ``POST /store/items/search``; ``query`` needs an embedding index (none is set)."""

    model_config = ConfigDict(extra="ignore")

    namespace_prefix: Namespace = Field(default_factory=list)
    filter: dict[str, Any] | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    offset: Annotated[int, Field(ge=0)] = 0
    query: str | None = None
    refresh_ttl: bool | None = None


class NamespaceList(BaseModel):
    """Body of ``POST /store/namespaces``: ``*`` in a prefix or suffix matches any label."""

    model_config = ConfigDict(extra="ignore")

    prefix: Namespace | None = None
    suffix: Namespace | None = None
    max_depth: Annotated[int, Field(ge=1)] | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 100
    offset: Annotated[int, Field(ge=0)] = 0


def tenant_store(services: Services, tenant: str) -> TenantStore:
    """The store as ``tenant`` sees it."""
    return TenantStore(services.items, tenant)


@router.put("/items", summary="Store or update an item", status_code=204)
async def put_item(body: ItemPut, services: Svc, tenant: Tenant) -> Response:
    """Write ``value`` at ``namespace`` / ``key`` (replacing what was there)."""
    await tenant_store(services, tenant).aput(
        tuple(body.namespace), body.key, body.value, index=body.index, ttl=body.ttl
    )
    return Response(status_code=204)


@router.get("/items", summary="Retrieve a single item")
async def get_item(
    services: Svc,
    tenant: Tenant,
    key: Annotated[str, Query(min_length=1)],
    namespace: Annotated[str, Query(description="labels joined by '.'")] = "",
    refresh_ttl: bool | None = None,
) -> dict[str, Any] | None:
    """The item, or ``null`` when there is none (as the Agent Server answers)."""
    labels = tuple(namespace.split(".")) if namespace else ()
    if not labels or not all(labels):
        raise Problem(
            422,
            f"namespace {namespace!r} is not a namespace: send its labels joined by '.', "
            "e.g. namespace=users.u-1",
            kind="request-invalid",
            title="Invalid request",
        )
    item = await tenant_store(services, tenant).aget(labels, key, refresh_ttl=refresh_ttl)
    return item.dict() if item is not None else None


@router.delete("/items", summary="Delete an item", status_code=204)
async def delete_item(body: ItemDelete, services: Svc, tenant: Tenant) -> Response:
    """Delete the item (no error when there is none)."""
    await tenant_store(services, tenant).adelete(tuple(body.namespace), body.key)
    return Response(status_code=204)


@router.post("/items/search", summary="Search items")
async def search_items(body: ItemSearch, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """Items under ``namespace_prefix`` whose values contain ``filter``, latest writes first."""
    found = await tenant_store(services, tenant).asearch(
        tuple(body.namespace_prefix),
        query=body.query,
        filter=body.filter,
        limit=body.limit,
        offset=body.offset,
        refresh_ttl=body.refresh_ttl,
    )
    return {"items": [item.dict() for item in found]}


@router.post("/namespaces", summary="List namespaces")
async def list_namespaces(body: NamespaceList, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """The namespaces that hold items, matching ``prefix`` and ``suffix``, cut at ``max_depth``."""
    found = await tenant_store(services, tenant).alist_namespaces(
        prefix=tuple(body.prefix) if body.prefix else None,
        suffix=tuple(body.suffix) if body.suffix else None,
        max_depth=body.max_depth,
        limit=body.limit,
        offset=body.offset,
    )
    return {"namespaces": [list(namespace) for namespace in found]}
