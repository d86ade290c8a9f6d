"""Plait's graph registry: upload YAML, list versions, fetch a version's YAML, diff two."""

from __future__ import annotations

import difflib
import functools
import json
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from plait.engine.spec import LoadedSpec, SpecIssue
from plait.server.api.deps import Services, Svc
from plait.server.auth.keys import Tenant
from plait.server.auth.store import DEFAULT_TENANT
from plait.server.graphs.rollouts import rollout_to_api, tenant_rollouts
from plait.server.graphs.versions import (
    GraphVersion,
    get_version,
    list_graphs,
    save_version,
    tenant_issues,
)
from plait.server.http.problems import Problem, not_found

router = APIRouter(prefix="/graphs", tags=["graphs"])

YAML_MEDIA_TYPE = "application/yaml"
_YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "text/plain")
_UPLOAD_FILE = "<upload>"

#: The request body of the endpoints that take a spec: raw YAML, or JSON ``{"yaml": ...}``.
_SPEC_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            YAML_MEDIA_TYPE: {"schema": {"type": "string"}},
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {"yaml": {"type": "string"}},
                    "required": ["yaml"],
                }
            },
        },
    }
}


def version_to_api(version: GraphVersion) -> dict[str, Any]:
    """One stored version, without its YAML."""
    return {
        "name": version.name,
        "version": version.version,
        "digest": version.digest,
        "assistant_id": version.assistant_id,
        "description": version.loaded.spec.metadata.description,
        "file": version.file,
        "created_at": version.created_at,
        "note": version.note,
        "draft": version.draft,
    }


@router.get("", summary="List graphs")
async def list_all(services: Svc, tenant: Tenant) -> list[dict[str, Any]]:
    """Every graph with its versions (oldest first), its newest version and its rollout."""
    graphs: dict[str, list[GraphVersion]] = {}
    for version in await list_graphs(
        services.pool, specs_dir=services.settings.specs_dir, tenant=tenant
    ):
        graphs.setdefault(version.name, []).append(version)
    rollouts = await tenant_rollouts(services.pool, tenant)
    return [
        {
            "name": name,
            "versions": [version.version for version in versions],
            "latest": version_to_api(versions[-1]),
            # Which versions new threads start on, when the tenant rolls one out.
            "rollout": rollout_to_api(name, rollouts[name]) if name in rollouts else None,
        }
        for name, versions in graphs.items()
    ]


@router.post(
    "",
    summary="Upload a spec (YAML)",
    status_code=201,
    openapi_extra=_SPEC_BODY,
)
async def upload(request: Request, services: Svc, tenant: Tenant) -> JSONResponse:
    """Validate and publish a spec version of the caller's tenant.

    The ``default`` tenant's newest version is also written into the specs
    folder; other tenants' versions live in the registry table only.

    Send the YAML as the body (``Content-Type: application/yaml``) or as JSON
    ``{"yaml": "...", "note": "...", "layout": {node_id: {x, y}}}``: ``note``
    is the change note kept with a new version, ``layout`` the node positions
    written to ``<name>.layout.json`` with it (the ``default`` tenant's folder
    only; ``layout_saved`` says whether it was). Invalid specs get a 422 whose
    ``errors`` are the issues ``plait validate --format json`` prints. The
    same version with other content is refused (409) and nothing is written;
    the same content again returns the stored version (200).
    """
    text = await _uploaded_text(request)
    note, layout = await _upload_extras(request)
    specs_dir = services.settings.specs_dir
    known = {version.ref for version in await list_graphs(services.pool, tenant=tenant)}
    version = await save_version(
        services.pool,
        text,
        file=_UPLOAD_FILE,
        specs_dir=specs_dir,
        tenant=tenant,
        tenant_modules=services.settings.tenant_modules,
        note=note,
        check=functools.partial(_check, services, keep=True),
    )
    fresh = version.ref not in known
    layout_saved = layout is not None and tenant == DEFAULT_TENANT
    if layout_saved:
        _write_layout(services, version.name, layout or {})
    return JSONResponse(
        json.loads(
            json.dumps({**version_to_api(version), "layout_saved": layout_saved}, default=str)
        ),
        status_code=201 if fresh else 200,
        headers={"Location": f"/graphs/{version.name}/versions/{version.version}"},
    )


@router.post(
    "/validate",
    summary="Validate a spec without saving it",
    openapi_extra=_SPEC_BODY,
)
async def validate(request: Request, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """Every issue of the spec, as ``plait validate --format json`` lists them (200 even if any).

    ``subgraph`` refs resolve against the registered versions. The editor calls
    this while you type.
    """
    text = await _uploaded_text(request)
    settings = services.settings
    stored = await list_graphs(services.pool, specs_dir=settings.specs_dir, tenant=tenant)
    spec, issues = await _check(services, text, _UPLOAD_FILE, stored, keep=True)
    if spec is not None:
        # What an upload would refuse too: code the tenant may not run, secrets it lacks.
        issues += await tenant_issues(
            services.pool,
            spec,
            issues,
            specs_dir=settings.specs_dir,
            tenant=tenant,
            tenant_modules=settings.tenant_modules,
        )
    return {"issues": [issue.to_dict() for issue in issues]}


async def _check(
    services: Services, text: str, file: str, stored: list[GraphVersion], *, keep: bool
) -> tuple[LoadedSpec | None, list[SpecIssue]]:
    """Read and lint ``text`` in the spec processes, never on this event loop."""
    return await services.specs.check(
        text, file, ((version.ref, version.yaml) for version in stored), keep=keep
    )


@router.get("/{name}/layout", summary="Node positions of a graph on the canvas")
async def get_layout(name: str, services: Svc, tenant: Tenant) -> dict[str, dict[str, float]]:
    """``{node_id: {x, y}}`` from ``<specs>/<name>.layout.json``; empty when none is saved."""
    await _versions_of(services, name, tenant)
    path = _layout_path(services, name)
    if not path.is_file():
        return {}
    return _check_layout(json.loads(path.read_text()))


@router.put("/{name}/layout", summary="Save node positions of a graph")
async def put_layout(
    name: str, request: Request, services: Svc, tenant: Tenant
) -> dict[str, dict[str, float]]:
    """Write ``{node_id: {x, y}}`` beside the spec; positions are not part of its digest.

    Layouts are files of the specs folder, the ``default`` tenant's: only it saves them.
    """
    if tenant != DEFAULT_TENANT:
        raise Problem(
            403,
            "layouts are saved in the server's specs folder, which belongs to the tenant "
            "'default'; other tenants cannot save them",
            kind="forbidden",
            title="Forbidden",
        )
    await _versions_of(services, name, tenant)
    try:
        layout = _check_layout(json.loads(await request.body()))
    except ValueError as exc:
        raise Problem(422, str(exc), kind="request-invalid") from None
    _write_layout(services, name, layout)
    return layout


@router.get("/{name}/versions", summary="Versions of a graph")
async def versions(name: str, services: Svc, tenant: Tenant) -> list[dict[str, Any]]:
    """Every stored version of ``name``, oldest first."""
    return [version_to_api(version) for version in await _versions_of(services, name, tenant)]


@router.get(
    "/{name}/versions/{version}",
    summary="The YAML of a version",
    response_class=PlainTextResponse,
    responses={200: {"content": {YAML_MEDIA_TYPE: {"schema": {"type": "string"}}}}},
)
async def version_yaml(name: str, version: str, services: Svc, tenant: Tenant) -> PlainTextResponse:
    """The spec text exactly as it was published."""
    found = await _version(services, name, version, tenant)
    return PlainTextResponse(found.yaml, media_type=YAML_MEDIA_TYPE)


@router.get("/{name}/diff", summary="Diff two versions")
async def diff(
    name: str,
    services: Svc,
    tenant: Tenant,
    from_version: Annotated[str, Query(alias="from")],
    to_version: Annotated[str, Query(alias="to")],
) -> dict[str, Any]:
    """A unified text diff of the YAML and which node ids were added, removed or changed."""
    old = await _version(services, name, from_version, tenant)
    new = await _version(services, name, to_version, tenant)
    unified = "".join(
        difflib.unified_diff(
            old.yaml.splitlines(keepends=True),
            new.yaml.splitlines(keepends=True),
            fromfile=f"{name}@{from_version}",
            tofile=f"{name}@{to_version}",
        )
    )
    old_nodes = _nodes(old)
    new_nodes = _nodes(new)
    return {
        "name": name,
        "from": from_version,
        "to": to_version,
        "unified": unified,
        "nodes": {
            "added": sorted(set(new_nodes) - set(old_nodes)),
            "removed": sorted(set(old_nodes) - set(new_nodes)),
            "changed": sorted(
                node
                for node in set(old_nodes) & set(new_nodes)
                if old_nodes[node] != new_nodes[node]
            ),
        },
    }


async def _uploaded_text(request: Request) -> str:
    content_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    body = await request.body()
    if content_type == "application/json":
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise Problem(422, f"the body is not JSON: {exc}", kind="request-invalid") from None
        if not isinstance(data, dict) or not isinstance(data.get("yaml"), str):
            raise Problem(
                422, 'a JSON upload must be {"yaml": "<the spec text>"}', kind="request-invalid"
            )
        return str(data["yaml"])
    if content_type in _YAML_TYPES or not content_type:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            raise Problem(422, "the spec is not UTF-8 text", kind="request-invalid") from None
    raise Problem(
        415,
        f'send the spec as {YAML_MEDIA_TYPE} or as JSON {{"yaml": ...}}, not {content_type}',
        kind="unsupported-media-type",
    )


async def _versions_of(services: Services, name: str, tenant: str) -> list[GraphVersion]:
    found = [
        version
        for version in await list_graphs(
            services.pool, specs_dir=services.settings.specs_dir, tenant=tenant
        )
        if version.name == name
    ]
    if not found:
        raise not_found(f"graph {name}", f"no graph named {name!r} is registered")
    return found


async def _version(services: Services, name: str, version: str, tenant: str) -> GraphVersion:
    found = await get_version(
        services.pool, name, version, specs_dir=services.settings.specs_dir, tenant=tenant
    )
    if found is None:
        known = [item.version for item in await _versions_of(services, name, tenant)]
        raise not_found(
            f"{name}@{version}", f"{name} has no version {version!r} (known: {', '.join(known)})"
        )
    return found


def _nodes(version: GraphVersion) -> dict[str, str]:
    """Each node id with its canonical JSON, to compare nodes across versions."""
    nodes = version.loaded.data.get("spec", {}).get("nodes", {}) or {}
    return {
        str(node): json.dumps(body, sort_keys=True, default=str) for node, body in nodes.items()
    }


#: The longest change note kept with a version.
_MAX_NOTE = 2000


async def _upload_extras(request: Request) -> tuple[str | None, dict[str, dict[str, float]] | None]:
    """The change note and layout of a JSON upload (``None`` each when absent)."""
    if request.headers.get("content-type", "").partition(";")[0].strip().lower() != (
        "application/json"
    ):
        return None, None
    data = json.loads(await request.body())  # _uploaded_text checked it is an object
    note = data.get("note")
    if note is not None and not isinstance(note, str):
        raise Problem(422, "`note` must be text (the change note)", kind="request-invalid")
    if note is not None and len(note) > _MAX_NOTE:
        raise Problem(
            422,
            f"the change note has {len(note)} characters; keep it under {_MAX_NOTE}",
            kind="request-invalid",
        )
    layout = data.get("layout")
    try:
        checked = None if layout is None else _check_layout(layout)
    except ValueError as exc:
        raise Problem(422, f"layout: {exc}", kind="request-invalid") from None
    return (note.strip() or None) if note is not None else None, checked


def _write_layout(services: Services, name: str, layout: dict[str, dict[str, float]]) -> None:
    path = _layout_path(services, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(layout, indent=2, sort_keys=True) + "\n")


def _layout_path(services: Services, name: str) -> Path:
    # Graph names are `[a-z0-9-]` (the spec schema), so this stays in the folder.
    return services.settings.specs_dir / f"{name}.layout.json"


def _check_layout(data: Any) -> dict[str, dict[str, float]]:
    """``data`` as ``{node_id: {x, y}}`` with numbers, or ``ValueError`` naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("a layout is a JSON object {node_id: {x, y}}")
    layout: dict[str, dict[str, float]] = {}
    for node, position in data.items():
        if not (
            isinstance(position, dict)
            and all(isinstance(position.get(axis), int | float) for axis in ("x", "y"))
        ):
            raise ValueError(f"the position of {node!r} must be {{x: number, y: number}}")
        layout[str(node)] = {"x": float(position["x"]), "y": float(position["y"])}
    return layout
