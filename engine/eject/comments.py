"""The YAML comments an ejected module keeps: the file's header, and those above a key."""

from __future__ import annotations

from plait.engine.spec.document import LoadedSpec, escape_pointer


def header(loaded: LoadedSpec) -> list[str]:
    """The comment lines that open the file (the schema modeline left out)."""
    lines: list[str] = []
    for line in loaded.text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        text = stripped.lstrip("#").strip()
        if not text.startswith("yaml-language-server"):
            lines.append(text)
    return _trimmed(lines)


def above(loaded: LoadedSpec, *path: str) -> list[str]:
    """The comment lines right above the key at ``path`` (e.g. ``spec``, ``nodes``, ``plan``),
    and the one at the end of its line."""
    pointer = "/" + "/".join(escape_pointer(part) for part in path)
    position = loaded.source_map.positions.get(pointer)
    if position is None:
        return []
    lines = loaded.text.splitlines()
    found: list[str] = []
    index = position.line - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        found.insert(0, lines[index].strip().lstrip("#").strip())
        index -= 1
    own = lines[position.line - 1] if position.line - 1 < len(lines) else ""
    code, mark, note = own.partition(" #")
    # Not a comment when the `#` sits inside a quoted string.
    if mark and code.count('"') % 2 == 0 and code.count("'") % 2 == 0:
        found.append(note.strip())
    return _trimmed(found)


def _trimmed(lines: list[str]) -> list[str]:
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines
