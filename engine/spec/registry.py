"""Specs by name and version, so ``subgraph`` refs (``name@version``) resolve."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from plait.engine.spec.document import LoadedSpec


class UnknownSpecRef(LookupError):
    """A ``name@version`` that no loaded spec provides."""

    def __init__(self, ref: str, known: list[str]) -> None:
        hint = ", ".join(known) if known else "none"
        super().__init__(f"no spec {ref!r} is loaded (known versions: {hint})")
        self.ref = ref
        self.known = known


class SpecRegistry:
    """An in-memory index of loaded specs keyed by ``(name, version)``."""

    def __init__(self, specs: Iterable[LoadedSpec] = ()) -> None:
        self._specs: dict[tuple[str, str], LoadedSpec] = {}
        for spec in specs:
            self.add(spec)

    def add(self, spec: LoadedSpec) -> None:
        """Register a spec; a later one with the same name and version replaces it."""
        self._specs[(spec.name, spec.version)] = spec

    def get(self, name: str, version: str) -> LoadedSpec:
        """The spec ``name`` at ``version``; raises :class:`UnknownSpecRef`."""
        try:
            return self._specs[(name, version)]
        except KeyError:
            raise UnknownSpecRef(f"{name}@{version}", self.versions(name)) from None

    def resolve(self, ref: str) -> LoadedSpec:
        """Resolve ``name@version``."""
        name, _, version = ref.partition("@")
        return self.get(name, version)

    def versions(self, name: str) -> list[str]:
        """Every loaded version of ``name``."""
        return sorted(v for (n, v) in self._specs if n == name)

    def __contains__(self, ref: object) -> bool:
        if not isinstance(ref, str):
            return False
        name, _, version = ref.partition("@")
        return (name, version) in self._specs

    def __iter__(self) -> Iterator[LoadedSpec]:
        return iter(list(self._specs.values()))

    def __len__(self) -> int:
        return len(self._specs)
