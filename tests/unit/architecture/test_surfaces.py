"""The engine's surfaces at run time (docs/decisions.md 84): every name resolves to what its
``__init__`` says it is, and the lazy ones stay lazy for the CLI's light commands."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from types import ModuleType

import pytest

from tests.unit.architecture.test_layers import ENGINE_SURFACES, MODULES, ROOT


def _sources(surface: str) -> dict[str, tuple[str, str]]:
    """Each name the surface imports (also under ``TYPE_CHECKING``): its module and name."""
    path = MODULES[surface]
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
    return found


@pytest.mark.parametrize("surface", ENGINE_SURFACES)
def test_every_name_of_a_surface_is_the_one_its_source_names(surface: str) -> None:
    """A lazy surface's map and its ``TYPE_CHECKING`` imports (what mypy sees) agree, and no
    name is a module: a submodule of the same name would hide a lazy name for good."""
    package = importlib.import_module(surface)
    sources = _sources(surface)
    assert package.__doc__, f"{surface} says what it is for"
    for name in package.__all__:
        value = getattr(package, name)
        assert not isinstance(value, ModuleType), f"{surface}.{name} is a module"
        if name in sources:
            module, original = sources[name]
            assert value is getattr(importlib.import_module(module), original), f"{surface}.{name}"


def test_the_cli_module_loads_neither_the_runner_nor_the_mcp_sdk() -> None:
    """``plait --help`` and ``plait validate`` import every command's module: the run and
    tools.mcp surfaces must not drag the compiler, the runner or the MCP SDK in with them."""
    code = (
        "import sys; import plait.server.cli.app; "
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp' "
        "or m.startswith(('plait.engine.compiler', 'plait.engine.run.runner', "
        "'plait.engine.tools.mcp.')))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert loaded == []


def test_the_spec_surface_needs_neither_langgraph_nor_postgres() -> None:
    """Checking a spec (the editor's lint, ``plait validate``) must not need the runtime."""
    code = (
        "import sys; import plait.engine.spec as spec; [getattr(spec, n) for n in spec.__all__]; "
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langgraph', 'langchain_core', 'psycopg', 'psycopg_pool'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert loaded == []


def test_validate_in_a_pipe_loads_neither_asyncio_rich_nor_jsonschema() -> None:
    """``plait validate specs/`` (as a pre-commit hook runs it) stays under 0.5 s without
    them (docs/decisions.md 85): the repository's specs have only plainly valid schemas."""
    code = (
        "import sys; from plait.server.cli.app import main; sys.argv = ['plait', 'validate', "
        f"{str(ROOT / 'specs')!r}]\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert stop.code == 0, stop.code\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('asyncio', 'rich', 'jsonschema'))), file=sys.stderr)"
    )
    # Variables that make rich style a pipe's output too (server/cli/output.py).
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stderr.split()
    assert loaded == []
