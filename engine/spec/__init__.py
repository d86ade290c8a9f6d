"""The spec language: models, loading with source positions, lint and validation."""

from plait.engine.spec.document import LoadedSpec, SourceMap, SourcePosition
from plait.engine.spec.errors import SpecError, SpecIssue, has_errors
from plait.engine.spec.lint import lint
from plait.engine.spec.loader import load_spec, parse_spec
from plait.engine.spec.registry import SpecRegistry
from plait.engine.spec.validate import load_directory, validate_paths, validate_text

__all__ = [
    "LoadedSpec",
    "SourceMap",
    "SourcePosition",
    "SpecError",
    "SpecIssue",
    "SpecRegistry",
    "has_errors",
    "lint",
    "load_directory",
    "load_spec",
    "parse_spec",
    "validate_paths",
    "validate_text",
]
