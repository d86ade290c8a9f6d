"""A package surface whose names load on first use (PEP 562), for packages costly to import.

A package's ``__init__`` usually imports the names of its surface (``__all__``).
Where that would import too much for a caller that needs one name (``run``'s
surface is the whole engine, ``tools.mcp``'s the MCP SDK), the ``__init__``
imports them under ``TYPE_CHECKING`` only and sets ``__getattr__`` to
:func:`on_first_use`, which imports a name's module when the name is first
asked for. A lazy name must not be a module's name in its package: once that
module is imported, the package attribute is the module and ``__getattr__`` is
never asked (docs/decisions.md 84).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping


def on_first_use(
    package: str, modules: Mapping[str, Iterable[str] | Mapping[str, str]]
) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: names in ``modules[m]`` load from ``package.m``
    (a mapping there renames: surface name -> the module's name)."""
    where: dict[str, tuple[str, str]] = {}
    for module, names in modules.items():
        renamed = names if isinstance(names, Mapping) else {name: name for name in names}
        for name, original in renamed.items():
            where[name] = (f"{package}.{module}", original)

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, original = where[name]
        value = getattr(importlib.import_module(module), original)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
