"""Which code a tenant's uploaded spec may name: only what the operator reviewed.

Workers import a spec's ``module:function`` refs, start its stdio MCP servers
and read its scripted fixture files with the server's own rights, database URL
included, which reach every tenant's rows. So a spec uploaded by a tenant other
than ``default`` (the operator's own tenant, and single-user mode) may name
functions only from modules of the server's specs folder (reviewed with the
specs, e.g. ``plait_examples``) or listed in ``PLAIT_TENANT_MODULES``; it may
not start stdio MCP servers (streamable HTTP ones are fine) nor name fixture
files (inline ``script`` replies are fine). Refusals are spec errors at the
offending line, like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plait.engine.spec import CodeRef, LoadedSpec, SpecIssue

#: Extra top-level modules tenants' specs may call (server/auth/code_policy.py).
TENANT_MODULES_ENV = "PLAIT_TENANT_MODULES"

CODE = "tenant-code-refused"


def folder_modules(specs_dir: Path | None) -> frozenset[str]:
    """Top-level modules and packages in the specs folder (``x.py``, ``x/__init__.py``)."""
    if specs_dir is None or not specs_dir.is_dir():
        return frozenset()
    names = {p.stem for p in specs_dir.glob("*.py")}
    names |= {p.parent.name for p in specs_dir.glob("*/__init__.py")}
    return frozenset(names)


def refused_code(loaded: LoadedSpec, allowed_modules: frozenset[str]) -> list[SpecIssue]:
    """The places in ``loaded`` naming code a tenant may not use (see module doc)."""
    # Imported here: `plait serve --help` reads this module's setting name, not the spec language.
    from plait.engine.spec import SpecIssue, code_refs

    issues = []
    for ref in code_refs(loaded.spec.spec):
        found = _refusal(ref, allowed_modules)
        if found is None:
            continue
        message, fix = found
        position = loaded.source_map.locate(ref.pointer)
        issues.append(
            SpecIssue(
                file=loaded.file,
                line=position.line,
                column=position.column,
                pointer=ref.pointer,
                message=message,
                fix=fix,
                code=CODE,
                severity="error",
            )
        )
    return issues


def _refusal(ref: CodeRef, allowed_modules: frozenset[str]) -> tuple[str, str] | None:
    if ref.kind == "function":
        top = ref.value.partition(":")[0].split(".")[0]
        if top in allowed_modules:
            return None
        listed = ", ".join(f"`{name}`" for name in sorted(allowed_modules)) or "none"
        return (
            f"`{ref.value}` calls module `{top}`, which this tenant may not run on the "
            "server's workers",
            f"use a function of the modules the operator allows ({listed}), or ask an "
            f"operator to add `{top}` to {TENANT_MODULES_ENV}",
        )
    if ref.kind == "command":
        return (
            f"a stdio MCP server starts `{ref.value}` on the server's workers; this tenant "
            "may not start processes there",
            "serve the MCP server yourself and use `transport: http` with its `url`",
        )
    return (
        f"the fixture file `{ref.value}` would be read from the server's disk; this tenant "
        "may not name files there",
        "write the replies in the spec under the model's `script`",
    )
