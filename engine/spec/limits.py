"""How big, deep and self-referential a spec's YAML may be, and where it crossed the line.

A spec is a few kilobytes of YAML; a 2,000-node generated spec is ~400 KB. What
lies far beyond that is a mistake or an attack: a 50 KB run of ``[`` kept
ruamel's pure-Python scanner busy for half a minute, and a "billion laughs"
document (anchors that alias each other) expands to millions of values from a
few lines. Every read of YAML (``plait validate``, uploads, stored versions)
checks these limits before the slow reader sees the text, so a bad file costs
at most a pass of libyaml's C parser (docs/decisions.md, 62).

Each refusal names the line and column (and the JSON pointer) where the limit
was crossed, not the start of the file.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from plait.engine.spec.document import escape_pointer

#: Characters of YAML text in one spec (512 KiB of ASCII; a 2,000-node spec is ~400 KB).
MAX_CHARS = 524_288
#: Mappings and lists nested in each other (the top-level mapping counts as 1).
MAX_DEPTH = 100
#: Values the document holds once every alias is expanded.
MAX_VALUES = 200_000
#: Alias uses (``*name``) in one document.
MAX_ALIASES = 1_000
#: Characters of a plain integer. Python refuses to convert decimal text of more
#: than 4,300 digits, and prints no int of more (a hex literal can make one).
MAX_INT_DIGITS = 1_000

_CParser: type[Any] | None = getattr(yaml, "CSafeLoader", None)
_ALIAS = re.compile(r"(?:^|[\s\[{,:])\*[^\s*]", re.MULTILINE)
#: A plain scalar YAML 1.2 (or 1.1) reads as an integer: sign, digits, ``_`` separators.
_INTEGER = re.compile(r"[-+]?(?:0[xo]?)?[0-9a-fA-F_]+")


class LimitExceeded(Exception):
    """The YAML crossed one of the limits above, at ``line``:``column`` (1-based)."""

    def __init__(
        self, code: str, message: str, fix: str, line: int, column: int, pointer: str
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fix = fix
        self.line = line
        self.column = column
        self.pointer = pointer


def check_size(text: str) -> None:
    """Raise :class:`LimitExceeded` at the character where ``text`` passes :data:`MAX_CHARS`."""
    if len(text) <= MAX_CHARS:
        return
    line = text.count("\n", 0, MAX_CHARS) + 1
    column = MAX_CHARS - (text.rfind("\n", 0, MAX_CHARS) + 1) + 1
    raise LimitExceeded(
        "yaml-too-large",
        f"the spec is longer than {MAX_CHARS:,} characters ({len(text):,}); "
        "the limit is crossed here",
        "split the graph into subgraphs (`kind: subgraph`), or move large data out of the spec",
        line,
        column,
        "",
    )


def may_alias(text: str) -> bool:
    """Whether ``text`` may hold an alias (``*name`` after a space, ``[``, ``,`` or ``:``)."""
    return _ALIAS.search(text) is not None


def too_long_integer(text: str) -> bool:
    """Whether a plain scalar would be an integer with more digits than Python converts."""
    return len(text) > MAX_INT_DIGITS and _INTEGER.fullmatch(text) is not None


def long_integer(line: int, column: int, pointer: str, digits: int) -> LimitExceeded:
    """The refusal of a plain integer with ``digits`` digits, at its position."""
    return LimitExceeded(
        "yaml-number-too-long",
        f"a number of {digits:,} digits; Plait reads integers of at most {MAX_INT_DIGITS:,} digits",
        "quote it if it is text (`'1234...'`), or use a smaller number",
        line,
        column,
        pointer,
    )


class _Frame:
    """One open mapping or list while the events are walked."""

    __slots__ = ("anchor", "index", "is_map", "key", "start")

    def __init__(self, is_map: bool, start: int, anchor: str | None) -> None:
        self.is_map = is_map
        self.start = start  # values counted before this collection
        self.anchor = anchor
        self.index = 0  # items done (a mapping counts keys and values)
        self.key = "?"  # the key of the value being read (mappings)


def check_events(text: str) -> None:
    """Walk libyaml's parse events of ``text``; raise :class:`LimitExceeded` where a limit
    (depth, alias uses, expanded values, integer digits) is crossed.

    A syntax error ends the walk quietly: what came before it was checked, and
    the reader that follows reports the error itself. Cost: one pass of the C
    parser, without building any tree.
    """
    if _CParser is None:
        return
    stack: list[_Frame] = []
    sizes: dict[str, int] = {}  # anchor -> values it expands to
    values = 0
    aliases = 0
    read = 0  # characters the events so far cover
    events = yaml.parse(text, Loader=_CParser)
    try:
        for event in events:
            read = event.end_mark.index
            if isinstance(event, yaml.ScalarEvent):
                values += not _is_key(stack)  # keys are not values (as the readers count)
                if not event.style and too_long_integer(event.value):
                    raise long_integer(*_where(event, stack), len(event.value))
                if event.anchor is not None:
                    sizes[event.anchor] = 1
                _advance(stack, event.value)
            elif isinstance(event, yaml.CollectionStartEvent):
                values += 1
                if len(stack) >= MAX_DEPTH:
                    raise too_deep(*_where(event, stack))
                stack.append(
                    _Frame(isinstance(event, yaml.MappingStartEvent), values - 1, event.anchor)
                )
            elif isinstance(event, yaml.CollectionEndEvent):
                frame = stack.pop()
                if frame.anchor is not None:
                    sizes[frame.anchor] = values - frame.start
                _advance(stack, None)
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                values += sizes.get(event.anchor, 1)
                if aliases > MAX_ALIASES or values > MAX_VALUES:
                    many = (
                        f"more than {MAX_ALIASES:,} aliases (`*name`)"
                        if aliases > MAX_ALIASES
                        else f"more than {MAX_VALUES:,} values once its aliases are expanded"
                    )
                    raise LimitExceeded(
                        "yaml-too-large",
                        f"the YAML holds {many}; the limit is crossed at this alias",
                        "remove the repeated or nested aliases: write the values out, or "
                        "move shared parts into a subgraph",
                        *_where(event, stack),
                    )
                _advance(stack, None)
    except yaml.MarkedYAMLError as exc:
        if exc.problem == _LIBYAML_TOO_DEEP:
            # libyaml looks ahead through a whole run of `[`/`{` for a possible
            # key and stops at its own limit (1,000) before any event of it.
            raise too_deep(*_flow_too_deep(text, read, len(stack), exc)) from None
        return  # the reader that follows explains the syntax error
    except yaml.YAMLError:
        return
    finally:
        events.close()


def too_deep(line: int, column: int, pointer: str) -> LimitExceeded:
    """The refusal of nesting deeper than :data:`MAX_DEPTH`, where it is crossed."""
    return LimitExceeded(
        "yaml-too-deep",
        f"lists and mappings are nested more than {MAX_DEPTH} levels deep here",
        "flatten the document; a spec needs only a few levels",
        line,
        column,
        pointer,
    )


#: libyaml's error for more than 1,000 nested flow collections.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"
#: What a flow-depth count skips (quoted scalars, comments) and what it counts.
_FLOW_TOKEN = re.compile(
    r"'(?:[^']|'')*'"  # a single-quoted scalar
    r'|"(?:[^"\\]|\\.)*"'  # a double-quoted scalar
    r"|(?:^|(?<=\s))#[^\n]*"  # a comment
    r"|[\[\]{}]",
    re.MULTILINE,
)


def _flow_too_deep(
    text: str, start: int, depth: int, exc: yaml.MarkedYAMLError
) -> tuple[int, int, str]:
    """Where flow brackets after ``start`` (at ``depth``) first nest deeper than
    :data:`MAX_DEPTH` (libyaml's mark if the count, which does not know every YAML
    rule, finds no such place)."""
    for match in _FLOW_TOKEN.finditer(text, start):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                offset = match.start()
                line = text.count("\n", 0, offset) + 1
                return line, offset - (text.rfind("\n", 0, offset) + 1) + 1, ""
        elif token in "]}":
            depth = max(0, depth - 1)
    mark = exc.problem_mark
    return (mark.line + 1, mark.column + 1, "") if mark is not None else (1, 1, "")


def _is_key(stack: list[_Frame]) -> bool:
    return bool(stack) and stack[-1].is_map and stack[-1].index % 2 == 0


def _advance(stack: list[_Frame], scalar: str | None) -> None:
    """One node of the innermost collection is done; ``scalar``: its text, when a scalar."""
    if not stack:
        return
    frame = stack[-1]
    if frame.is_map and frame.index % 2 == 0:
        frame.key = scalar if scalar is not None else "?"
    frame.index += 1


def _where(event: Any, stack: list[_Frame]) -> tuple[int, int, str]:
    """Line, column and JSON pointer of the node ``event`` starts."""
    parts = []
    for frame in stack:
        if frame.is_map:
            parts.append(escape_pointer(frame.key) if frame.index % 2 else "?")
        else:
            parts.append(str(frame.index))
    mark = event.start_mark
    pointer = "".join(f"/{part}" for part in parts)
    return mark.line + 1, mark.column + 1, pointer
