"""Validate spec files and folders: YAML, schema and lint, never raising."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.errors import SpecError, SpecIssue, has_errors
from plait.engine.spec.lint import lint
from plait.engine.spec.loader import decode_file, load_spec, read_spec
from plait.engine.spec.registry import SpecRegistry

SPEC_SUFFIXES = (".yaml", ".yml")


def validate_paths(paths: Sequence[Path]) -> list[SpecIssue]:
    """Every issue of the specs at ``paths`` (files, or folders of ``*.yaml`` / ``*.yml``).

    The specs given, and the other specs in their folders, form one registry,
    so ``subgraph`` refs resolve across files. Never raises: an unexpected
    failure becomes an issue with code ``internal``.
    """
    return check_paths(paths)[1]


def check_paths(paths: Sequence[Path]) -> tuple[list[Path], list[SpecIssue]]:
    """The spec files found at ``paths`` and their issues (see :func:`validate_paths`)."""
    issues: list[SpecIssue] = []
    files: list[Path] = []
    for path in paths:
        try:
            files.extend(_expand(path, issues))
        except OSError as exc:
            issues.append(_file_issue(path, f"cannot read it: {exc}", "file-unreadable"))
    loaded: list[tuple[LoadedSpec, list[SpecIssue]]] = []
    for file in dict.fromkeys(files):
        result = _load(file)
        if isinstance(result, list):
            issues.extend(result)
        else:
            loaded.append(result)
    # Siblings exclude every file given, loaded or not: one that failed is not read twice.
    registry = SpecRegistry(_siblings(files, set(files)))
    issues.extend(_duplicates([spec for spec, _ in loaded]))
    for spec, _ in loaded:
        registry.add(spec)
    for spec, warnings in loaded:
        issues.extend(warnings)
        issues.extend(_guarded(spec.file, functools.partial(lint, spec, registry)))
    return list(dict.fromkeys(files)), issues


def validate_text(
    text: str, file: str = "<string>", registry: SpecRegistry | None = None
) -> list[SpecIssue]:
    """Every issue of one spec given as text (the editor and the HTTP API use this)."""
    return check_text(text, file, registry)[1]


def check_text(
    text: str, file: str = "<string>", registry: SpecRegistry | None = None
) -> tuple[LoadedSpec | None, list[SpecIssue]]:
    """The spec given as text (``None`` when it does not load) and every issue of it.

    ``registry`` resolves ``subgraph`` refs; the spec itself replaces a version
    of the same ``name@version`` in it. Never raises, like :func:`validate_paths`.
    """
    loaded: LoadedSpec | None = None

    def run() -> list[SpecIssue]:
        nonlocal loaded
        try:
            spec, warnings = read_spec(text, file)
        except SpecError as exc:
            return exc.issues
        loaded = spec
        known = SpecRegistry(registry or ())
        known.add(spec)
        return [*warnings, *lint(spec, known)]

    issues = _guarded(file, run)
    return loaded, issues


def load_directory(directory: Path) -> SpecRegistry:
    """The specs of a folder that load and lint without errors, as a registry."""
    loaded: list[LoadedSpec] = []
    for file in _spec_files(directory):
        try:
            loaded.append(load_spec(file))
        except SpecError:
            continue
    registry = SpecRegistry(loaded)
    return SpecRegistry(spec for spec in loaded if not has_errors(lint(spec, registry)))


def _expand(path: Path, issues: list[SpecIssue]) -> list[Path]:
    if path.is_dir():
        found = _spec_files(path)
        if not found:
            issues.append(
                _file_issue(path, "the folder holds no *.yaml or *.yml files", "no-specs")
            )
        return found
    if not path.exists():
        issues.append(_file_issue(path, "no such file or folder", "file-not-found"))
        return []
    return [path]


def _spec_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.suffix in SPEC_SUFFIXES and p.is_file())


def _load(file: Path) -> tuple[LoadedSpec, list[SpecIssue]] | list[SpecIssue]:
    """The loaded spec and its warnings, or the issues that stopped it loading."""
    try:
        return read_spec(decode_file(file), str(file), file)
    except SpecError as exc:
        return exc.issues
    except Exception as exc:
        return [_internal(str(file), exc)]


def _siblings(files: Iterable[Path], given: set[Path]) -> list[LoadedSpec]:
    """Valid specs beside the given files, so refs to them resolve (not reported here)."""
    found: list[LoadedSpec] = []
    for folder in dict.fromkeys(file.parent for file in files):
        for file in _spec_files(folder):
            if file in given:
                continue
            try:
                found.append(load_spec(file))
            except Exception:
                continue  # a broken neighbour is reported only when it is validated itself
    return found


def _duplicates(specs: list[LoadedSpec]) -> list[SpecIssue]:
    first: dict[str, LoadedSpec] = {}
    issues: list[SpecIssue] = []
    for spec in specs:
        other = first.setdefault(spec.ref, spec)
        if other is not spec:
            position = spec.source_map.locate("/metadata/version")
            issues.append(
                SpecIssue(
                    file=spec.file,
                    line=position.line,
                    column=position.column,
                    pointer="/metadata/version",
                    message=f"`{spec.ref}` is also defined in {other.file}",
                    fix="bump `metadata.version` (or rename the graph): a name and version "
                    "identify one spec",
                    code="duplicate-spec",
                )
            )
    return issues


def _guarded(file: str, run: Callable[[], list[SpecIssue]]) -> list[SpecIssue]:
    """``run()``, with any unexpected exception turned into an ``internal`` issue."""
    try:
        return run()
    except Exception as exc:
        return [_internal(file, exc)]


def _internal(file: str, exc: Exception) -> SpecIssue:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" at {where.filename}:{where.lineno}" if where else ""
    return SpecIssue(
        file=file,
        line=1,
        column=1,
        pointer="",
        message=f"internal error while validating: {type(exc).__name__}: {exc}{origin}",
        fix="this is a bug in Plait; please report it with the spec that caused it",
        code="internal",
    )


def _file_issue(path: Path, message: str, code: str) -> SpecIssue:
    return SpecIssue(
        file=str(path),
        line=1,
        column=1,
        pointer="",
        message=message,
        fix="check the path: pass spec files or folders that hold them",
        code=code,
    )
