"""Fast path for reading well-formed specs: libyaml's composer, YAML 1.2 values.

ruamel.yaml's round-trip loader is pure Python and reads about 6 KB of YAML per
10 ms here: a 500-node spec took 0.6 s. libyaml (through PyYAML's C composer)
builds the same node tree, with the line and column of every node, in a tenth
of that. Plain scalars are then resolved with ruamel's YAML 1.2 resolver and
constructor, so the values are exactly those the ruamel path produces.

Anything out of the ordinary (a syntax error, several documents, duplicate
keys, explicit tags, merge keys, anything past the limits of
:mod:`plait.engine.spec.limits`) returns ``None``, and the caller reads the text
again with ruamel, whose errors and warnings are the reference (after the
limits are checked on libyaml's events, which locate the refusal).
"""

from __future__ import annotations

import datetime
import functools
import re
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode as RuamelScalar

from plait.engine.spec.document import SourcePosition, escape_pointer, key_text
from plait.engine.spec.limits import MAX_ALIASES, MAX_DEPTH, MAX_VALUES, too_long_integer

_Loader: type[Any] | None = getattr(yaml, "CSafeLoader", None)
_RUAMEL = YAML(typ="safe", pure=True)
_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_YAML11 = yaml.resolver.Resolver()
#: A ` #` right after a plain value whose next character is not a space: likely cut text.
_CUT_COMMENT = re.compile(r"[ \t]+#[^\s#]")


class Unusual(Exception):
    """The fast path does not handle this document; read it with ruamel."""


class BadScalar(ValueError):
    """A plain value YAML 1.2 reads as a date (or number) that does not exist, e.g.
    ``2024-13-45``; ruamel would refuse it without a position."""

    def __init__(self, text: str, reason: str, position: SourcePosition, pointer: str) -> None:
        super().__init__(reason)
        self.text, self.reason, self.position, self.pointer = text, reason, position, pointer


class FastDocument:
    """Plain data, key and item positions, and values cut short by `` #``."""

    def __init__(self, text: str, max_values: int, max_depth: int) -> None:
        self.lines = text.splitlines()
        self.positions: dict[str, SourcePosition] = {}
        self.truncated: list[tuple[str, SourcePosition, str, str]] = []
        self.max_values = max_values
        self.max_depth = max_depth
        self.count = 0
        #: Values under each collection node read so far, by ``id``: libyaml
        #: composes an alias as the anchored node itself, so an alias bomb is
        #: refused at its first oversized use instead of after expanding it.
        self.sizes: dict[int, int] = {}
        self.data: Any = None


def read_fast(
    text: str, *, max_values: int = MAX_VALUES, max_depth: int = MAX_DEPTH
) -> FastDocument | None:
    """Compose ``text`` with libyaml; ``None`` when ruamel must read it instead.

    Raises :class:`BadScalar` for a value that looks like a date or number and is not one.
    """
    if _Loader is None or text.count("*") > MAX_ALIASES:
        return None  # maybe too many aliases: the events tell (composed nodes do not)
    try:
        root = yaml.compose(text, Loader=_Loader)
    except Exception:  # any YAML error: ruamel explains it precisely
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    document = FastDocument(text, max_values, max_depth)
    try:
        document.data = _convert(document, root, "", 0)
    except (Unusual, RecursionError):
        return None
    except BadScalar:
        raise
    except ValueError:  # a key that does not convert: ruamel explains it
        return None
    return document


def _convert(doc: FastDocument, node: Any, pointer: str, depth: int) -> Any:
    if isinstance(node, yaml.ScalarNode):
        doc.count += 1
        try:
            return _scalar(node)
        except ValueError as exc:
            mark = node.start_mark
            where = SourcePosition(mark.line + 1, mark.column + 1)
            raise BadScalar(node.value, str(exc), where, pointer) from None
    known = doc.sizes.get(id(node), 0)
    if doc.count + max(known, 1) > doc.max_values or depth >= doc.max_depth:
        raise Unusual  # the limits' check on the events locates it
    before = doc.count
    doc.count += 1
    value = _collection(doc, node, pointer, depth)
    doc.sizes[id(node)] = doc.count - before
    return value


def _collection(doc: FastDocument, node: Any, pointer: str, depth: int) -> Any:
    if isinstance(node, yaml.MappingNode):
        if node.tag != _MAP:
            raise Unusual
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                raise Unusual
            name = key_text(_scalar(key_node))
            if name in result:
                raise Unusual  # duplicate key: ruamel's error names both lines
            child = f"{pointer}/{escape_pointer(name)}"
            mark = key_node.start_mark
            doc.positions[child] = SourcePosition(mark.line + 1, mark.column + 1)
            value = _convert(doc, value_node, child, depth + 1)
            if isinstance(value, str) and _plain(value_node):
                _check_cut(doc, value_node, child, value)
            result[name] = value
        return result
    if isinstance(node, yaml.SequenceNode):
        if node.tag != _SEQ:
            raise Unusual
        items: list[Any] = []
        for index, item in enumerate(node.value):
            child = f"{pointer}/{index}"
            mark = item.start_mark
            doc.positions[child] = SourcePosition(mark.line + 1, mark.column + 1)
            items.append(_convert(doc, item, child, depth + 1))
        return items
    raise Unusual


def _plain(node: Any) -> bool:
    return isinstance(node, yaml.ScalarNode) and not node.style


def _scalar(node: Any) -> Any:
    """A scalar as YAML 1.2 reads it (ruamel's resolver and constructor)."""
    if node.style:  # quoted or block: a string, unless explicitly tagged (plain is "" or None)
        if node.tag != _STR:
            raise Unusual
        return node.value
    if node.tag != _implicit_yaml11_tag(node.value) or too_long_integer(node.value):
        raise Unusual  # an explicit tag such as `!!str`, or a limit to locate
    return _plain_value(node.value)


@functools.lru_cache(maxsize=65536)
def _implicit_yaml11_tag(text: str) -> str:
    return str(_YAML11.resolve(yaml.ScalarNode, text, (True, False)))


@functools.lru_cache(maxsize=65536)
def _plain_value(text: str) -> Any:
    """A plain scalar's value under YAML 1.2 (cached: keys and kinds repeat a lot)."""
    tag = _RUAMEL.resolver.resolve(RuamelScalar, text, (True, False))
    value = _RUAMEL.constructor.construct_non_recursive_object(RuamelScalar(tag, text))
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def _check_cut(doc: FastDocument, node: Any, pointer: str, value: str) -> None:
    end = node.end_mark
    if end.line >= len(doc.lines):
        return
    rest = doc.lines[end.line][end.column :]
    match = _CUT_COMMENT.match(rest)
    if match is not None:
        comment = rest[match.end() - 2 :].strip()
        position = SourcePosition(end.line + 1, end.column + match.end() - 1)
        doc.truncated.append((pointer, position, comment, value))
