"""One long-lived MCP session per server per process, on a loop of its own.

An ``mcp.Client`` must be entered and exited in the same asyncio task, and a
stdio connect costs about a second, so each server gets one owner task that
enters its client and keeps it open. The owner tasks live on a background
event loop in a daemon thread (the hub), not on the caller's loop: sessions
then outlive any one run, any one ``asyncio.run`` of the CLI and any test's
loop, and a compiled graph can read a tool's schema from sync code. Callers
hand coroutines to the hub with :meth:`McpHub.call` (async) or
:meth:`McpHub.call_sync`; cancelling the caller cancels the hub-side call.

A session whose server went away (a crashed process, a dropped HTTP session)
is dropped; the next call connects again, and so does a call made after one
of the server's secrets changed. Sessions hold secret values (headers, a
process's environment), so they are kept per :class:`Credentials` scope: two
tenants calling the same server never share one.

A stdio server is a child of the process, but no tool call's: its owner task
runs in a context no call owns (:func:`plait.engine.tools.children.unowned_context`),
so a call that times out never ends it; :meth:`McpHub.aclose` (a stopping
worker) closes every session, which stops the servers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import logging
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT, Implementation, Tool

from plait.engine.governance.secrets import SecretSource, resolve
from plait.engine.spec.expressions import cel_variables, evaluate
from plait.engine.spec.models import McpServerDef, PerRunValue, duration_seconds
from plait.engine.tools.children import unowned_context
from plait.engine.tools.mcp.task_questions import QUESTIONS
from plait.engine.tools.mcp.tasks import TasksClientExtension
from plait.engine.tools.run_values import RunValues

T = TypeVar("T")

#: How long closing every session may take (a stdio server gets SIGTERM, then SIGKILL).
CLOSE_SECONDS = 10.0
#: Sessions kept open per server with per-run values (and per secrets' owner): a new
#: one closes the least recently used idle one beyond this.
PER_RUN_SESSIONS = 8


@dataclass(frozen=True)
class ServerConnection:
    """Where an MCP server is: its spec definition and the spec's folder (for ``cwd``)."""

    name: str
    definition: McpServerDef
    base_dir: Path
    #: For a server with per-run values computed: the key of the spec's definition, which
    #: all its runs' sessions share (at most ``PER_RUN_SESSIONS`` of them are kept open).
    family: str = ""

    @property
    def key(self) -> str:
        """Identifies the session: the same definition from the same folder shares one."""
        return json.dumps(
            [self.definition.model_dump(mode="json"), str(self.base_dir)], sort_keys=True
        )

    def for_run(self, values: RunValues | None) -> ServerConnection:
        """This server with its per-run ``args``/``env`` computed from ``values``.

        A server without per-run values is itself. Raises ``ValueError`` when a
        value is not text, a number or a boolean, or when there are no values
        (a call from outside a node step).
        """
        per_run = self.definition.per_run
        if not per_run:
            return self
        if values is None:
            where = ", ".join(per_run)
            raise ValueError(
                f"MCP server {self.name!r} takes per-run values ({where}); "
                "its tools can only be called from a node of a run"
            )
        definition = self.definition
        args = [self._value(f"args[{i}]", v, values) for i, v in enumerate(definition.args)]
        env = {k: self._value(f"env.{k}", v, values) for k, v in definition.env.items()}
        computed = definition.model_copy(update={"args": args, "env": env})
        return replace(self, definition=computed, family=self.key)

    def _value(self, where: str, value: str | PerRunValue, values: RunValues) -> str:
        if isinstance(value, str):
            return value
        roots = {root: values(root) for root in cel_variables(value.expr)}
        result = evaluate(value.expr, roots)
        if isinstance(result, bool):
            return "true" if result else "false"
        if isinstance(result, str | int | float):
            return str(result)
        kind = "null" if result is None else type(result).__name__
        raise ValueError(
            f"MCP server {self.name!r}: {where} ({value.expr}) gave {kind}; "
            "a per-run value must be text, a number or a boolean"
        )

    def secret_names(self) -> list[str]:
        """The secrets the connection uses (headers, or the process's environment)."""
        return [*self.definition.headers.values(), *self.definition.secrets]

    def to_json(self) -> dict[str, Any]:
        """What a poller needs to reach the server again (secret names, never values)."""
        return {
            "name": self.name,
            "definition": self.definition.model_dump(mode="json"),
            "base_dir": str(self.base_dir),
            "family": self.family,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ServerConnection:
        """The inverse of :meth:`to_json`."""
        definition = McpServerDef.model_validate(data["definition"])
        return cls(data["name"], definition, Path(data["base_dir"]), data.get("family", ""))


@dataclass(frozen=True)
class Credentials:
    """A server's secret values for one run's source, and whose they are (``scope``)."""

    scope: str
    values: Mapping[str, str]

    @property
    def fingerprint(self) -> str:
        """Changes when a value does (a rotated secret needs a new session)."""
        return hashlib.sha256(json.dumps(dict(self.values), sort_keys=True).encode()).hexdigest()


async def credentials_of(server: ServerConnection, source: SecretSource) -> Credentials:
    """``server``'s secrets as ``source`` gives them (raises ``SecretMissing``)."""
    return Credentials(source.scope, await resolve(source, server.secret_names()))


def _stdio_parameters(server: ServerConnection, values: Mapping[str, str]) -> StdioServerParameters:
    spec = server.definition
    assert spec.command is not None
    # `python` is the interpreter running Plait, so a venv need not be activated.
    command = sys.executable if spec.command == "python" else spec.command
    args = [arg for arg in spec.args if isinstance(arg, str)]
    # The SDK adds only a few basic variables (PATH, HOME, ...) of Plait's own
    # environment, so no PLAIT_* setting reaches the process.
    env = {name: value for name, value in spec.env.items() if isinstance(value, str)}
    if len(args) != len(spec.args) or len(env) != len(spec.env):
        raise ValueError(f"MCP server {server.name!r} is started with its per-run values computed")
    env.update({name: values[name] for name in spec.secrets})
    cwd = server.base_dir / spec.cwd if spec.cwd else server.base_dir
    return StdioServerParameters(command=command, args=args, env=env, cwd=cwd)


@contextlib.asynccontextmanager
async def _http_transport(
    server: ServerConnection, values: Mapping[str, str]
) -> AsyncIterator[Any]:
    spec = server.definition
    assert spec.url is not None
    headers = {header: values[secret] for header, secret in spec.headers.items()}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(spec.url, http_client=http) as streams,
    ):
        yield streams


def new_client(server: ServerConnection, values: Mapping[str, str]) -> Client:
    """An un-entered ``Client`` for ``server`` (stdio or streamable HTTP), with the Tasks client.

    ``values`` are the server's secrets (:meth:`ServerConnection.secret_names`).
    Elicitation is announced so a task can ask for input; only questions about
    a task are taken (:mod:`plait.engine.tools.mcp.task_questions`).
    """
    spec = server.definition
    target: Any = (
        _stdio_parameters(server, values)
        if spec.transport == "stdio"
        else _http_transport(server, values)
    )
    return Client(
        target,
        extensions=[TasksClientExtension()],
        elicitation_callback=QUESTIONS.on_elicit,
        client_info=Implementation(name="plait", version="1"),
    )


class _Session:
    """One server's client, entered and exited by its owner task on the hub loop."""

    def __init__(
        self,
        server: ServerConnection,
        credentials: Credentials,
        key: str,
        on_close: Callable[[_Session], None],
    ) -> None:
        self.server = server
        self.credentials = credentials
        self.key = key
        self.ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self.client: Client | None = None
        self.tools: dict[str, Tool] = {}
        self._stop = asyncio.Event()
        self._on_close = on_close
        self.closed = False
        #: Calls using the session now, and when one last began (the hub loop's clock).
        self.in_flight = 0
        self.last_used = asyncio.get_running_loop().time()
        # The hub's, not the calling tool call's (see the module docstring).
        self.owner = asyncio.get_running_loop().create_task(
            self._own(), name=f"mcp {server.name}", context=unowned_context()
        )

    async def _own(self) -> None:
        try:
            async with new_client(self.server, self.credentials.values) as client:
                listing = await client.list_tools()
                self.tools = {tool.name: tool for tool in listing.tools}
                self.client = client
                self.ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(
                    ConnectionError(f"MCP server {self.server.name!r}: {type(exc).__name__}: {exc}")
                )
            if not isinstance(exc, Exception | asyncio.CancelledError):
                raise
        finally:
            self.closed = True
            self._on_close(self)

    def close(self) -> None:
        """Ask the owner task to exit its client (cancel it while it still connects)."""
        self._stop.set()
        if not self.ready.done():
            # A hung connect never reaches ``_stop.wait()``: without this it would
            # keep its half-started process or HTTP connection open for good.
            self.owner.cancel()


class McpHub:
    """The process's MCP sessions, on a background event loop (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sessions: dict[str, _Session] = {}

    def _hub_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="plait-mcp", daemon=True)
                thread.start()
                self._loop = loop
            return self._loop

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``work`` on the hub loop."""
        return asyncio.run_coroutine_threadsafe(work, self._hub_loop())

    async def call(self, work: Coroutine[Any, Any, T]) -> T:
        """Await ``work`` on the hub loop; cancelling this cancels it there too."""
        return await asyncio.wrap_future(self.submit(work))

    def call_sync(self, work: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``work`` on the hub loop and wait for it (from sync code, never on the hub loop)."""
        future = self.submit(work)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()  # the caller gave up: the hub-side work must not run on
            raise

    async def aclose(self) -> None:
        """Close every session (stdio servers exit); wait for them up to ``CLOSE_SECONDS``."""
        if self._loop is None:
            return
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                await self.call(self._close_all())
        except TimeoutError:
            logging.getLogger(__name__).warning(
                "MCP sessions still closing after %gs", CLOSE_SECONDS
            )

    # ------------------------------------------------------------ on the hub loop

    async def _close_all(self) -> None:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        for session in sessions:
            session.close()
        await asyncio.gather(*(session.owner for session in sessions), return_exceptions=True)

    async def session(
        self, server: ServerConnection, credentials: Credentials
    ) -> tuple[Client, dict[str, Tool]]:
        """``server``'s live client for ``credentials`` and its tools; connects on first use."""
        found = await self._open(server, credentials)
        assert found.client is not None  # ready
        return found.client, found.tools

    @contextlib.asynccontextmanager
    async def using(
        self, server: ServerConnection, credentials: Credentials
    ) -> AsyncIterator[tuple[Client, dict[str, Tool]]]:
        """:meth:`session` for one call: the session is not closed as idle meanwhile."""
        found = await self._open(server, credentials)
        assert found.client is not None  # ready
        found.in_flight += 1
        try:
            yield found.client, found.tools
        finally:
            found.in_flight -= 1

    async def _open(self, server: ServerConnection, credentials: Credentials) -> _Session:
        key = _session_key(server, credentials)
        found = self._sessions.get(key)
        # A rotated secret (a new token, a new environment) needs a new session.
        fingerprint = credentials.fingerprint
        if found is not None and not found.closed and found.credentials.fingerprint != fingerprint:
            found.close()
            found = None
        if found is None or found.closed:
            found = _Session(server, credentials, key, self._forget)
            self._sessions[key] = found
            if server.family:
                self._close_idle_of(found)
        found.last_used = asyncio.get_running_loop().time()
        timeout = duration_seconds(server.definition.connect_timeout)
        try:
            await asyncio.wait_for(asyncio.shield(found.ready), timeout)
        except TimeoutError:
            found.close()
            raise TimeoutError(
                f"MCP server {server.name!r} did not connect within {timeout:g}s"
            ) from None
        return found

    def _close_idle_of(self, new: _Session) -> None:
        """Keep at most ``PER_RUN_SESSIONS`` of ``new``'s family open: close the least
        recently used idle ones (a busy session is never closed under its call)."""
        family = [
            session
            for session in self._sessions.values()
            if session is not new
            and session.server.family == new.server.family
            and session.credentials.scope == new.credentials.scope
        ]
        idle = sorted((s for s in family if s.in_flight == 0), key=lambda s: s.last_used)
        for session in idle[: max(0, len(family) + 1 - PER_RUN_SESSIONS)]:
            self._forget(session)
            session.close()

    def _forget(self, session: _Session) -> None:
        if self._sessions.get(session.key) is session:
            del self._sessions[session.key]

    async def drop(
        self, server: ServerConnection, credentials: Credentials, client: Client
    ) -> None:
        """Close ``server``'s session if ``client`` is still its client (the next call reconnects).

        Naming the client keeps a caller that saw an old session fail from
        closing the new session another caller has opened since.
        """
        found = self._sessions.get(_session_key(server, credentials))
        if found is not None and found.client is client:
            self._forget(found)
            found.close()
            with contextlib.suppress(BaseException):
                await found.owner


def _session_key(server: ServerConnection, credentials: Credentials) -> str:
    """One session per server definition and folder, and per owner of the secrets."""
    return f"{credentials.scope}\n{server.key}"


#: The process's hub.
HUB = McpHub()


#: What a streamable HTTP server (or the SDK, for a bare 404) says of a session
#: id it no longer knows, e.g. after a restart. Servers differ in the code.
_UNKNOWN_SESSION = frozenset({"session not found", "session terminated"})


def is_lost_session(exc: MCPError) -> bool:
    """Whether ``exc`` says the session is gone, not that the server refused the request."""
    # The SDK's code for a closed transport (a dead stdio process, a broken
    # stream), or a 404 on the session id; a mere "closed" in a server's own
    # message (say, "ticket closed") is not a lost session.
    return exc.code == CONNECTION_CLOSED or exc.message.strip().lower() in _UNKNOWN_SESSION


async def on_hub(
    server: ServerConnection,
    credentials: Credentials,
    work: Callable[[Client, dict[str, Tool]], Awaitable[T]],
) -> T:
    """Run ``work(client, tools)`` on ``server``'s session for ``credentials``, from any loop.

    A lost session is dropped (the next call connects again) and raised as
    ``ConnectionError``, a read timeout as ``TimeoutError``, so the retry rules
    see a network error and a timeout, not a JSON-RPC error.
    """

    async def run() -> T:
        async with HUB.using(server, credentials) as (client, tools):
            try:
                return await work(client, tools)
            except MCPError as exc:
                if is_lost_session(exc):
                    await HUB.drop(server, credentials, client)
                    raise ConnectionError(f"MCP server {server.name!r}: {exc.message}") from exc
                if exc.code == REQUEST_TIMEOUT:
                    raise TimeoutError(f"MCP server {server.name!r}: {exc.message}") from exc
                raise

    return await HUB.call(run())
