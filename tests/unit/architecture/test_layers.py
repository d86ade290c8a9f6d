"""The import rules of the layout (docs/decisions.md 80), checked on the source.

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
    "engine.spec",
    "engine.store",
    "engine.observability",
    "engine.governance",
    "engine.models",
    "engine.tools",
    "engine.compiler",
    "engine.run",
)
#: Modules at the engine's root, below every layer: they import nothing of the engine.
ENGINE_LEAVES = ("engine.errors", "engine.gc_pause", "engine.protected")
#: The server's folders and root modules, lowest first; each may import the engine.
SERVER_LAYERS = (
    "server.auth",
    "server.graphs",
    "server.approvals",
    "server.queue",
    "server.operations",
    "server.workers",
    "server.http",
    "server.settings",
    "server.api",
    "server.a2a",
    "server.app",
    "server.cli",
)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in ("engine", "server"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The module of ours that ``name`` (a module or a name in one) is, if any."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> Iterator[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            owner = _owner(target)
            if owner is not None and owner != module:
                yield owner


IMPORTS = {module: sorted(set(_imports(module))) for module in MODULES}


def _layer(module: str, layers: tuple[str, ...] = ENGINE_LAYERS) -> int:
    if module in ENGINE_LEAVES or module in ("engine", "server"):
        return -1
    for rank, layer in enumerate(layers):
        if module == layer or module.startswith(layer + "."):
            return rank
    raise AssertionError(f"{module} is in no layer: add its folder to the layers of this test")


def test_the_engine_never_imports_the_server() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in IMPORTS.items()
        if module.startswith("engine")
        for target in targets
        if target.startswith("server")
    ]
    assert wrong == []


def test_engine_layers_point_one_way() -> None:
    wrong = []
    for module, targets in IMPORTS.items():
        if not module.startswith("engine") or module == "engine":
            continue
        for target in targets:
            if not target.startswith("engine"):
                continue
            below = _layer(target) < _layer(module)
            same_folder = _layer(target) == _layer(module) and module not in ENGINE_LEAVES
            if not (below or same_folder):
                wrong.append(f"{module} imports {target}")
    assert wrong == []


def test_server_layers_point_one_way() -> None:
    wrong = []
    for module, targets in IMPORTS.items():
        if not module.startswith("server.") or module == "server":
            continue
        rank = _layer(module, SERVER_LAYERS)
        for target in targets:
            if target.startswith("server.") and _layer(target, SERVER_LAYERS) > rank:
                wrong.append(f"{module} imports {target}")
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
