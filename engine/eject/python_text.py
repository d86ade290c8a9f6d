"""Small pieces of Python source: literals, names, and CEL paths as subscripts."""

from __future__ import annotations

import keyword
import re
from typing import Any

#: Longer strings are written as pieces of about this many characters.
_WIDTH = 64
#: A CEL path over one root: ``state.plan.steps``, ``result``, ``item``.
_PATH = re.compile(r"^(state|result|item|index)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)$")


def literal(value: Any) -> str:
    """``value`` (JSON-like) as a Python literal; text of several lines as one line each."""
    if isinstance(value, str) and "\n" in value.rstrip("\n"):
        parts = value.splitlines(keepends=True)
        return "(\n" + "\n".join(repr(part) for part in parts) + "\n)"
    if isinstance(value, str) and len(value) > _WIDTH:
        return "(\n" + "\n".join(repr(part) for part in _pieces(value)) + "\n)"
    if isinstance(value, dict):
        items = ", ".join(f"{literal(key)}: {literal(item)}" for key, item in value.items())
        return "{" + items + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    return repr(value)


def _pieces(text: str) -> list[str]:
    """``text`` cut after spaces into pieces of about ``_WIDTH`` characters."""
    pieces: list[str] = []
    current = ""
    for word in re.split(r"(?<= )", text):
        if current and len(current) + len(word) > _WIDTH:
            pieces.append(current)
            current = ""
        current += word
    return [*pieces, current] if current else pieces


def identifier(name: str) -> str:
    """``name`` as a Python identifier (spec ids are ``[A-Za-z_][A-Za-z0-9_-]*``)."""
    text = re.sub(r"\W", "_", name)
    if text[:1].isdigit():
        text = f"_{text}"
    if keyword.iskeyword(text):
        text = f"{text}_"
    return text


def path_as_python(source: str, roots: dict[str, str]) -> str | None:
    """A CEL path as Python subscripts (``state.plan.steps`` -> ``state["plan"]["steps"]``),
    with each root spelled as ``roots`` says; ``None`` when it is more than a path."""
    match = _PATH.match(source.strip())
    if match is None or match.group(1) not in roots:
        return None
    keys = [key for key in match.group(2).split(".") if key]
    return roots[match.group(1)] + "".join(f"[{key!r}]" for key in keys)
