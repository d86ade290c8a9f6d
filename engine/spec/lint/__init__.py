"""Semantic lint of a loaded spec: everything the schema alone cannot check.

Each rule family lives in its own module; every issue carries a stable
``code`` (listed in docs/spec-language.md).
"""

from __future__ import annotations

from plait.engine.gc_pause import gc_paused
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.errors import SpecIssue
from plait.engine.spec.lint.a2a import check_a2a
from plait.engine.spec.lint.context import LintContext
from plait.engine.spec.lint.expressions import check_cel, check_state_targets, check_templates
from plait.engine.spec.lint.governance_limits import check_budgets
from plait.engine.spec.lint.governance_tools import check_governance_tools
from plait.engine.spec.lint.graph import check_graph, check_parallel_writers, check_routes
from plait.engine.spec.lint.imports import check_function_refs
from plait.engine.spec.lint.map_items import check_waits_in_map
from plait.engine.spec.lint.migrations import check_migrations
from plait.engine.spec.lint.references import check_references
from plait.engine.spec.lint.secrets import check_secret_names
from plait.engine.spec.lint.values import (
    check_examples,
    check_json_schemas,
    check_scripts,
    check_state,
)
from plait.engine.spec.registry import SpecRegistry

_RULES = (
    check_references,
    check_graph,
    check_parallel_writers,
    check_routes,
    check_cel,
    check_templates,
    check_state_targets,
    check_state,
    check_json_schemas,
    check_scripts,
    check_examples,
    check_budgets,
    check_governance_tools,
    check_function_refs,
    check_a2a,
    check_waits_in_map,
    check_secret_names,
    check_migrations,
)


def lint(loaded: LoadedSpec, registry: SpecRegistry | None = None) -> list[SpecIssue]:
    """Every semantic problem of ``loaded``, sorted by position.

    ``registry`` resolves ``subgraph`` refs; without one, only the spec itself is known.
    """
    ctx = LintContext(loaded, registry if registry is not None else SpecRegistry([loaded]))
    with gc_paused():
        for rule in _RULES:
            rule(ctx)
    return sorted(ctx.issues, key=lambda issue: (issue.line, issue.column, issue.code))
