"""A loaded spec: the validated model plus the source it came from."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plait.engine.spec.models import GraphSpec


def escape_pointer(token: str) -> str:
    """Escape one JSON pointer token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*parts: str | int) -> str:
    """JSON pointer from unescaped parts: ``pointer("spec", "nodes", "a")``."""
    return "".join(f"/{escape_pointer(str(part))}" for part in parts)


def key_text(key: Any) -> str:
    """A YAML mapping key as the text of a pointer token (``true``, ``null``, ``3``)."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


@dataclass(frozen=True)
class SourcePosition:
    """1-based line and column of a value in the YAML source."""

    line: int
    column: int


@dataclass(frozen=True)
class SourceMap:
    """JSON pointer -> position of the key (or item) that holds that value."""

    positions: dict[str, SourcePosition] = field(default_factory=dict)

    def locate(self, pointer: str) -> SourcePosition:
        """Position of ``pointer``, or of its nearest ancestor present in the source."""
        current = pointer
        while True:
            found = self.positions.get(current)
            if found is not None:
                return found
            if not current:
                return SourcePosition(1, 1)
            current = current.rsplit("/", 1)[0]


@dataclass(frozen=True)
class LoadedSpec:
    """A spec read from a file (or text) and validated against the models."""

    file: str
    text: str
    data: dict[str, Any]
    spec: GraphSpec
    source_map: SourceMap
    path: Path | None = None

    @property
    def name(self) -> str:
        return self.spec.metadata.name

    @property
    def version(self) -> str:
        return self.spec.metadata.version

    @property
    def ref(self) -> str:
        """``name@version``, as a ``subgraph`` node refers to it."""
        return f"{self.name}@{self.version}"

    @property
    def base_dir(self) -> Path:
        """Folder that relative paths (fixtures, python modules) resolve against."""
        return self.path.parent if self.path is not None else Path.cwd()

    @functools.cached_property
    def digest(self) -> str:
        """sha256 of the canonical JSON of the spec: comments and formatting do not count.

        Computed once: a loaded spec is not changed (a run reads it several times, and
        serializing a large spec's data costs more than the rest of those reads)."""
        return spec_digest(self.data)


def spec_digest(data: dict[str, Any]) -> str:
    """Digest of a spec document's data (key order and comments do not change it)."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
