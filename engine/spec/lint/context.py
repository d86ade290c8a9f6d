"""What every lint rule shares: the spec, the registry, and how to report an issue."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from plait.engine.spec.document import LoadedSpec, pointer
from plait.engine.spec.errors import Severity, SpecIssue
from plait.engine.spec.models import GraphBody
from plait.engine.spec.registry import SpecRegistry


@dataclass
class LintContext:
    """One lint pass over one spec; rules append to :attr:`issues`."""

    loaded: LoadedSpec
    registry: SpecRegistry
    issues: list[SpecIssue] = field(default_factory=list)

    @property
    def body(self) -> GraphBody:
        """The ``spec`` section."""
        return self.loaded.spec.spec

    def report(
        self,
        pointer: str,
        code: str,
        message: str,
        fix: str,
        severity: Severity = "error",
    ) -> None:
        """Record an issue at ``pointer`` (located through the source map)."""
        position = self.loaded.source_map.locate(pointer)
        self.issues.append(
            SpecIssue(
                file=self.loaded.file,
                line=position.line,
                column=position.column,
                pointer=pointer,
                message=message,
                fix=fix,
                code=code,
                severity=severity,
            )
        )


def node_pointer(node_id: str, *rest: str | int) -> str:
    """Pointer into ``spec.nodes[node_id]``."""
    return pointer("spec", "nodes", node_id, *rest)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` Did you mean `x`?`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" Did you mean `{close[0]}`?" if close else ""


def known(names: Iterable[str]) -> str:
    """A short list of the names that do exist, for a fix text."""
    listed = sorted(names)
    if not listed:
        return "none are defined yet"
    shown = ", ".join(f"`{name}`" for name in listed[:12])
    return f"defined: {shown}" + (" ..." if len(listed) > 12 else "")
