"""The spec language: models, loading with source positions, lint and validation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.engine.spec.code_refs import CodeRef, code_refs
from plait.engine.spec.document import LoadedSpec, SourceMap, SourcePosition, escape_pointer
from plait.engine.spec.errors import SpecError, SpecIssue, has_errors, validation_problems
from plait.engine.spec.expressions import to_plain
from plait.engine.spec.lint import lint
from plait.engine.spec.loader import decode_file, load_spec, parse_spec, read_spec
from plait.engine.spec.migrations import find_migration, migrated_values, migration_hint
from plait.engine.spec.models import (
    RATE_PATTERN,
    Decision,
    Example,
    GraphSpec,
    Migration,
    QueueSpec,
    StateField,
    duration_seconds,
    rate_per_second,
)
from plait.engine.spec.provenance import git_sha
from plait.engine.spec.registry import SpecRegistry
from plait.engine.spec.secret_refs import RESERVED_PREFIX, is_reserved, secret_refs
from plait.engine.spec.semver import in_range, version_key
from plait.engine.spec.validate import (
    SPEC_SUFFIXES,
    check_paths,
    check_text,
    load_directory,
    validate_paths,
    validate_text,
)
from plait.engine.surfaces import on_first_use

if TYPE_CHECKING:
    from plait.engine.spec.schema import SCHEMA_PATH, schema_text, write_schema

__all__ = [
    "RATE_PATTERN",
    "RESERVED_PREFIX",
    "SCHEMA_PATH",
    "SPEC_SUFFIXES",
    "CodeRef",
    "Decision",
    "Example",
    "GraphSpec",
    "LoadedSpec",
    "Migration",
    "QueueSpec",
    "SourceMap",
    "SourcePosition",
    "SpecError",
    "SpecIssue",
    "SpecRegistry",
    "StateField",
    "check_paths",
    "check_text",
    "code_refs",
    "decode_file",
    "duration_seconds",
    "escape_pointer",
    "find_migration",
    "git_sha",
    "has_errors",
    "in_range",
    "is_reserved",
    "lint",
    "load_directory",
    "load_spec",
    "migrated_values",
    "migration_hint",
    "parse_spec",
    "rate_per_second",
    "read_spec",
    "schema_text",
    "secret_refs",
    "to_plain",
    "validate_paths",
    "validate_text",
    "validation_problems",
    "version_key",
    "write_schema",
]

if not TYPE_CHECKING:
    # Not imported above, so ``python -m plait.engine.spec.schema`` runs a module not yet imported.
    __getattr__ = on_first_use(__name__, {"schema": ("SCHEMA_PATH", "schema_text", "write_schema")})
