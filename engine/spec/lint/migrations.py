"""A spec's ``migrations`` against both states: the old version's (from the registry:
the specs loaded beside it, or the versions stored on a server) and this one's."""

from __future__ import annotations

from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.expressions import ExpressionError, cel_variables, state_fields_read
from plait.engine.spec.lint.context import LintContext, did_you_mean, known, pointer
from plait.engine.spec.models import FieldType, GraphBody, Migration
from plait.engine.spec.semver import in_range

#: Types a value of the key's type may be stored as without a conversion.
_WIDER: dict[str, frozenset[str]] = {"integer": frozenset({"number"})}


def check_migrations(ctx: LintContext) -> None:
    """Each migration reads only what its old versions' state has, writes only what this
    state has, keeps types where the value is copied, and renames nodes to nodes that exist."""
    name, version = ctx.loaded.name, ctx.loaded.version
    for index, migration in enumerate(ctx.body.migrations):
        where = pointer("spec", "migrations", index)
        if in_range(version, migration.from_):
            ctx.report(
                pointer("spec", "migrations", index, "from"),
                "migration-from-itself",
                f"migration `from: {migration.from_}` includes this version ({version})",
                "name only earlier versions, e.g. `<" + version + "`",
            )
            continue
        olds = [
            ctx.registry.get(name, other)
            for other in ctx.registry.versions(name)
            if other != version and in_range(other, migration.from_)
        ]
        if not olds:
            ctx.report(
                pointer("spec", "migrations", index, "from"),
                "migration-old-version-unknown",
                f"no version of {name} matching `{migration.from_}` is loaded, so this migration "
                "is not checked against the old state",
                "validate it beside the older spec file (`plait validate new.yaml old.yaml`, the "
                "old one e.g. from `git show`), or upload it to a server that stores the older "
                "version",
                severity="warning",
            )
        _check_writes(ctx, migration, where, olds)
        _check_drops(ctx, migration, where, olds)
        _check_nodes(ctx, migration, where, olds)


def _check_writes(
    ctx: LintContext, migration: Migration, where: str, olds: list[LoadedSpec]
) -> None:
    for field, source in migration.state.items():
        at = f"{where}/state/{field}"
        if field not in ctx.body.state:
            ctx.report(
                at,
                "migration-unknown-field",
                f"the migration writes `{field}`, which this version's spec.state does not declare",
                f"write a field of this version.{did_you_mean(field, ctx.body.state)} "
                f"({known(ctx.body.state)})",
            )
        try:
            roots = cel_variables(source)
        except ExpressionError as exc:
            ctx.report(
                at,
                "cel-syntax",
                f"CEL does not parse: {exc.message}",
                "fix the expression; in YAML, quote it when it contains `: ` or ` #`",
            )
            continue
        for root in roots:
            if root != "state":
                ctx.report(
                    at,
                    "cel-unknown-root",
                    f"`{root}` is not a variable in a migration (it reads the old `state` only)",
                    f"write `state.{root}` for a field of the old version's state",
                )
        for old in olds:
            state = old.spec.spec.state
            for name in sorted(state_fields_read(source) - set(state)):
                ctx.report(
                    at,
                    "migration-unknown-old-field",
                    f"`state.{name}` is not a field of {old.ref}'s state",
                    f"read a field {old.ref} declares.{did_you_mean(name, state)} ({known(state)})",
                )
            copied = source.strip().removeprefix("state.")
            if field in ctx.body.state and copied in state and copied.isidentifier():
                _check_type(ctx, at, old, copied, state[copied].type, field)


def _check_type(
    ctx: LintContext, at: str, old: LoadedSpec, copied: str, old_type: FieldType, field: str
) -> None:
    new_type = ctx.body.state[field].type
    if "any" in (old_type, new_type) or old_type == new_type:
        return
    if new_type in _WIDER.get(old_type, frozenset()):
        return
    ctx.report(
        at,
        "migration-type-mismatch",
        f"`{field}` is a {new_type}, and {old.ref}'s `{copied}` is a {old_type}",
        f"convert it in the expression (e.g. `{_conversion(new_type)}(state.{copied})`), or "
        f"change `{field}`'s type",
    )


def _conversion(field_type: str) -> str:
    return {"string": "string", "integer": "int", "number": "double"}.get(field_type, "dyn")


def _check_drops(
    ctx: LintContext, migration: Migration, where: str, olds: list[LoadedSpec]
) -> None:
    for index, field in enumerate(migration.drop):
        at = f"{where}/drop/{index}"
        if field in migration.state:
            ctx.report(
                at,
                "migration-drop-written",
                f"`{field}` is both dropped and written by the migration",
                "keep it in `state` (its new value) or in `drop` (its default), not both",
            )
        for old in olds:
            if field not in old.spec.spec.state:
                ctx.report(
                    at,
                    "migration-unknown-old-field",
                    f"`{field}` is not a field of {old.ref}'s state, so there is nothing to drop",
                    f"drop a field {old.ref} declares ({known(old.spec.spec.state)})",
                )


def _check_nodes(
    ctx: LintContext, migration: Migration, where: str, olds: list[LoadedSpec]
) -> None:
    body: GraphBody = ctx.body
    for old_id, new_id in migration.nodes.items():
        at = f"{where}/nodes/{old_id}"
        if new_id not in body.nodes:
            ctx.report(
                at,
                "migration-unknown-node",
                f"node `{old_id}` is renamed to `{new_id}`, which this version does not have",
                f"name a node of this version.{did_you_mean(new_id, body.nodes)} "
                f"({known(body.nodes)})",
            )
        for old in olds:
            if old_id not in old.spec.spec.nodes:
                ctx.report(
                    at,
                    "migration-unknown-old-node",
                    f"`{old_id}` is not a node of {old.ref}",
                    f"rename a node {old.ref} has ({known(old.spec.spec.nodes)})",
                )
    for old in olds:
        for old_id, node in old.spec.spec.nodes.items():
            if node.kind == "approval" and old_id not in body.nodes | migration.nodes:
                ctx.report(
                    f"{where}/from",
                    "migration-node-gone",
                    f"approval `{old_id}` of {old.ref} is neither in this version nor renamed: "
                    "a thread parked on it cannot be upgraded",
                    f"add `nodes: {{{old_id}: <its new id>}}` to this migration if it was renamed",
                    severity="warning",
                )
