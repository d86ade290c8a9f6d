"""Read a spec from YAML into a :class:`LoadedSpec`, or explain precisely why not.

YAML is read as YAML 1.2 with the line and column of every key and item, which
every error message needs: well-formed files through libyaml
(:mod:`plait.engine.spec.libyaml_reader`, fast), anything unusual or broken through
ruamel.yaml's round-trip loader, whose errors and warnings are the reference.
The result is converted to plain Python data, then validated against the
pydantic models; pydantic's errors are rewritten into :class:`SpecIssue`\\ s
that point at the source and say how to fix the problem.
"""

from __future__ import annotations

import datetime
import difflib
import re
import types
import typing
from pathlib import Path
from typing import Any

import pydantic
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError

from plait.engine.gc_pause import gc_paused
from plait.engine.spec.document import (
    LoadedSpec,
    SourceMap,
    SourcePosition,
    escape_pointer,
    key_text,
)
from plait.engine.spec.document import pointer as json_pointer
from plait.engine.spec.errors import SpecError, SpecIssue, short_repr
from plait.engine.spec.libyaml_reader import BadScalar, read_fast
from plait.engine.spec.limits import (
    MAX_DEPTH,
    MAX_VALUES,
    LimitExceeded,
    check_events,
    check_size,
    may_alias,
)
from plait.engine.spec.models import (
    DURATION_PATTERN,
    IDENTIFIER_PATTERN,
    NODE_KINDS,
    RATE_PATTERN,
    SEMVER_PATTERN,
    GraphSpec,
)


def load_spec(path: Path) -> LoadedSpec:
    """Read and validate the spec at ``path``; raise :class:`SpecError` with every problem."""
    return parse_spec(decode_file(path), file=str(path), path=path)


def decode_file(path: Path) -> str:
    """The text of a spec file; raise :class:`SpecError` when it is unreadable or not UTF-8."""
    file = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SpecError(
            [
                _issue(
                    file,
                    1,
                    1,
                    "",
                    f"cannot read the file: {exc.strerror or exc}",
                    "check the path and its permissions",
                    "file-unreadable",
                )
            ]
        ) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecError(
            [
                _issue(
                    file,
                    line,
                    column,
                    "",
                    "the file is not UTF-8 text (is it a binary file?)",
                    "save the spec as UTF-8 YAML text",
                    "yaml-encoding",
                )
            ]
        ) from None


def parse_spec(text: str, file: str = "<string>", path: Path | None = None) -> LoadedSpec:
    """Parse and validate spec text; raise :class:`SpecError` with every problem found."""
    return read_spec(text, file, path)[0]


def read_spec(
    text: str, file: str = "<string>", path: Path | None = None
) -> tuple[LoadedSpec, list[SpecIssue]]:
    """Like :func:`parse_spec`, but also return the YAML stage's warnings."""
    with gc_paused():
        data, source_map, warnings = read_yaml(text, file)
        try:
            spec = GraphSpec.model_validate(data)
        except pydantic.ValidationError as exc:
            raise SpecError(schema_issues(exc, source_map, text, file)) from None
    loaded = LoadedSpec(
        file=file, text=text, data=data, spec=spec, source_map=source_map, path=path
    )
    return loaded, warnings


# --------------------------------------------------------------------------- YAML


def read_yaml(
    text: str, file: str, *, fast_path: bool = True
) -> tuple[dict[str, Any], SourceMap, list[SpecIssue]]:
    """YAML text -> (plain data, source map, warnings); raise :class:`SpecError` on bad YAML.

    ``fast_path=False`` forces the ruamel reader (tests compare the two).
    """
    try:
        check_size(text)
        if may_alias(text):
            # Aliases can expand exponentially: check on the events, which cost
            # one linear pass, before any reader expands them.
            check_events(text)
        fast = read_fast(text) if fast_path else None
        if fast is None:
            # ruamel is pure Python and slow on what the limits refuse: check them first.
            check_events(text)
    except LimitExceeded as exc:
        raise SpecError(
            [_issue(file, exc.line, exc.column, exc.pointer, exc.message, exc.fix, exc.code)]
        ) from None
    except BadScalar as exc:
        raise SpecError([_bad_scalar_issue(file, exc)]) from None
    if fast is not None:
        fast.positions[""] = SourcePosition(1, 1)
        warnings = [
            _truncation_warning(file, position, pointer, comment, value)
            for pointer, position, comment, value in fast.truncated
        ]
        return fast.data, SourceMap(fast.positions), warnings
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True  # so plain scalars can be told from quoted ones
    try:
        document = yaml.load(text)
    except YAMLError as exc:
        raise SpecError([_yaml_issue(exc, text, file)]) from None
    except RecursionError:
        raise SpecError(
            [
                _issue(
                    file,
                    1,
                    1,
                    "",
                    "the YAML is nested too deeply to read",
                    "flatten the document",
                    "yaml-too-deep",
                )
            ]
        ) from None
    except Exception as exc:  # ruamel raises odd errors on some malformed input
        raise SpecError(
            [
                _issue(
                    file,
                    1,
                    1,
                    "",
                    f"the YAML cannot be read: {exc}",
                    "check the YAML syntax of the file",
                    "yaml-syntax",
                )
            ]
        ) from None
    if document is None:
        raise SpecError(
            [
                _issue(
                    file,
                    1,
                    1,
                    "",
                    "the file holds no spec (it is empty or only comments)",
                    "start from `apiVersion: plait/v1`, `kind: Graph`, `metadata`, `spec`",
                    "yaml-empty",
                )
            ]
        )
    if not isinstance(document, CommentedMap):
        kind = "a list" if isinstance(document, CommentedSeq) else "a single value"
        raise SpecError(
            [
                _issue(
                    file,
                    1,
                    1,
                    "",
                    f"the top level of a spec must be a mapping, not {kind}",
                    "start from `apiVersion: plait/v1`, `kind: Graph`, `metadata`, `spec`",
                    "yaml-not-mapping",
                )
            ]
        )
    walker = _Walker(file)
    try:
        data = walker.convert(document, "", 0)
    except _TooBig as exc:
        # A backstop: the check of libyaml's events refuses these first.
        position = SourceMap(walker.positions).locate(exc.pointer)
        raise SpecError(
            [
                _issue(
                    file,
                    position.line,
                    position.column,
                    exc.pointer,
                    str(exc),
                    "remove the recursive or repeated aliases, or flatten the document",
                    "yaml-too-large",
                )
            ]
        ) from None
    walker.positions[""] = SourcePosition(1, 1)
    return data, SourceMap(walker.positions), walker.warnings


class _TooBig(Exception):
    def __init__(self, message: str, pointer: str) -> None:
        super().__init__(message)
        self.pointer = pointer


class _Walker:
    """Converts ruamel's tree to plain data while recording every key's position."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.positions: dict[str, SourcePosition] = {}
        self.warnings: list[SpecIssue] = []
        self.count = 0

    def convert(self, node: Any, pointer: str, depth: int) -> Any:
        self.count += 1
        nested = isinstance(node, CommentedMap | CommentedSeq)
        if self.count > MAX_VALUES or (nested and depth >= MAX_DEPTH):
            raise _TooBig(
                "the YAML expands to too many values or nests too deeply "
                "(recursive or repeated aliases?)",
                pointer,
            )
        if isinstance(node, CommentedMap):
            result: dict[str, Any] = {}
            for key, value in node.items():
                name = key_text(key)
                child = f"{pointer}/{escape_pointer(name)}"
                line, column = node.lc.key(key)
                self.positions[child] = SourcePosition(line + 1, column + 1)
                self._check_comment(node, key, value, child)
                result[name] = self.convert(value, child, depth + 1)
            return result
        if isinstance(node, CommentedSeq):
            items: list[Any] = []
            for index, value in enumerate(node):
                child = f"{pointer}/{index}"
                line, column = node.lc.item(index)
                self.positions[child] = SourcePosition(line + 1, column + 1)
                items.append(self.convert(value, child, depth + 1))
            return items
        return _plain_scalar(node)

    def _check_comment(self, node: CommentedMap, key: Any, value: Any, pointer: str) -> None:
        """Warn when ` #x` (no space after `#`) ended an unquoted value: likely text."""
        if type(value) is not str:  # quoted and block scalars are never cut by `#`
            return
        comments = node.ca.items.get(key)
        token = comments[2] if comments and len(comments) > 2 else None
        body = getattr(token, "value", "") or ""
        if token is None or not body.startswith("#") or len(body) < 2:
            return
        if not body[1].isspace() and body[1] != "#":
            mark = token.start_mark
            position = SourcePosition(mark.line + 1, mark.column + 1)
            comment = body.splitlines()[0]
            self.warnings.append(_truncation_warning(self.file, position, pointer, comment, value))


def _bad_scalar_issue(file: str, exc: BadScalar) -> SpecIssue:
    return _issue(
        file,
        exc.position.line,
        exc.position.column,
        exc.pointer,
        f"YAML reads {short_repr(exc.text)} as a date or number, and it is not a valid one "
        f"({exc.reason})",
        f"quote it if it is text: `'{exc.text[:40]}'`",
        "yaml-value",
    )


def _truncation_warning(
    file: str, position: SourcePosition, pointer: str, comment: str, value: str
) -> SpecIssue:
    return _issue(
        file,
        position.line,
        position.column,
        pointer,
        f"the value ends at ` {comment}`: in YAML a space followed "
        f"by `#` starts a comment, so the value is only {short_repr(value)}",
        "quote the whole value if the `#` belongs to it, or write `# ` (with a "
        "space) if it is a comment",
        "yaml-comment-truncation",
        severity="warning",
    )


def _plain_scalar(value: Any) -> Any:
    """ruamel's scalar types -> str/int/float/bool/None (JSON-like, so digests are stable)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, TaggedScalar):
        return str(value.value)
    if isinstance(value, datetime.date):  # datetime is a date too
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _yaml_issue(exc: YAMLError, text: str, file: str) -> SpecIssue:
    if isinstance(exc, ReaderError):
        line, column = _offset_position(text, exc.position)
        return _issue(
            file,
            line,
            column,
            "",
            f"the file contains a character YAML does not allow (#x{exc.character:04x}); "
            "is it a binary file?"
            if isinstance(exc.character, int)
            else str(exc),
            "remove the control character, or save the spec as plain UTF-8 text",
            "yaml-encoding",
        )
    if not isinstance(exc, MarkedYAMLError):
        return _issue(file, 1, 1, "", str(exc), "check the YAML syntax", "yaml-syntax")
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = exc.problem or exc.context or "invalid YAML"
    if "duplicate key" in problem:
        key = re.search(r'duplicate key "(.*?)"', problem)
        first = exc.context_mark.line + 1 if exc.context_mark is not None else line
        name = key.group(1) if key else "?"
        return _issue(
            file,
            line,
            column,
            "",
            f"duplicate key `{name}` in the mapping that starts on line {first}",
            f"keep one `{name}` and remove or rename the other; YAML would silently keep "
            "only the last one",
            "yaml-duplicate-key",
        )
    if "another document" in problem or "single document" in (exc.context or ""):
        return _issue(
            file,
            line,
            column,
            "",
            "the file holds more than one YAML document (`---`)",
            "keep one spec per file: move each document after `---` to a file of its own",
            "yaml-multiple-documents",
        )
    if "'\\t'" in problem or "\t" in problem:
        return _issue(
            file,
            line,
            column,
            "",
            "a tab character in the indentation or between tokens",
            "YAML indents with spaces only: replace the tab with spaces",
            "yaml-tab",
        )
    unclosed = _unclosed_issue(exc, file, line, column)
    if unclosed is not None:
        return unclosed
    if "expected <block end>" in problem or "mapping values are not allowed" in problem:
        misplaced = _indentation_issue(text, file, line)
        if misplaced is not None:
            return misplaced
    if "mapping values are not allowed" in problem:
        return _issue(
            file,
            line,
            column,
            "",
            "a `: ` inside an unquoted value starts a new mapping",
            "quote the whole value. A CEL conditional needs quotes: "
            "`route: \"state.ok ? 'yes' : 'no'\"`; so does text containing `: `",
            "yaml-syntax",
        )
    return _issue(
        file,
        line,
        column,
        "",
        f"invalid YAML: {problem}",
        "quote values that contain `: ` or ` #`, or that start with `{`, `[`, `*`, `&`, `!`, "
        "`%`, `@`, `?` or a backtick; indent with spaces",
        "yaml-syntax",
    )


#: What opens each construct YAML reports as never ended, and what closes it.
_OPENERS = {
    "while parsing a flow sequence": ("[", "]", "list"),
    "while parsing a flow mapping": ("{", "}", "mapping"),
}


def _unclosed_issue(exc: MarkedYAMLError, file: str, line: int, column: int) -> SpecIssue | None:
    """An unclosed ``[``, ``{`` or quote, located where it was opened (the parser stops
    lines later, where it gives up)."""
    start = exc.context_mark
    # Stopped on the line that opened it: the content is wrong, not the end (e.g. `? :`).
    if start is None or start.line + 1 == line:
        return None
    context = exc.context or ""
    at = f"line {start.line + 1}, column {start.column + 1}"
    gave_up = f"line {line}, column {column}"
    if context in _OPENERS:
        opener, closer, what = _OPENERS[context]
        return _issue(
            file,
            start.line + 1,
            start.column + 1,
            "",
            f"the `{opener}` opened at {at} is never closed: YAML read the {what} on "
            f"to {gave_up} looking for `,` or `{closer}`",
            f"close the {what} with `{closer}`, or quote the value if the `{opener}` is "
            f'meant as text (`key: "{opener}..."`)',
            "yaml-unclosed",
        )
    if context == "while scanning a quoted scalar":
        quote = "'" if _quote_at(exc) == "'" else '"'
        inner = "`''`" if quote == "'" else '`\\"`'
        return _issue(
            file,
            start.line + 1,
            start.column + 1,
            "",
            f"the `{quote}` opened at {at} is never closed: the text runs on to {gave_up}",
            f"end the text with a closing `{quote}` (a `{quote}` inside it is written {inner})",
            "yaml-unclosed",
        )
    return None


def _quote_at(exc: MarkedYAMLError) -> str:
    """The character at the error's context mark (the opening quote)."""
    mark = exc.context_mark
    buffer = getattr(mark, "buffer", None)
    pointer = getattr(mark, "pointer", None)
    if isinstance(buffer, str) and isinstance(pointer, int) and 0 <= pointer < len(buffer):
        return buffer[pointer]
    return '"'


def _indentation_issue(text: str, file: str, line: int) -> SpecIssue | None:
    """Line ``line`` indented to no level of the mappings above it, or deeper than a
    key above that already has a value; ``None`` when its indentation is not the cause."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    here = lines[line - 1]
    indent = len(here) - len(here.lstrip(" "))
    # The keys above it, innermost first: each one less indented than the last.
    chain: list[tuple[int, int, str]] = []  # (line, indent, key)
    for number in range(line - 1, 0, -1):
        above = lines[number - 1]
        stripped = above.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        level = len(above) - len(stripped)
        if chain and level >= chain[-1][1]:
            continue
        key = stripped.removeprefix("- ").split(":", 1)[0].strip()
        chain.append((number, level + (len(stripped) - len(stripped.removeprefix("- "))), key))
        if level == 0:
            break
    if not chain:
        return None
    nearest = chain[0]
    key = here.strip().split(":", 1)[0].strip()
    subject = f"`{key}` on line {line}" if key else f"line {line}"
    if indent > nearest[1]:
        opens_block = re.sub(r"\s+#.*$", "", lines[nearest[0] - 1]).rstrip().endswith(":")
        if opens_block:
            return None
        message = (
            f"{subject} is indented deeper (column {indent + 1}) than "
            f"`{nearest[2]}` on line {nearest[0]} (column {nearest[1] + 1}), which already "
            "has a value"
        )
    elif any(level == indent for _, level, _ in chain):
        return None
    else:
        message = (
            f"{subject} is indented to column {indent + 1}, which lines up with no key above it"
        )
    options = [
        f"column {level + 1} (beside `{name}`, line {number})"
        for number, level, name in sorted(chain, key=lambda item: abs(item[1] - indent))[:2]
    ]
    return _issue(
        file,
        line,
        indent + 1,
        "",
        message,
        f"indent it to {' or '.join(options)}: YAML nests keys by their indentation",
        "yaml-indentation",
    )


def _offset_position(text: str, offset: int) -> tuple[int, int]:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


# --------------------------------------------------------------------------- schema

_PATTERN_HINTS = {
    IDENTIFIER_PATTERN: (
        "a name: letters, digits and `_`, not starting with a digit",
        "rename it, e.g. `my_node` instead of `my-node`",
    ),
    SEMVER_PATTERN: (
        'a semantic version such as "1.0.0"',
        'write MAJOR.MINOR.PATCH in quotes, e.g. `version: "1.0.0"`',
    ),
    DURATION_PATTERN: (
        'a duration such as "30s", "250ms", "5m", "2h", or a number of seconds',
        "write e.g. `timeout: 30s` or `timeout: 30`",
    ),
    RATE_PATTERN: (
        'a rate: a number of calls per second, minute or hour, such as "10/s" or "600/min"',
        "write e.g. `rate: 10/s`, `rate: 600/min` or `rate: 100/h`",
    ),
}


def schema_issues(
    exc: pydantic.ValidationError,
    source_map: SourceMap,
    text: str,
    file: str,
) -> list[SpecIssue]:
    """Rewrite pydantic errors as issues: one per pointer, located, each with a fix."""
    grouped: dict[str, list[tuple[dict[str, Any], _Resolved]]] = {}
    for error in _relevant(exc.errors(include_url=False)):
        resolved = _resolve(error["loc"])
        grouped.setdefault(resolved.pointer, []).append((dict(error), resolved))
    issues = []
    for pointer, errors in grouped.items():
        position = source_map.locate(pointer)
        message, fix, code = _explain(errors, text, position)
        issues.append(_issue(file, position.line, position.column, pointer, message, fix, code))
    return issues


def _relevant(errors: list[Any]) -> list[Any]:
    """The errors that explain a value, without the union members it plainly is not.

    A mapping given where a union takes scalars or a model (an argument:
    CEL, a number... or ``{value: ...}``) fails every scalar member too;
    once the model member has errors of its own below it, those say what
    is wrong, and "must be text or a number" is noise.
    """
    locs = [tuple(e["loc"]) for e in errors]

    def deeper_sibling(loc: tuple[Any, ...]) -> bool:
        # Another member of the same union (same location but the tag) failed further down.
        return any(len(other) > len(loc) and other[: len(loc) - 1] == loc[:-1] for other in locs)

    return [
        e
        for e in errors
        if not (
            isinstance(e.get("input"), dict)
            and e["type"].endswith("_type")
            and deeper_sibling(tuple(e["loc"]))
        )
    ]


class _Resolved(typing.NamedTuple):
    pointer: str
    parent: type[BaseModel] | None  # the model holding the field, when known
    field: str | None  # the key at the end of the pointer
    is_key: bool  # the error is about a mapping key itself


def _resolve(loc: tuple[int | str, ...]) -> _Resolved:
    """Map a pydantic error location to a JSON pointer, dropping union tags.

    The location is walked alongside the model types, so a union member's tag
    (``llm`` in ``nodes/plan/llm/model``) is recognised as a tag even when it
    also names a key (a ``tool`` node has a ``tool`` key).
    """
    tp: Any = GraphSpec
    parts: list[str] = []
    parent: type[BaseModel] | None = None
    field: str | None = None
    for comp in loc:
        if comp == "[key]":
            return _Resolved(json_pointer(*parts), parent, field, True)
        tp = _strip(tp)
        members = _union_members(tp)
        if members is not None:
            tp = _pick_member(members, str(comp))
            continue
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            parent, field = tp, str(comp)
            info = _field_by_alias(tp, str(comp))
            tp = info.annotation if info is not None else None
        elif typing.get_origin(tp) is dict:
            parent, field = None, str(comp)
            tp = typing.get_args(tp)[1]
        elif typing.get_origin(tp) is list:
            parent, field = None, str(comp)
            tp = typing.get_args(tp)[0]
        else:
            tp = None
        parts.append(str(comp))
    return _Resolved(json_pointer(*parts), parent, field, False)


def _strip(tp: Any) -> Any:
    """Unwrap ``Annotated`` and drop ``None`` from ``X | None``."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    members = _raw_union(tp)
    if members is not None:
        kept = [m for m in members if m is not type(None)]
        if len(kept) == 1:
            return _strip(kept[0])
    return tp


def _raw_union(tp: Any) -> tuple[Any, ...] | None:
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return typing.get_args(tp)
    return None


def _union_members(tp: Any) -> list[Any] | None:
    members = _raw_union(tp)
    if members is None:
        return None
    return [m for m in members if m is not type(None)]


def _pick_member(members: list[Any], tag: str) -> Any:
    """The union member a pydantic tag names: a node kind, an edge form, or a type name."""
    for member in members:
        for meta in getattr(member, "__metadata__", ()):
            if getattr(meta, "tag", None) == tag:
                return typing.get_args(member)[0]
        inner = _strip(member)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            if inner.__name__ == tag:  # a model in a smart union is tagged by its name
                return inner
            kind = inner.model_fields.get("kind")
            if kind is not None and tag in typing.get_args(kind.annotation):
                return inner
    return None  # a scalar union (float | str): nothing below it to resolve


def _field_by_alias(model: type[BaseModel], key: str) -> FieldInfo | None:
    for name, info in model.model_fields.items():
        if (info.alias or name) == key:
            return info
    return None


def _allowed_keys(model: type[BaseModel] | None) -> list[str]:
    if model is None:
        return []
    return [info.alias or name for name, info in model.model_fields.items()]


def _explain(
    errors: list[tuple[dict[str, Any], _Resolved]], text: str, position: SourcePosition
) -> tuple[str, str, str]:
    """(message, fix, code) for the errors pydantic reported at one pointer."""
    error, resolved = errors[0]
    kind: str = error["type"]
    field = resolved.field or "value"
    value = error.get("input")
    patterns = {str((e.get("ctx") or {}).get("pattern")) for e, _ in errors}
    if resolved.pointer == "/metadata/version" and kind != "missing":
        return _version_problem(value, text, position)
    if DURATION_PATTERN in patterns:
        hint, _ = _PATTERN_HINTS[DURATION_PATTERN]
        # The fix names the field it is about (`for`, `expires_in`, `timeout`...).
        fix = f"write e.g. `{field}: 30s`, `{field}: 5m` or `{field}: 30` (seconds)"
        return f"`{field}` must be {hint}, not {short_repr(value)}", fix, "schema-value"
    if kind == "missing":
        return _missing(resolved)
    if kind == "extra_forbidden":
        return _unknown_key(resolved)
    if kind == "union_tag_invalid":
        tag = (error.get("ctx") or {}).get("tag")
        if "/edges/" in resolved.pointer:
            return (
                f"edge form {tag!r} is unknown",
                "write an edge as `{from, to}`, `{from, switch, default}` or `{from, route, to}`",
                "schema-type",
            )
        return (
            f"unknown node kind `{tag}`",
            f"use one of: {', '.join(NODE_KINDS)}{_did_you_mean(str(tag), NODE_KINDS)}",
            "unknown-node-kind",
        )
    if kind == "union_tag_not_found":
        return (
            "this node has no `kind`",
            f"add `kind:` with one of: {', '.join(NODE_KINDS)}",
            "unknown-node-kind",
        )
    if kind == "literal_error":
        expected = _literal_choices(error)
        return (
            f"`{field}` cannot be {short_repr(value)}; expected one of: {', '.join(expected)}",
            f"use one of: {', '.join(expected)}{_did_you_mean(str(value), expected)}",
            "schema-value",
        )
    if kind == "string_pattern_mismatch":
        return _pattern_problem(error, resolved, field, value)
    if kind in ("too_short", "too_long"):
        return f"`{field}`: {error['msg'].lower()}", _size_fix(error, field), "schema-value"
    if kind.startswith(("greater_than", "less_than")):
        return (
            f"`{field}` is {short_repr(value)}: {error['msg'].lower()}",
            f"change `{field}` to a value that is {_bound(error)}",
            "schema-value",
        )
    if kind == "value_error":
        message = str(error["msg"]).removeprefix("Value error, ")
        return message, "see docs/spec-language.md", "schema-value"
    return _type_problem(errors, field, value)


def _version_problem(value: Any, text: str, position: SourcePosition) -> tuple[str, str, str]:
    written = _written_value(text, position) or repr(value)
    if isinstance(value, str):
        return (
            f'`version` must be a semantic version like "1.0.0", not {short_repr(value)}',
            'write MAJOR.MINOR.PATCH in quotes, e.g. `version: "1.0.0"`',
            "version-format",
        )
    if not isinstance(value, int | float) or isinstance(value, bool):
        return (
            f'`version` must be a quoted string like "1.0.0", not {_describe(value)}',
            'write `version: "1.0.0"` under metadata',
            "version-not-string",
        )
    parts = written.strip("'\"").split(".")
    suggestion = ".".join([*parts, "0", "0"][:3]) if all(p.isdigit() for p in parts) else "1.0.0"
    return (
        f"`version: {written}` is read by YAML as a number, not a string "
        "(1.10 would even become 1.1)",
        f'quote it: `version: "{suggestion}"`',
        "version-not-string",
    )


def _written_value(text: str, position: SourcePosition) -> str | None:
    lines = text.splitlines()
    if not 1 <= position.line <= len(lines):
        return None
    match = re.search(r":\s*([^\s#,}\]]+)", lines[position.line - 1][position.column - 1 :])
    return match.group(1) if match else None


def _missing(resolved: _Resolved) -> tuple[str, str, str]:
    field = resolved.field or "value"
    if resolved.pointer == "/metadata/version":
        fix = 'add `version: "1.0.0"` under metadata'
    elif resolved.pointer == "/metadata":
        fix = 'add `metadata:` with `name: my-graph` and `version: "1.0.0"`'
    elif resolved.pointer == "/apiVersion":
        fix = "add `apiVersion: plait/v1` at the top"
    elif resolved.pointer == "/kind":
        fix = "add `kind: Graph` at the top"
    else:
        description = _description(resolved)
        fix = f"add `{field}:`" + (f" ({description})" if description else "")
    where = resolved.pointer.rsplit("/", 1)[0] or "the document"
    return f"`{field}` is required in {where}", fix, "schema-missing-key"


def _description(resolved: _Resolved) -> str:
    if resolved.parent is None or resolved.field is None:
        return ""
    info = _field_by_alias(resolved.parent, resolved.field)
    return (info.description or "") if info is not None else ""


def _unknown_key(resolved: _Resolved) -> tuple[str, str, str]:
    field = resolved.field or "?"
    allowed = _allowed_keys(resolved.parent)
    where = resolved.pointer.rsplit("/", 1)[0] or "the document"
    suggestion = _did_you_mean(field, allowed)
    if suggestion:
        fix = suggestion.removeprefix("; ")
    elif allowed:
        fix = f"remove it; the keys allowed here are: {', '.join(allowed)}"
    else:
        fix = "remove it"
    return f"unknown key `{field}` in {where}", fix, "schema-unknown-key"


def _did_you_mean(word: str, choices: typing.Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def _literal_choices(error: dict[str, Any]) -> list[str]:
    expected = str((error.get("ctx") or {}).get("expected", ""))
    return re.findall(r"'([^']*)'", expected) or [expected]


def _pattern_problem(
    error: dict[str, Any], resolved: _Resolved, field: str, value: Any
) -> tuple[str, str, str]:
    pattern = str((error.get("ctx") or {}).get("pattern"))
    hint, fix = _PATTERN_HINTS.get(pattern, ("", ""))
    if resolved.is_key:
        hint = hint or f"a key matching {pattern}"
        return f"`{field}` is not a valid name: it must be {hint}", fix, "schema-value"
    if "@" in pattern:
        hint, fix = (
            "`name@version`, e.g. `research@1.0.0`",
            "pin the version: `ref: research@1.0.0`",
        )
    elif ":" in pattern:
        hint, fix = "`module:function`", "write e.g. `function: my_module:my_function`"
    elif pattern.startswith("^[a-z0-9]"):
        hint, fix = "lowercase letters, digits and `-`", "rename it, e.g. `my-graph`"
    elif not hint:
        hint, fix = f"text matching {pattern}", f"change `{field}` to match {pattern}"
    return f"`{field}` must be {hint}, not {short_repr(value)}", fix, "schema-value"


def _size_fix(error: dict[str, Any], field: str) -> str:
    ctx = error.get("ctx") or {}
    if "min_length" in ctx:
        return f"give `{field}` at least {ctx['min_length']} item(s) or character(s)"
    return f"shorten `{field}` to at most {ctx.get('max_length')}"


def _bound(error: dict[str, Any]) -> str:
    ctx = error.get("ctx") or {}
    words = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    return " and ".join(f"{words[k]} {v}" for k, v in ctx.items() if k in words) or "in range"


_TYPE_WORDS = {
    "string": "text",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "dict": "a mapping (`key: value` lines)",
    "model": "a mapping (`key: value` lines)",
    "list": "a list (`- item` lines)",
}


def _type_problem(
    errors: list[tuple[dict[str, Any], _Resolved]], field: str, value: Any
) -> tuple[str, str, str]:
    wanted: list[str] = []
    for error, _ in errors:
        head = str(error["type"]).split("_")[0]
        word = _TYPE_WORDS.get(head, str(error["msg"]).lower())
        if word not in wanted:
            wanted.append(word)
    expected = " or ".join(wanted)
    got = _describe(value)
    fix = f"change `{field}` to {expected}"
    if isinstance(value, str) and value.lower() in ("yes", "no", "on", "off", "y", "n"):
        fix += " (YAML 1.2 reads `yes`/`no` as text: write `true`/`false`)"
    return f"`{field}` must be {expected}, not {got}", fix, "schema-type"


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty (null)"
    return (
        f"{type(value).__name__} {short_repr(value)}"
        if not isinstance(value, str)
        else short_repr(value)
    )


def _issue(
    file: str,
    line: int,
    column: int,
    pointer: str,
    message: str,
    fix: str,
    code: str,
    severity: typing.Literal["error", "warning"] = "error",
) -> SpecIssue:
    return SpecIssue(
        file=file,
        line=max(1, line),
        column=max(1, column),
        pointer=pointer,
        message=message,
        fix=fix,
        code=code,
        severity=severity,
    )
