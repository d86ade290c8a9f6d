"""``module:function`` refs whose module cannot be found, checked without importing it.

Only for specs read from a file: their folder is where the run will look first
(``engine.tools.python_tools.import_function``). Text sent to the server or the
editor has no folder of its own, so it is not checked here.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import PathFinder

from engine.spec.code_refs import code_refs
from engine.spec.lint.context import LintContext


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
    if name in sys.modules:
        return True
    locations: Sequence[str] | None = list(search_path)
    for part in name.split("."):
        if locations is None:
            return False  # a plain module has no submodules
        spec = PathFinder.find_spec(part, locations)
        if spec is None:
            return part in sys.builtin_module_names
        locations = (
            list(spec.submodule_search_locations) if spec.submodule_search_locations else None
        )
    return True
