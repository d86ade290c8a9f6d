"""The graph registry: the specs folder <-> table ``plait_graph_versions``.

Every graph at every version is stored in the table, so any worker compiles a
run's spec from the database, never from a file it may not have. The folder
is what people edit and review in git: it holds the *newest* version of each
graph, one file per graph (the file that already defines the graph, or
``<name>.yaml`` for a new one). Uploading an older version than the newest
stores it in the table only; git keeps the history of the files.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from plait.engine.lru import LruCache
from plait.engine.spec import (
    SPEC_SUFFIXES,
    LoadedSpec,
    SpecError,
    SpecIssue,
    SpecRegistry,
    check_text,
    decode_file,
    has_errors,
    lint,
    parse_spec,
    read_spec,
    version_key,
)
from plait.engine.store import Pool
from plait.server.auth.code_policy import folder_modules, refused_code
from plait.server.auth.mcp_trust import untrusted_issues
from plait.server.auth.store import DEFAULT_TENANT
from plait.server.auth.tenant_secrets import SecretSources
from plait.server.graphs import catalog

#: Namespace of assistant ids: uuid5(ASSISTANT_NAMESPACE, "name@version").
ASSISTANT_NAMESPACE = uuid.UUID("6f1c1a52-3b8e-5d0e-9a57-706c61697400")

_COLUMNS = "name, version, digest, yaml, assistant_id, file, created_at, tenant_id, note, draft"
#: A version's row without its YAML: what choosing versions needs.
_KEYS = "name, version, digest, assistant_id, file, created_at, tenant_id, note, draft"
#: YAML of versions read before, by the row's identity. A stored version never
#: changes (a new version is a new row), so a lookup need not bring every
#: version's text over the wire to pick one (``latest`` reads all of a graph's).
_TEXTS: LruCache[tuple[str, str, str, datetime], str] = LruCache(1024)
#: Stored specs up to this size are read on the event loop (a few ms at most).
INLINE_PARSE_CHARS = 32_768


@dataclass(frozen=True)
class GraphVersion:
    """One stored version of a graph: an assistant of the Agent Server protocol."""

    name: str
    version: str
    digest: str
    yaml: str
    created_at: datetime
    assistant_id: str
    loaded: LoadedSpec
    file: str | None = None
    #: Who published it; ``default``'s versions (the specs folder's) every tenant may run.
    tenant: str = DEFAULT_TENANT
    #: The change note saved with it (``None``: none given).
    note: str | None = None
    #: An unsaved text someone ran (:func:`save_draft`), not a published version.
    draft: bool = False

    @property
    def ref(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"


class VersionConflict(Exception):
    """``name@version`` is already stored with other content (another digest)."""

    def __init__(self, name: str, version: str, stored: str, given: str) -> None:
        self.name, self.version, self.stored, self.given = name, version, stored, given
        super().__init__(
            f"{name}@{version} is already registered with other content "
            f"(digest {stored[:19]}, this one {given[:19]}); bump metadata.version "
            "to publish a change"
        )


def assistant_id(name: str, version: str, tenant: str = DEFAULT_TENANT) -> str:
    """The stable assistant id of ``name@version`` (a uuid5; another tenant's: of ``t/name@v``)."""
    ref = f"{name}@{version}" if tenant == DEFAULT_TENANT else f"{tenant}/{name}@{version}"
    return str(uuid.uuid5(ASSISTANT_NAMESPACE, ref))


def registry_from(versions: Iterable[GraphVersion]) -> SpecRegistry:
    """A spec registry of ``versions``, so ``subgraph`` refs between them resolve."""
    return SpecRegistry(version.loaded for version in versions)


async def sync_folder(pool: Pool, specs_dir: Path) -> list[SpecIssue]:
    """Store every valid spec of ``specs_dir`` that is not stored yet; return the problems.

    Invalid specs are reported, not stored. A file whose ``name@version`` is
    already stored with another digest is reported (code ``version-conflict``)
    and the stored version is kept: a published version never changes.
    Subgraph refs resolve against the stored versions and the folder's specs.
    """
    issues, found = await asyncio.to_thread(_read_folder, specs_dir)
    stored = {version.ref: version for version in await list_graphs(pool, specs_dir=specs_dir)}
    registry = registry_from(stored.values())
    first: dict[str, LoadedSpec] = {}
    for spec in found:
        other = first.setdefault(spec.ref, spec)
        if other is not spec:
            issues.append(
                _issue(spec, f"`{spec.ref}` is also defined in {other.file}", "duplicate-spec")
            )
        else:
            registry.add(spec)
    for spec in first.values():
        previous = stored.get(spec.ref)
        if previous is not None and previous.digest != spec.digest:
            issues.append(_conflict_issue(spec, previous))
            continue
        problems = lint(spec, registry)
        issues.extend(problems)
        if has_errors(problems) or previous is not None:
            continue
        await _insert(pool, spec, _relative(spec.path, specs_dir))
    return issues


#: Reads and lints spec text against stored versions: the spec (``None`` when it
#: does not load) and its issues. The server's runs in worker processes
#: (server/graphs/spec_checks.py); :func:`check_here` in this one.
SpecCheck = Callable[
    [str, str, list["GraphVersion"]], Awaitable[tuple[LoadedSpec | None, list[SpecIssue]]]
]


async def check_here(
    text: str, file: str, stored: list[GraphVersion]
) -> tuple[LoadedSpec | None, list[SpecIssue]]:
    """:data:`SpecCheck` in this process (tests, tools)."""
    return check_text(text, file, registry_from(stored))


async def checked_spec(
    pool: Pool,
    text: str,
    *,
    file: str,
    specs_dir: Path | None,
    tenant: str,
    tenant_modules: frozenset[str],
    check: SpecCheck,
) -> tuple[LoadedSpec, list[GraphVersion]]:
    """``text`` validated as an upload is, and the versions ``tenant`` sees.

    ``check`` reads and lints it (the server's runs off its event loop). Raises
    :class:`SpecError` with every issue (the same as ``plait validate``).
    Other tenants' specs may name only the code the operator allows: the specs
    folder's modules and ``tenant_modules`` (:mod:`plait.server.auth.code_policy`).
    Every secret it names must be one the tenant may read (``secret-not-granted``
    otherwise).
    """
    stored = await list_graphs(pool, specs_dir=specs_dir, tenant=tenant)
    spec, issues = await check(text, file, stored)
    if spec is None:
        raise SpecError(issues)
    issues += await tenant_issues(
        pool, spec, issues, specs_dir=specs_dir, tenant=tenant, tenant_modules=tenant_modules
    )
    if has_errors(issues):
        raise SpecError(issues)
    return spec, stored


async def tenant_issues(
    pool: Pool,
    spec: LoadedSpec,
    issues: Sequence[SpecIssue],
    *,
    specs_dir: Path | None,
    tenant: str,
    tenant_modules: frozenset[str],
) -> list[SpecIssue]:
    """What ``tenant`` may not do in an otherwise valid spec (none when ``issues`` has errors).

    Code the operator did not allow (:mod:`plait.server.auth.code_policy`, tenants other
    than ``default``), then secrets the tenant was not granted
    (:mod:`plait.server.auth.tenant_secrets`); and a warning at each MCP server whose
    tools' descriptions its models will not see (:mod:`plait.server.auth.mcp_trust`).
    """
    if has_errors(issues):
        return []
    if tenant != DEFAULT_TENANT:
        refused = refused_code(spec, folder_modules(specs_dir) | tenant_modules)
        if refused:
            return refused
    ungranted = await SecretSources.from_env(pool).ungranted(spec, tenant)
    return ungranted + await untrusted_issues(pool, spec, tenant)


async def save_version(
    pool: Pool,
    text: str,
    *,
    file: str = "<upload>",
    specs_dir: Path | None = None,
    tenant: str = DEFAULT_TENANT,
    tenant_modules: frozenset[str] = frozenset(),
    note: str | None = None,
    check: SpecCheck = check_here,
) -> GraphVersion:
    """Validate and store a spec given as YAML text; write it into ``specs_dir`` when newest.

    Raises :class:`SpecError` when it does not validate (:func:`checked_spec`, with ``check``),
    and :class:`VersionConflict` when its ``name@version`` is stored with
    another digest. Saving the same content again returns the stored version
    unchanged. The file is written only for a version newer than every stored
    version of the graph (see module doc), and only for the ``default``
    tenant: the folder is its catalogue; other tenants' versions live in the
    table only. ``note`` is the change note kept with a new version.
    """
    spec, stored = await checked_spec(
        pool,
        text,
        file=file,
        specs_dir=specs_dir,
        tenant=tenant,
        tenant_modules=tenant_modules,
        check=check,
    )
    existing = next((v for v in stored if v.ref == spec.ref), None)
    if existing is not None:
        if existing.digest != spec.digest:
            raise VersionConflict(spec.name, spec.version, existing.digest, spec.digest)
        return existing
    newest = max((v.version for v in stored if v.name == spec.name), key=version_key, default=None)
    target: Path | None = None
    if (
        specs_dir is not None
        and tenant == DEFAULT_TENANT
        and (newest is None or version_key(spec.version) > version_key(newest))
    ):
        target = await asyncio.to_thread(_file_of, specs_dir, spec.name) or (
            specs_dir / f"{spec.name}.yaml"
        )
    relative = _relative(target, specs_dir) if target is not None else None
    inserted = await _insert(pool, spec, relative, tenant, note=note)
    if inserted is None:  # a concurrent upload of the same version won
        winner = await get_version(
            pool, spec.name, spec.version, specs_dir=specs_dir, tenant=tenant
        )
        if winner is None or winner.digest != spec.digest:
            stored_digest = winner.digest if winner is not None else "?"
            raise VersionConflict(spec.name, spec.version, stored_digest, spec.digest)
        return winner
    if target is not None:
        await asyncio.to_thread(_write_atomically, target, text)
    return _version(inserted, specs_dir)


def draft_version(version: str, digest: str) -> str:
    """The version a draft is stored under: ``1.2.0`` -> ``1.2.0+draft.<12 hex of digest>``.

    SemVer build metadata: the draft sorts with its base version and never
    collides with a published one (or with another draft's text).
    """
    return f"{version.split('+', 1)[0]}+draft.{digest.removeprefix('sha256:')[:12]}"


async def save_draft(
    pool: Pool,
    text: str,
    *,
    file: str = "<draft>",
    specs_dir: Path | None = None,
    tenant: str = DEFAULT_TENANT,
    tenant_modules: frozenset[str] = frozenset(),
    check: SpecCheck = check_here,
) -> tuple[GraphVersion, bool]:
    """Store an unsaved spec text to run it, without publishing a version; return it and
    whether it is new.

    Validated exactly as :func:`save_version` validates an upload. The draft
    is ``name@<version>+draft.<digest>`` (:func:`draft_version`): runs,
    resumes and workers find it as any stored version, but it is never listed,
    never the newest, never written into the folder, and only ``tenant`` sees it.
    """
    spec, _stored = await checked_spec(
        pool,
        text,
        file=file,
        specs_dir=specs_dir,
        tenant=tenant,
        tenant_modules=tenant_modules,
        check=check,
    )
    version = draft_version(spec.version, spec.digest)
    inserted = await _insert(pool, spec, None, tenant, version=version, draft=True)
    if inserted is not None:
        return _version(inserted, specs_dir), True
    found = await get_version(pool, spec.name, version, specs_dir=specs_dir, tenant=tenant)
    if found is None or not found.draft:
        raise LookupError(f"draft {spec.name}@{version} was stored and is gone")
    return found, False


async def get_version(
    pool: Pool,
    name: str,
    version: str,
    *,
    specs_dir: Path | None = None,
    tenant: str = DEFAULT_TENANT,
) -> GraphVersion | None:
    """``name@version`` as ``tenant`` sees it, or ``None``.

    With ``specs_dir``, the spec's ``base_dir`` is that folder, so python
    ``module:function`` refs import from it as they do for the CLI.
    """
    rows = await _select(pool, "name = %s AND version = %s", (name, version), tenant, drafts=True)
    return await _one(pool, rows, specs_dir)


async def latest(
    pool: Pool, name: str, *, specs_dir: Path | None = None, tenant: str = DEFAULT_TENANT
) -> GraphVersion | None:
    """The newest version of graph ``name`` (SemVer precedence) ``tenant`` sees, or ``None``."""
    rows = await _select(pool, "name = %s", (name,), tenant)
    if not rows:
        return None
    newest = max(rows, key=lambda row: version_key(row["version"]))
    return await _one(pool, [newest], specs_dir)


def is_assistant_uuid(text: str) -> bool:
    """Whether ``text`` is an assistant id (a UUID) rather than a graph name or ref."""
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


async def by_assistant_id(
    pool: Pool, assistant: str, *, specs_dir: Path | None = None, tenant: str = DEFAULT_TENANT
) -> GraphVersion | None:
    """The version an assistant id names: a uuid, ``name@version``, or a graph name (newest)."""
    if is_assistant_uuid(assistant):
        rows = await _select(pool, "assistant_id = %s", (assistant.lower(),), tenant, drafts=True)
        return await _one(pool, rows, specs_dir)
    name, at, version = assistant.partition("@")
    if at:
        return await get_version(pool, name, version, specs_dir=specs_dir, tenant=tenant)
    return await latest(pool, assistant, specs_dir=specs_dir, tenant=tenant)


async def list_graphs(
    pool: Pool, *, specs_dir: Path | None = None, tenant: str = DEFAULT_TENANT
) -> list[GraphVersion]:
    """Every version ``tenant`` sees (its own and ``default``'s), by name then SemVer precedence."""
    rows = await _select(pool, "true", (), tenant)
    rows.sort(key=lambda row: (row["name"], version_key(row["version"])))
    return await _versions(pool, rows, specs_dir)


# --------------------------------------------------------------------------- helpers


async def _select(
    pool: Pool, where: str, params: tuple[Any, ...], tenant: str, *, drafts: bool = False
) -> list[dict[str, Any]]:
    """Rows (without their YAML) matching ``where`` that ``tenant`` sees: its own, then
    ``default``'s. A tenant's own ``name@version`` hides ``default``'s of the same ref.
    With ``drafts``, the tenant's own drafts too (a lookup of one version or assistant).
    Kept until the catalog changes (:mod:`plait.server.graphs.catalog`).
    """

    async def read() -> tuple[dict[str, Any], ...]:
        async with pool.connection() as conn:
            cursor = await conn.execute(
                f"""
                SELECT DISTINCT ON (name, version) {_KEYS} FROM plait_graph_versions
                WHERE ({where}) AND tenant_id IN (%s, %s)
                  AND (NOT draft OR (%s AND tenant_id = %s))
                ORDER BY name, version, tenant_id = %s DESC
                """.encode(),
                (*params, tenant, DEFAULT_TENANT, drafts, tenant, tenant),
            )
            return tuple(await cursor.fetchall())

    # A list of its own for each caller (they sort it); the rows are only read.
    return list(await catalog.cached(pool, ("versions", where, params, tenant, drafts), read))


async def _insert(
    pool: Pool,
    spec: LoadedSpec,
    file: str | None,
    tenant: str = DEFAULT_TENANT,
    *,
    note: str | None = None,
    version: str | None = None,
    draft: bool = False,
) -> dict[str, Any] | None:
    """Insert ``spec`` for ``tenant`` (as ``version``, default its own); ``None`` when that
    ``name@version`` is already stored."""
    stored_as = version or spec.version
    async with catalog.writing(pool) as conn:
        cursor = await conn.execute(
            f"""
            INSERT INTO plait_graph_versions
                (name, version, digest, yaml, assistant_id, file, tenant_id, note, draft)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
            ON CONFLICT (tenant_id, name, version) DO NOTHING
            RETURNING {_COLUMNS}
            """.encode(),
            (
                spec.name,
                stored_as,
                spec.digest,
                spec.text,
                assistant_id(spec.name, stored_as, tenant),
                file,
                tenant,
                note,
                draft,
            ),
        )
        return await cursor.fetchone()


async def _versions(
    pool: Pool, rows: list[dict[str, Any]], specs_dir: Path | None
) -> list[GraphVersion]:
    """``rows`` of :func:`_select` as versions: their YAML from the cache, or one query."""
    keys = [_text_key(row) for row in rows]
    texts = {key: _TEXTS.get(key) for key in keys}
    missing = [row for row, key in zip(rows, keys, strict=True) if texts[key] is None]
    if missing:
        async with pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT tenant_id, name, version, created_at, yaml FROM plait_graph_versions "
                "WHERE (tenant_id, name, version) IN "
                "(SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]))",
                tuple(
                    [row[column] for row in missing] for column in ("tenant_id", "name", "version")
                ),
            )
            for found in await cursor.fetchall():
                texts[_text_key(found)] = found["yaml"]
                _TEXTS.put(_text_key(found), found["yaml"])
    found_rows = [
        {**row, "yaml": text}
        for row, key in zip(rows, keys, strict=True)
        if (text := texts[key]) is not None  # None: deleted meanwhile (only by hand)
    ]
    large = [row for row in found_rows if len(row["yaml"]) > INLINE_PARSE_CHARS]
    if large:
        # A large stored spec can take a few hundred ms to read the first time
        # (a tenant chooses its size, up to the YAML limit): read it in a thread,
        # so the loop keeps serving meanwhile; later calls find it cached.
        return await asyncio.to_thread(lambda: [_version(row, specs_dir) for row in found_rows])
    return [_version(row, specs_dir) for row in found_rows]


async def _one(
    pool: Pool, rows: list[dict[str, Any]], specs_dir: Path | None
) -> GraphVersion | None:
    """The first of ``rows`` as a version (``None``: no rows)."""
    found = await _versions(pool, rows[:1], specs_dir)
    return found[0] if found else None


def _text_key(row: dict[str, Any]) -> tuple[str, str, str, datetime]:
    return (row["tenant_id"], row["name"], row["version"], row["created_at"])


def _version(row: dict[str, Any], specs_dir: Path | None) -> GraphVersion:
    path = None
    if specs_dir is not None:
        path = specs_dir / (row["file"] or f"{row['name']}.yaml")
    return GraphVersion(
        name=row["name"],
        version=row["version"],
        digest=row["digest"],
        yaml=row["yaml"],
        created_at=row["created_at"],
        assistant_id=row["assistant_id"],
        file=row["file"],
        tenant=row["tenant_id"],
        note=row.get("note"),
        draft=bool(row.get("draft")),
        loaded=_parse(row["yaml"], f"{row['name']}@{row['version']}", path),
    )


@functools.lru_cache(maxsize=512)
def _parse(text: str, file: str, path: Path | None) -> LoadedSpec:
    """Parsing is the slow part of reading a version: cache it (the text is immutable)."""
    return parse_spec(text, file, path)


def _read_folder(specs_dir: Path) -> tuple[list[SpecIssue], list[LoadedSpec]]:
    """The folder's specs that load, and the issues of those that do not (blocking I/O)."""
    issues: list[SpecIssue] = []
    found: list[LoadedSpec] = []
    for file in _spec_files(specs_dir):
        try:
            spec, warnings = read_spec(decode_file(file), str(file), file)
        except SpecError as exc:
            issues.extend(exc.issues)
            continue
        issues.extend(warnings)
        found.append(spec)
    return issues, found


def _spec_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix in SPEC_SUFFIXES and p.is_file())


_NAME_LINE = re.compile(r"^\s*name:\s*['\"]?([a-z0-9-]+)['\"]?\s*(#.*)?$", re.MULTILINE)


def _file_of(specs_dir: Path, name: str) -> Path | None:
    """The file in ``specs_dir`` that defines graph ``name``, if any."""
    for file in _spec_files(specs_dir):
        try:
            if parse_spec(decode_file(file), str(file), file).name == name:
                return file
        except SpecError:
            # A broken file may still be the graph's (being edited): match its name line.
            match = _NAME_LINE.search(file.read_text(encoding="utf-8", errors="replace"))
            if match and match[1] == name:
                return file
    return None


def _relative(path: Path | None, specs_dir: Path | None) -> str | None:
    if path is None or specs_dir is None:
        return None
    try:
        return str(path.resolve().relative_to(specs_dir.resolve()))
    except ValueError:
        return None


def _write_atomically(target: Path, text: str) -> None:
    """Replace ``target`` in one step, so a reader never sees half a spec."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _issue(spec: LoadedSpec, message: str, code: str, fix: str | None = None) -> SpecIssue:
    position = spec.source_map.locate("/metadata/version")
    return SpecIssue(
        file=spec.file,
        line=position.line,
        column=position.column,
        pointer="/metadata/version",
        message=message,
        fix=fix
        or "bump `metadata.version` (or rename the graph): a name and version identify one spec",
        code=code,
    )


def _conflict_issue(spec: LoadedSpec, stored: GraphVersion) -> SpecIssue:
    return _issue(
        spec,
        f"`{spec.ref}` is already registered with other content (stored digest "
        f"{stored.digest[:19]}, file digest {spec.digest[:19]}); the stored version is kept",
        "version-conflict",
        "bump `metadata.version` to publish a change; a published version never changes",
    )
