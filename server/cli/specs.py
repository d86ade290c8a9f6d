"""Loading the spec a command works on: validated first, with the same errors as ``validate``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.server.cli.exits import CliError, ExitCode

if TYPE_CHECKING:
    from plait.engine.spec import LoadedSpec, SpecIssue, SpecRegistry

#: The spec files and folders a command reads (``plait validate``, ``plait test``).
SpecPaths = Annotated[
    list[Path],
    typer.Argument(
        help="Spec files, or folders of *.yaml / *.yml specs.",
        show_default=False,
        metavar="PATH...",
    ),
]


class InvalidSpec(CliError):
    """The spec has errors; ``issues`` are what ``plait validate`` would print."""

    def __init__(self, path: Path, issues: Sequence[SpecIssue]) -> None:
        errors = sum(issue.severity == "error" for issue in issues)
        super().__init__(f"{path} has {errors} error(s)", ExitCode.INVALID_SPEC)
        self.issues = list(issues)


def load_valid_spec(path: Path) -> LoadedSpec:
    """Validate ``path`` (its folder's specs resolve refs), then load it.

    Raises :class:`InvalidSpec` with the issues ``plait validate`` would print.
    """
    # Imported here, as in every function of this module: `plait --help` imports it.
    from plait.engine.spec import SpecError, has_errors, load_spec, validate_paths

    issues = validate_paths([path])
    if has_errors(issues):
        raise InvalidSpec(path, issues)
    try:
        return load_spec(path)
    except SpecError as exc:  # changed on disk between the two reads
        raise InvalidSpec(path, exc.issues) from None


def registry_for(loaded: LoadedSpec) -> SpecRegistry:
    """The valid specs in ``loaded``'s folder plus ``loaded`` itself, for ``subgraph`` refs."""
    from plait.engine.spec import load_directory

    registry = load_directory(loaded.base_dir)
    registry.add(loaded)
    return registry
