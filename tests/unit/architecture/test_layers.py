"""The import rules of the layout (docs/decisions.md 81 and 84), checked on the source.

Every import counts, including those under ``TYPE_CHECKING`` and inside
functions: an import deferred to dodge a cycle is still the cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

#: The engine's folders, lowest first: a module imports only its own folder and lower ones.
ENGINE_LAYERS = (
    "plait.engine.spec",
    "plait.engine.interop",
    "plait.engine.store",
    "plait.engine.observability",
    "plait.engine.governance",
    "plait.engine.models",
    "plait.engine.tools",
    "plait.engine.compiler",
    "plait.engine.eject",
    "plait.engine.run",
)
#: Modules at the engine's root, below every layer: they import nothing of the engine.
ENGINE_LEAVES = (
    "plait.engine.errors",
    "plait.engine.gc_pause",
    "plait.engine.lru",
    "plait.engine.protected",
    "plait.engine.surfaces",
)
#: What the server may import from the engine: a package, by the names in its ``__all__``.
#: ``tools.mcp`` is a surface of its own (its names load the MCP SDK, which ``tools``' surface
#: must not); ``protected`` and ``lru`` are root leaves, one module each with nothing inside to
#: hide (``lru`` is the server's too, so reading the registry does not load the compiler). The other
#: leaves are the engine's own: the server gets ``errors``' exceptions from the packages that
#: raise them (``plait.engine.compiler.CompileError``).
ENGINE_SURFACES = (
    *ENGINE_LAYERS,
    "plait.engine.tools.mcp",
    "plait.engine.protected",
    "plait.engine.lru",
)
#: The server's folders and root modules, lowest first; each may import the engine.
SERVER_LAYERS = (
    "plait.server.auth",
    "plait.server.graphs",
    "plait.server.approvals",
    "plait.server.queue",
    "plait.server.operations",
    "plait.server.workers",
    "plait.server.http",
    "plait.server.settings",
    "plait.server.api",
    "plait.server.a2a",
    "plait.server.app",
    "plait.server.cli",
)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in ("engine", "server"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(["plait", *parts])] = path
    return found


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The module of ours that ``name`` (a module or a name in one) is, if any."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _statements(module: str) -> Iterator[tuple[int, str, list[str]]]:
    """``(line, source, names)`` per import: ``from a import b, c`` is ``("a", ["b", "c"])``,
    ``import a.b`` is ``("a.b", [])``; relative sources are made absolute."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            yield node.lineno, base, [alias.name for alias in node.names]


def _imports(module: str) -> Iterator[str]:
    for _, source, names in _statements(module):
        for target in [f"{source}.{name}" for name in names] or [source]:
            owner = _owner(target)
            if owner is not None and owner != module:
                yield owner


IMPORTS = {module: sorted(set(_imports(module))) for module in MODULES}


def _layer(module: str, layers: tuple[str, ...] = ENGINE_LAYERS) -> int:
    if module in ENGINE_LEAVES or module in ("plait.engine", "plait.server"):
        return -1
    for rank, layer in enumerate(layers):
        if module == layer or module.startswith(layer + "."):
            return rank
    raise AssertionError(f"{module} is in no layer: add its folder to the layers of this test")


def test_the_engine_never_imports_the_server() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in IMPORTS.items()
        if module.startswith("plait.engine")
        for target in targets
        if target.startswith("plait.server")
    ]
    assert wrong == []


def test_engine_layers_point_one_way() -> None:
    wrong = []
    for module, targets in IMPORTS.items():
        if not module.startswith("plait.engine."):
            continue
        for target in targets:
            if not target.startswith("plait.engine."):
                continue
            below = _layer(target) < _layer(module)
            same_folder = _layer(target) == _layer(module) and module not in ENGINE_LEAVES
            if not (below or same_folder):
                wrong.append(f"{module} imports {target}")
    assert wrong == []


def test_server_layers_point_one_way() -> None:
    wrong = []
    for module, targets in IMPORTS.items():
        if not module.startswith("plait.server."):
            continue
        rank = _layer(module, SERVER_LAYERS)
        for target in targets:
            if target.startswith("plait.server.") and _layer(target, SERVER_LAYERS) > rank:
                wrong.append(f"{module} imports {target}")
    assert wrong == []


def _exported(module: str) -> list[str]:
    """The names of ``module``'s ``__all__`` (a literal list or tuple), read from its source."""
    path = MODULES[module]
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return list(ast.literal_eval(node.value))
    return []


def test_the_server_imports_the_engine_only_through_its_surfaces() -> None:
    """``from <surface> import <a name in its __all__>``, never a module inside a package:
    what a package keeps to itself stays free to move."""
    wrong = []
    for module in MODULES:
        if not module.startswith("plait.server."):
            continue
        for line, source, names in _statements(module):
            if source != "plait.engine" and not source.startswith("plait.engine."):
                continue
            where = f"{MODULES[module].relative_to(ROOT)}:{line}"
            if source not in ENGINE_SURFACES:
                wrong.append(f"{where} imports {source}, which is not a surface")
                continue
            if not names:
                wrong.append(f"{where} imports {source} whole: import its names")
                continue
            exported = _exported(source)
            wrong += [
                f"{where} imports {name} from {source}, which is not in its __all__"
                for name in names
                if name not in exported
            ]
    assert wrong == []


def test_everything_imports_plait_through_its_one_root() -> None:
    """``engine`` and ``server`` are folders, not packages: importing them by those
    names would load a second copy of every module beside ``plait.*``."""
    wrong = []
    for folder in ("engine", "server", "tests", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = (
                    [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and not node.level
                    else []
                )
                wrong += [
                    f"{path.relative_to(ROOT)}:{node.lineno} imports {name}"
                    for name in names
                    if name.split(".")[0] in ("engine", "server")
                ]
    assert wrong == []


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, []):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return groups


def test_no_module_imports_itself_through_others() -> None:
    assert _cycles(IMPORTS) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}
    assert _cycles(graph) == [["a", "b", "c"]]
