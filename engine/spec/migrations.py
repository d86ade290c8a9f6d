"""A spec's ``migrations``: which one moves a thread from an earlier version, and the
state it gives the thread (docs/spec-language.md, docs/decisions.md 95)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plait.engine.spec.expressions import evaluate
from plait.engine.spec.models import GraphSpec, Migration
from plait.engine.spec.semver import in_range


def find_migration(spec: GraphSpec, from_version: str) -> Migration | None:
    """The first of ``spec``'s migrations whose ``from`` holds ``from_version``, or ``None``."""
    return next((item for item in spec.spec.migrations if in_range(from_version, item.from_)), None)


def migration_hint(graph: str, from_version: str, to_version: str) -> str:
    """What to declare in ``graph@to_version`` so a thread on ``from_version`` may move to it."""
    return (
        f'declare `migrations: [{{from: "{from_version}", state: {{...}}, nodes: {{...}}}}]` '
        f"in {graph}@{to_version}'s spec (which new fields come from which old ones, in CEL "
        "over `state`; which nodes were renamed), publish it, then upgrade the thread"
    )


def migrated_values(
    migration: Migration, old: Mapping[str, Any], new_spec: GraphSpec
) -> tuple[dict[str, Any], set[str]]:
    """``(written, kept)``: the values of ``new_spec``'s fields that the migration computes
    from the old state ``old``, and the fields that keep their old values.

    A field of the new state keeps its value when ``old`` holds a field of the
    same name that is not dropped and has no expression; any other field starts
    from its default. Raises ``ExpressionError`` when an expression fails.
    """
    written = {field: evaluate(source, {"state": old}) for field, source in migration.state.items()}
    dropped = set(migration.drop)
    kept = {
        field
        for field in new_spec.spec.state
        if field in old and field not in written and field not in dropped
    }
    return written, kept
