"""CEL expressions and Jinja2 prompt templates, compiled once and cached.

CEL is evaluated by ``common-expression-language``. Its static analysis lists
the root variables an expression reads but not the members it selects, so
:func:`state_fields_read` scans tokens for ``state.<field>`` and
``state["<field>"]`` (see docs/decisions.md).
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import types
from collections.abc import Mapping
from typing import Any

# The cel package's __init__ imports its command-line REPL (typer, prompt_toolkit,
# pygments: about a quarter of a second), which nothing here uses; an empty
# stand-in keeps `plait validate` quick (docs/decisions.md 85).
sys.modules.setdefault("cel.cli", types.ModuleType("cel.cli"))

import cel  # noqa: E402
from jinja2 import StrictUndefined, TemplateError  # noqa: E402
from jinja2 import nodes as jinja_nodes  # noqa: E402
from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: E402

#: Names an expression may read at its root.
ROOTS = frozenset({"state", "input", "result", "run", "item", "index"})


class ExpressionError(Exception):
    """A CEL expression or template that does not compile or fails to evaluate."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{message} (in {source!r})")
        self.source = source
        self.message = message


#: Characters of one CEL expression. Spec expressions are a line or two; the CEL
#: library panics (a Rust panic, not an exception) formatting an error past
#: column ~65,000.
MAX_CEL_CHARS = 10_000


@functools.lru_cache(maxsize=4096)
def compile_cel(source: str) -> cel.Program:
    """Compile a CEL expression once; raise :class:`ExpressionError` when it does not parse."""
    if len(source) > MAX_CEL_CHARS:
        raise ExpressionError(
            source[:40] + "…",
            f"the expression is {len(source):,} characters long; at most "
            f"{MAX_CEL_CHARS:,} are allowed",
        )
    try:
        return cel.compile(source)
    except ValueError as exc:
        raise ExpressionError(source, cel_syntax_message(str(exc))) from None
    except BaseException as exc:
        # pyo3 turns a panic of the Rust library into PanicException, a
        # BaseException: a bad expression must not end the process.
        if type(exc).__name__ != "PanicException":
            raise
        raise ExpressionError(source, "the CEL library could not read this expression") from None


_PARSER_ERROR = re.compile(r"ERROR: <input>:\d+:(\d+): (?:Syntax error: )?(.*)")
_EXPECTED = re.compile(r"\s*expecting (?:\{.*\}|\S+)\s*$")


def cel_syntax_message(raw: str) -> str:
    """The parser's first error in words: where it is and what went wrong.

    The CEL library reports ANTLR's messages, with the full set of tokens it
    expected; a person needs the position and the unexpected token.
    """
    match = _PARSER_ERROR.search(raw)
    if match is None:
        return _first_line(raw)
    column, detail = int(match.group(1)), match.group(2).strip()
    detail = _EXPECTED.sub("", detail)
    detail = (
        detail.replace("mismatched input '<EOF>'", "the expression ends too early")
        .replace("at '<EOF>'", "at the end")
        .replace("mismatched input", "unexpected")
        .replace("extraneous input", "unexpected")
        .replace("no viable alternative at input", "cannot read")
        .replace("token recognition error at:", "cannot read")
    )
    if detail.startswith("Incomplete `ExprContext` for `_?_:_`"):
        detail = "a `? :` conditional is missing its `:` part"
    return f"syntax error at character {column}: {detail}"


def cel_variables(source: str) -> list[str]:
    """Root variables read by a CEL expression (comprehension variables included)."""
    return list(compile_cel(source).variables())


def evaluate(source: str, context: Mapping[str, Any]) -> Any:
    """Evaluate a CEL expression against ``context`` (JSON-like values only).

    The CEL library hands every map back in a hash order that changes from one
    process to the next. So a map literal's keys come back in the order they are
    written (:func:`written_order`), and a plain field path (``result``,
    ``state.plan["steps"]``), alone or as a map literal's value, is looked up here
    and keeps the order of the map it names; it is also cheaper than converting the
    whole context for the library.
    """
    program = compile_cel(source)
    path = field_path(source)
    if path is not None:
        found = _resolve(path, context)
        if found is not _MISSING:
            return found
    try:
        value = program.execute({key: to_plain(value) for key, value in context.items()})
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        detail = f"no such key {exc}" if isinstance(exc, KeyError) else _first_line(str(exc))
        raise ExpressionError(source, detail) from None
    order = written_order(source)
    return value if order is None else _in_order(value, order, context)


def to_plain(value: Any) -> Any:
    """Turn state values (pydantic models, LangChain messages, tuples) into JSON-like data."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return to_plain(dump())
    return str(value)


#: A plain field path: a root name, then ``.field`` or ``["field"]`` selections.
Path = tuple[str, ...]

_PATH_ROOT = re.compile(r"\s*([A-Za-z_]\w*)")
_PATH_FIELD = re.compile(r"\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*('[^'\\]*'|\"[^\"\\]*\")\s*\])")
_MISSING: Any = object()


@functools.lru_cache(maxsize=4096)
def field_path(source: str) -> Path | None:
    """``source`` as its root and the fields it selects, when it is nothing more
    (``result``, ``state.a["b"]``); ``None`` otherwise."""
    match = _PATH_ROOT.match(source)
    if match is None or match.group(1) not in ROOTS:
        return None
    path, at = [match.group(1)], match.end()
    while (match := _PATH_FIELD.match(source, at)) is not None:
        path.append(match.group(1) or match.group(2)[1:-1])
        at = match.end()
    return tuple(path) if source[at:].strip() == "" else None


def _resolve(path: Path, context: Mapping[str, Any]) -> Any:
    """The plain value ``path`` names in ``context``, or ``_MISSING`` when it names
    none (the CEL library then says why)."""
    value = context.get(path[0], _MISSING)
    for field in path[1:]:
        if value is _MISSING:
            return value
        if not isinstance(value, Mapping):
            value = to_plain(value)  # a pydantic model's fields
            if not isinstance(value, dict):
                return _MISSING
        value = value.get(field, _MISSING)
    return value if value is _MISSING else to_plain(value)


_STRING = r"'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\""
_FIELD_ACCESS = re.compile(
    rf"(?P<string>{_STRING})"
    r"|(?<![\w.])(?P<root>[A-Za-z_]\w*)\s*"
    r"(?:\.\s*(?P<member>[A-Za-z_]\w*)|\[\s*(?P<quoted>'[^'\\]*'|\"[^\"\\]*\")\s*\])",
    re.DOTALL,
)


def fields_read(source: str, root: str) -> set[str]:
    """Top-level members of ``root`` that a CEL expression selects, e.g. ``state.plan``."""
    found: set[str] = set()
    for match in _FIELD_ACCESS.finditer(source):
        if match.group("string") is not None or match.group("root") != root:
            continue
        member = match.group("member") or match.group("quoted")[1:-1]
        found.add(member)
    return found


def state_fields_read(source: str) -> set[str]:
    """State fields a CEL expression reads."""
    return fields_read(source, "state")


#: The keys of a map literal as written, each with its value's own key order when the
#: value is a map literal too, its path when it is a plain field path (``None``
#: otherwise).
KeyOrder = dict[Any, "KeyOrder | Path | None"]
Token = tuple[str | None, str]

_TOKEN = re.compile(
    rf"(?P<string>{_STRING})|(?P<punct>[{{}}\[\](),:])|(?P<other>[^'\"{{}}\[\](),:]+|.)",
    re.DOTALL,
)


@functools.lru_cache(maxsize=4096)
def written_order(source: str) -> KeyOrder | None:
    """The keys of the map literal ``source`` is, in the order written (nested map
    literals' too); ``None`` when the expression is not a map literal.

    The CEL library hands a map back as a hash map whose order changes with each
    process: an approval's arguments or a node's output would list their keys in
    another order on each run. Keys that are not string literals keep the library's
    order, after the written ones.
    """
    tokens = [
        (match.lastgroup, match.group())
        for match in _TOKEN.finditer(source)
        if not match.group().isspace()
    ]
    try:
        order, end = _map_literal(tokens, 0)
    except (IndexError, SyntaxError, ValueError):
        return None  # not a literal this reads (CEL itself compiled it)
    return order if end == len(tokens) else None


def _map_literal(tokens: list[Token], at: int) -> tuple[KeyOrder | None, int]:
    """The key order of the map literal at token ``at`` and the token after it; ``None``
    (and ``at``) when none starts there."""
    if tokens[at] != ("punct", "{"):
        return None, at
    at += 1
    order: KeyOrder = {}
    while tokens[at] != ("punct", "}"):
        kind, text = tokens[at]
        if kind == "string" and tokens[at + 1] == ("punct", ":"):
            key, value_at = ast.literal_eval(text), at + 2
            nested, after = _map_literal(tokens, value_at)
            if nested is not None and tokens[after][1] in (",", "}"):
                order.setdefault(key, nested)
                at = after
            else:
                at = _entry_end(tokens, value_at)
                order.setdefault(key, field_path("".join(text for _, text in tokens[value_at:at])))
        else:
            at = _entry_end(tokens, at)
        if tokens[at] == ("punct", ","):
            at += 1
        elif tokens[at] != ("punct", "}"):
            return None, at
    return order, at + 1


def _entry_end(tokens: list[Token], at: int) -> int:
    """The ``,`` or ``}`` ending the map entry (or value) that starts at token ``at``."""
    depth = 0
    while True:
        kind, text = tokens[at]
        if kind == "punct":
            if text in "([{":
                depth += 1
            elif text in ")]}":
                if depth == 0:
                    return at
                depth -= 1
            elif text == "," and depth == 0:
                return at
        at += 1


def _in_order(value: Any, order: KeyOrder, context: Mapping[str, Any]) -> Any:
    """``value`` (what a map literal gave) with its keys in ``order``, then the others;
    a value given by a field path is the one it names in ``context``, in its order."""
    if not isinstance(value, dict):
        return value
    ordered = {key: _entry(value[key], order[key], context) for key in order if key in value}
    ordered.update((key, item) for key, item in value.items() if key not in ordered)
    return ordered


def _entry(value: Any, written: KeyOrder | Path | None, context: Mapping[str, Any]) -> Any:
    if isinstance(written, dict):
        return _in_order(value, written, context)
    if isinstance(written, tuple):
        found = _resolve(written, context)
        return value if found is _MISSING else found
    return value


def compile_regex(source: str) -> re.Pattern[str]:
    """A scripted reply's ``when`` as a pattern; raise :class:`ExpressionError` naming why not."""
    try:
        return re.compile(source)
    except re.error as exc:
        raise ExpressionError(source, str(exc)) from None
    except RecursionError:
        # The `re` parser recurses once per nested group.
        raise ExpressionError(source, "the pattern nests groups too deeply to read") from None


# --------------------------------------------------------------------------- templates

_JINJA = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False)


@functools.lru_cache(maxsize=4096)
def _compile_template(source: str) -> Any:
    try:
        return _JINJA.from_string(source)
    except TemplateError as exc:
        raise ExpressionError(source, _first_line(str(exc))) from None
    except RecursionError:
        # Jinja2's parser recurses once per nested `(`, `[` or block.
        raise ExpressionError(
            source, "the template nests brackets or blocks too deeply to read"
        ) from None


def check_template(source: str) -> None:
    """Raise :class:`ExpressionError` when a template does not parse."""
    _compile_template(source)


def render(source: str, context: Mapping[str, Any]) -> str:
    """Render a prompt template in the sandbox; an undefined name is an error.

    Only what the template reads is turned into plain data: a root it never
    names is left out, and of a mapping root it selects fields of by name
    (``state.plan``, ``state['plan']``) only those fields are converted. A
    prompt of one ``map`` item then costs the same whatever else the state
    holds, instead of converting the whole state (its list of items included)
    once per item.
    """
    template = _compile_template(source)
    plain: dict[str, Any] = {}
    for key, fields in _template_reads(source).items():
        if key not in context:
            continue
        value = context[key]
        if fields is None or not isinstance(value, Mapping):
            plain[key] = to_plain(value)
        else:
            plain[key] = {field: to_plain(value[field]) for field in fields if field in value}
    try:
        return str(template.render(**plain))
    except TemplateError as exc:
        raise ExpressionError(source, _first_line(str(exc))) from None


#: Attribute names a template may call on a mapping: such a use needs all of it.
_MAPPING_METHODS = frozenset(dir(dict))


@functools.lru_cache(maxsize=4096)
def _template_reads(source: str) -> dict[str, frozenset[str] | None]:
    """Root names a template reads, each with the fields it selects by name (None: all)."""
    reads: dict[str, set[str] | None] = {}

    def visit(node: jinja_nodes.Node, parent: jinja_nodes.Node | None) -> None:
        if isinstance(node, jinja_nodes.Name) and node.ctx == "load":
            field = _selected_field(node, parent)
            known = reads.get(node.name, set())
            if field is None or known is None:
                reads[node.name] = None
            else:
                known.add(field)
                reads[node.name] = known
        for child in node.iter_child_nodes():
            visit(child, node)

    visit(_JINJA.parse(source), None)
    return {name: None if fields is None else frozenset(fields) for name, fields in reads.items()}


def _selected_field(name: jinja_nodes.Name, parent: jinja_nodes.Node | None) -> str | None:
    """The field ``parent`` selects of ``name`` by a constant (``x.f``, ``x['f']``), if so."""
    if isinstance(parent, jinja_nodes.Getattr) and parent.node is name:
        return None if parent.attr in _MAPPING_METHODS else parent.attr
    if (
        isinstance(parent, jinja_nodes.Getitem)
        and parent.node is name
        and isinstance(parent.arg, jinja_nodes.Const)
        and isinstance(parent.arg.value, str)
    ):
        return str(parent.arg.value)
    return None


_TEMPLATE_STATE = re.compile(r"\bstate\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*['\"]([^'\"]+)['\"]\s*\])")


def template_state_fields(source: str) -> set[str]:
    """State fields a template reads (``state.x`` / ``state['x']``)."""
    return {a or b for a, b in _TEMPLATE_STATE.findall(source)}


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
