"""Mutated example specs: the corpus ``plait validate`` must answer quickly and precisely.

``mutants(text, seed, count)`` derives ``count`` broken variants of one spec,
the same ones for the same seed: lines dropped, doubled, swapped or shifted,
characters YAML treats specially inserted, the file cut short, and values
replaced with hostile payloads (deep brackets, alias bombs, 5,000-digit
numbers, templates, regexes and CEL nested 1,000 levels deep, huge strings).
``tests/unit/spec/test_mutants.py`` runs a few hundred per example spec;
``bench/validate_mutants.py`` times thousands.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: Characters that mean something to YAML, plus a tab and control characters.
_SPECIAL = "[]{}:,&*!|>'\"#%@`-?\t\x00\x07\\"

#: Hostile values, each written where a value was (``line`` of the mutant says where).
PAYLOADS: tuple[str, ...] = (
    "[" * 1000,
    "{" * 1000,
    "[" * 99 + "]" * 99,
    "9" * 5000,
    "-0x" + "F" * 5000,
    "'" + "(" * 1000 + "'",
    '"' + "(" * 1000 + "a" + ")" * 1000 + '"',
    '"{{ ' + "(" * 1000 + "x" + ")" * 1000 + ' }}"',
    '"' + "{% if x %}" * 300 + '"',
    '"' + "[" * 1000 + "1" + "]" * 1000 + '"',
    "'" + "1 + " * 20_000 + ")'",
    "'" + "state.x" * 10_000 + "'",
    ".nan",
    ".inf",
    "-.inf",
    "1e999",
    "~",
    "yes",
    "2024-13-45",
    "!!binary AAAA",
    "!!python/object:os.system x",
    "*nowhere",
    "&loop [*loop]",
    '"\\u0000"',
    '"\\ud800"',
    "x" * 200_000,
    "|\n" + "  deep\n" * 10,
)

_LAUGHS = "".join(
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n"
    if i
    else "l0: &l0 [x, x, x, x, x, x, x, x, x]\n"
    for i in range(9)
)


@dataclass(frozen=True)
class Mutant:
    """One mutated spec: its text, what was done, and the 1-based line it touched."""

    text: str
    operation: str
    line: int
    #: The hostile value written at ``line`` (``replace_value`` only).
    payload: str | None = None


def mutants(text: str, seed: int, count: int) -> Iterator[Mutant]:
    """``count`` mutants of ``text``, deterministic for ``seed``."""
    rng = random.Random(seed)
    operations = list(_OPERATIONS.items())
    for _ in range(count):
        name, operation = rng.choice(operations)
        lines = text.splitlines(keepends=True)
        yield operation(rng, lines, name)


def _pick(rng: random.Random, lines: list[str]) -> int:
    return rng.randrange(len(lines))


def _delete_line(rng: random.Random, lines: list[str], name: str) -> Mutant:
    index = _pick(rng, lines)
    del lines[index]
    return Mutant("".join(lines), name, index + 1)


def _duplicate_line(rng: random.Random, lines: list[str], name: str) -> Mutant:
    index = _pick(rng, lines)
    lines.insert(index, lines[index])
    return Mutant("".join(lines), name, index + 1)


def _swap_lines(rng: random.Random, lines: list[str], name: str) -> Mutant:
    first, second = _pick(rng, lines), _pick(rng, lines)
    lines[first], lines[second] = lines[second], lines[first]
    return Mutant("".join(lines), name, min(first, second) + 1)


def _shift_line(rng: random.Random, lines: list[str], name: str) -> Mutant:
    index = _pick(rng, lines)
    line = lines[index]
    if rng.random() < 0.5:
        lines[index] = rng.choice(["\t", " ", "   ", "      "]) + line
    else:
        lines[index] = line[rng.randint(1, 4) :] if line.startswith(" ") else " " + line
    return Mutant("".join(lines), name, index + 1)


def _insert_special(rng: random.Random, lines: list[str], name: str) -> Mutant:
    index = _pick(rng, lines)
    line = lines[index]
    at = rng.randrange(len(line) + 1)
    lines[index] = line[:at] + rng.choice(_SPECIAL) * rng.choice([1, 1, 2, 50]) + line[at:]
    return Mutant("".join(lines), name, index + 1)


def _delete_range(rng: random.Random, lines: list[str], name: str) -> Mutant:
    text = "".join(lines)
    start = rng.randrange(len(text))
    end = min(len(text), start + rng.randint(1, 40))
    return Mutant(text[:start] + text[end:], name, text.count("\n", 0, start) + 1)


def _truncate(rng: random.Random, lines: list[str], name: str) -> Mutant:
    text = "".join(lines)
    at = rng.randrange(len(text))
    return Mutant(text[:at], name, text.count("\n", 0, at) + 1)


def _replace_value(rng: random.Random, lines: list[str], name: str) -> Mutant:
    """A hostile payload where a ``key: value`` line had its value."""
    candidates = [i for i, line in enumerate(lines) if ": " in line and line.lstrip()[:1] != "#"]
    index = rng.choice(candidates) if candidates else _pick(rng, lines)
    line = lines[index]
    key, separator, _ = line.partition(": ")
    payload = rng.choice(PAYLOADS)
    lines[index] = f"{key}{separator or ': '}{payload}\n"
    return Mutant("".join(lines), name, index + 1, payload)


def _prepend_laughs(rng: random.Random, lines: list[str], name: str) -> Mutant:
    return Mutant(_LAUGHS + "".join(lines), name, 1)


def _repeat_block(rng: random.Random, lines: list[str], name: str) -> Mutant:
    start = _pick(rng, lines)
    block = lines[start : start + rng.randint(1, 6)]
    lines[start:start] = block * rng.choice([2, 10, 200])
    return Mutant("".join(lines), name, start + 1)


_Operation = Callable[[random.Random, list[str], str], Mutant]
_OPERATIONS: dict[str, _Operation] = {
    "delete_line": _delete_line,
    "duplicate_line": _duplicate_line,
    "swap_lines": _swap_lines,
    "shift_line": _shift_line,
    "insert_special": _insert_special,
    "delete_range": _delete_range,
    "truncate": _truncate,
    "replace_value": _replace_value,
    "replace_value_again": _replace_value,  # payloads are the point: twice as likely
    "prepend_laughs": _prepend_laughs,
    "repeat_block": _repeat_block,
}
