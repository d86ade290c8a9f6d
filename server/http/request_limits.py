"""The edge of every request: a body size limit, and JSON that Postgres and Python can hold.

A pure ASGI middleware in front of every route (``create_app`` installs it):

- a body larger than ``max_body_bytes`` is refused with 413 before it is
  read any further (a ``Content-Length`` over the limit before reading at all);
- a NUL character in the path or the query is refused with 422;
- a JSON body (``application/json``, ``*+json``) is checked once with orjson,
  which is strict: ``NaN``, ``Infinity``, numbers beyond a double or of
  thousands of digits, unpaired surrogates and nesting past 1,024 levels are
  not JSON it accepts. Such a body, a NUL character (``\\u0000``, which
  Postgres cannot store in text or jsonb) and nesting deeper than
  :data:`MAX_JSON_DEPTH` (Python's own JSON encoders recurse per level) are
  refused with 422 naming the field as a JSON pointer.

So nothing odd reaches a route, Pydantic or Postgres, and Postgres's raw error
text never becomes an answer. The body is read into memory here (bounded by the
limit) and handed on unchanged. A body within the limit costs one orjson
parse (about 1 ms per MiB); the rare odd one is parsed again with the standard
library to find where it is odd.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plait.engine.spec import escape_pointer
from plait.server.http.problems import Problem, problem_asgi_response

#: A refused body up to this size is read (and dropped) before the 413, so the
#: client gets the answer instead of a reset connection; a larger one is not.
DRAIN_BYTES = 64 * 1024 * 1024
#: Lists and objects nested in each other in a JSON body.
MAX_JSON_DEPTH = 100
#: Methods whose requests normally carry no body: not read unless they announce one.
_BODYLESS = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})
#: Text Postgres refuses (NUL) or that is not Unicode (an unpaired surrogate).
_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")


class RequestLimits:
    """ASGI middleware: refuse oversized bodies, NUL in the URL, and odd JSON (module doc)."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request, then hand it (with its body replayed) to the app."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = _url_problem(scope)
        if problem is not None:
            await problem_asgi_response(scope, problem)(scope, receive, send)
            return
        headers = {name.lower(): value for name, value in scope.get("headers", ())}
        length = _content_length(headers)
        if length is not None and length > self.max_body_bytes:
            if length <= DRAIN_BYTES:
                await _drain(receive)
            await self._too_large(scope, receive, send, length)
            return
        if length is None and b"transfer-encoding" not in headers and scope["method"] in _BODYLESS:
            await self.app(scope, receive, send)
            return
        body = await self._read(receive)
        if body is None:
            await _drain(receive)
            await self._too_large(scope, receive, send, None)
            return
        if body and _is_json(headers.get(b"content-type", b"")):
            problem = json_problem(body)
            if problem is not None:
                await problem_asgi_response(scope, problem)(scope, receive, send)
                return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, or ``None`` as soon as it passes the limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client went away: the app sees an empty body and the disconnect
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _too_large(
        self, scope: Scope, receive: Receive, send: Send, size: int | None
    ) -> None:
        said = f" ({size:,} bytes)" if size is not None else ""
        problem = Problem(
            413,
            f"the request body is larger than this server's limit of "
            f"{self.max_body_bytes:,} bytes{said}; send less, or ask the operator to raise "
            "PLAIT_MAX_BODY_BYTES (`plait serve --max-body-bytes`)",
            kind="body-too-large",
            title="Request body too large",
            # The rest of the body is not read: the connection cannot be reused.
            headers={"Connection": "close"},
        )
        await problem_asgi_response(scope, problem)(scope, receive, send)


async def _drain(receive: Receive) -> None:
    """Read and drop the rest of a refused body (at most :data:`DRAIN_BYTES`).

    Closing a connection with unread data makes the kernel reset it, and the
    client may then lose the 413 it was sent; dropped chunks cost no parsing.
    """
    size = 0
    while size <= DRAIN_BYTES:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        size += len(message.get("body", b""))


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields ``body`` once, then whatever the client sends next
    (its disconnect, which streaming responses wait for)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _content_length(headers: dict[bytes, bytes]) -> int | None:
    raw = headers.get(b"content-length")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None  # the server refuses it before us; read what comes


def _is_json(content_type: bytes) -> bool:
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or media.endswith(b"+json")


def _url_problem(scope: Scope) -> Problem | None:
    """A NUL character anywhere in the path or the query string: no id or filter holds one."""
    raw = scope.get("raw_path") or b""
    query = scope.get("query_string") or b""
    if "\x00" in scope.get("path", "") or b"%00" in raw or b"%00" in query or b"\x00" in query:
        return Problem(
            422,
            "the URL contains a NUL character (%00); ids, names and filters cannot hold one",
            kind="request-invalid",
            title="Invalid request",
        )
    return None


# --------------------------------------------------------------------------- JSON bodies


class _Odd:
    """A value of the standard library's parse that JSON (and Postgres) cannot hold."""

    def __init__(self, why: str) -> None:
        self.why = why


def json_problem(body: bytes) -> Problem | None:
    """Why ``body`` is JSON the server refuses, naming the field; ``None`` when it is fine."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return _explain(body, str(exc))
    # orjson accepts NUL in strings; deep nesting needs many brackets.
    deep = body.count(b"[") + body.count(b"{") > MAX_JSON_DEPTH
    if deep or b"\\u0000" in body:
        return _walk_problem(value)
    return None


def _explain(body: bytes, orjson_error: str) -> Problem:
    """Locate why orjson refused ``body``, with the standard library's lenient parse."""
    try:
        value = json.loads(
            body,
            parse_constant=lambda name: _Odd(
                f"{name} is not a JSON number (JSON has no NaN or Infinity): "
                "send null, a number or a string"
            ),
            parse_float=_float,
            parse_int=_int,
        )
    except RecursionError:
        return _refusal("", f"the JSON nests more than {MAX_JSON_DEPTH} levels deep")
    except ValueError:
        # Not JSON at all: orjson says where.
        return _refusal("", f"the body is not valid JSON: {orjson_error}", pointer_known=False)
    found = _walk_problem(value)
    if found is not None:
        return found
    return _refusal("", f"the body is not valid JSON: {orjson_error}", pointer_known=False)


def _float(text: str) -> float | _Odd:
    number = float(text)
    if math.isinf(number):
        return _Odd(f"the number {text[:40]} is too large for a 64-bit float")
    return number


def _int(text: str) -> int | _Odd:
    # Beyond a double's range orjson refuses it, and Python refuses 4,300 digits.
    if math.isinf(float(text)):
        digits = len(text.lstrip("-"))
        return _Odd(
            f"an integer of {digits:,} digits is beyond a 64-bit float's range "
            "(about 1.8e308); send it as a string"
        )
    return int(text)


def _walk_problem(value: Any) -> Problem | None:
    for pointer, why in _odd_values(value):
        return _refusal(pointer, why)
    return None


def _odd_values(value: Any) -> Iterator[tuple[str, str]]:
    """(pointer, why) of each odd value, depth first; without recursion (depth is the issue)."""
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        pointer, item, depth = stack.pop()
        if isinstance(item, _Odd):
            yield pointer, item.why
        elif isinstance(item, str):
            if _BAD_TEXT.search(item):
                yield pointer, _text_problem(item, "string")
        elif isinstance(item, dict | list):
            if depth >= MAX_JSON_DEPTH:
                yield pointer, f"the JSON nests more than {MAX_JSON_DEPTH} levels deep here"
                continue
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            children = []
            for key, child in pairs:
                token = escape_pointer(str(key))
                if isinstance(key, str) and _BAD_TEXT.search(key):
                    yield f"{pointer}/{token}", _text_problem(key, "key")
                children.append((f"{pointer}/{token}", child, depth + 1))
            stack.extend(reversed(children))


def _text_problem(text: str, what: str) -> str:
    if "\x00" in text:
        return (
            f"a NUL character (\\u0000) in a {what}: text stored by Plait (Postgres) cannot "
            "hold one; remove it"
        )
    return f"an unpaired surrogate (\\ud800-\\udfff) in a {what} is not Unicode text"


def _refusal(pointer: str, why: str, *, pointer_known: bool = True) -> Problem:
    where = f"{pointer}: " if pointer else ""
    return Problem(
        422,
        f"invalid request body: {where}{why}",
        kind="request-invalid",
        title="Invalid request",
        errors=[
            {
                "loc": ["body", *pointer.split("/")[1:]],
                "pointer": pointer if pointer_known else None,
                "msg": why,
                "type": "json-invalid",
            }
        ],
    )
