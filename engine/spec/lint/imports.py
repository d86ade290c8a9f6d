"""``module:function`` refs whose module cannot be found, checked without importing it.

Only for specs read from a file: their folder is where the run will look first
(``plait.engine.tools.python_tools.import_function``). Text sent to the server or the
editor has no folder of its own, so it is not checked here.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path

from plait.engine.spec.code_refs import code_refs
from plait.engine.spec.lint.context import LintContext


def check_function_refs(ctx: LintContext) -> None:
    """Warn about refs whose module is neither beside the spec nor installed."""
    if ctx.loaded.path is None:
        return
    folder = str(ctx.loaded.base_dir.resolve())
    for found in code_refs(ctx.body):
        if found.kind != "function":
            continue
        where, ref = found.pointer, found.value
        module = ref.partition(":")[0]
        if not module_exists(module, [folder, *sys.path]):
            ctx.report(
                where,
                "unknown-module",
                f"module `{module}` of `{ref}` is not in the spec's folder nor installed",
                f"put `{module.replace('.', '/')}.py` in {folder}, install the package that "
                "provides it, or fix the name",
                severity="warning",
            )


def module_exists(name: str, search_path: Sequence[str]) -> bool:
    """Whether ``name`` (dotted) can be found on ``search_path``; no module code runs."""
    return name in sys.modules or _find(name, search_path) is not None


def module_file(name: str, search_path: Sequence[str]) -> Path | None:
    """The python source file ``name`` would be imported from, if any; no module code runs."""
    found = _find(name, search_path)
    if not isinstance(found, ModuleSpec) or not found.has_location or found.origin is None:
        return None
    return Path(found.origin) if found.origin.endswith(".py") else None


def _find(name: str, search_path: Sequence[str]) -> ModuleSpec | str | None:
    """The spec of dotted ``name``, the name of the builtin module it stops at, or None."""
    locations: Sequence[str] | None = list(search_path)
    spec: ModuleSpec | None = None
    for part in name.split("."):
        if locations is None:
            return None  # a plain module has no submodules
        spec = PathFinder.find_spec(part, locations)
        if spec is None:
            return part if part in sys.builtin_module_names else None
        locations = (
            list(spec.submodule_search_locations) if spec.submodule_search_locations else None
        )
    return spec
