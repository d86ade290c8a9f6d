"""Python tools: a ``module:function`` from the spec's folder as a LangChain tool."""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, StructuredTool

from plait.engine.governance.retries import with_call_policy
from plait.engine.governance.secrets import with_secrets_argument
from plait.engine.governance.tool_limits import tool_limits, with_tool_limits
from plait.engine.spec.models import McpServerDef, ToolDef, duration_seconds
from plait.engine.tools.in_doubt import RECONCILE_KEY, Reconcile
from plait.engine.tools.risk import RISK_KEY

if TYPE_CHECKING:
    from plait.engine.tools.mcp.hub import Credentials

#: Where a tool's metadata says it must not be called twice (``idempotent: false``).
NON_IDEMPOTENT_KEY = "plait_non_idempotent"

_PATH_LOCK = threading.Lock()


def import_function(ref: str, base_dir: Path) -> Callable[..., Any]:
    """Import ``module:function`` with ``base_dir`` first on ``sys.path``.

    The folder stays on ``sys.path`` afterwards: the module may import its
    siblings lazily, long after this call.
    """
    module_name, _, attribute = ref.partition(":")
    folder = str(Path(base_dir).resolve())
    with _PATH_LOCK:
        if folder in sys.path:
            sys.path.remove(folder)
        sys.path.insert(0, folder)
        module = importlib.import_module(module_name)
    try:
        function = getattr(module, attribute)
    except AttributeError:
        raise ImportError(f"module {module_name!r} has no function {attribute!r}") from None
    if not callable(function):
        raise ImportError(f"{ref!r} is not callable")
    return function


def load_python_tool(
    name: str,
    tool_def: ToolDef,
    base_dir: Path,
    mcp_servers: Mapping[str, McpServerDef] | None = None,
    mcp_credentials: Credentials | None = None,
) -> BaseTool:
    """A ``StructuredTool`` for ``tool_def``: sync or async, with its per-call timeout.

    The description comes from the spec or the docstring; the argument schema
    from ``parameters`` (JSON Schema) or, when absent, the function's signature.
    A ``kind: mcp`` tool is loaded from its server instead (``mcp_servers``:
    the spec's ``spec.mcp_servers``; see engine/tools/mcp/tool.py), which it
    reaches with ``mcp_credentials`` (the loading run's secrets of that server).
    """
    if tool_def.kind == "mcp":
        from plait.engine.tools.mcp.tool import (
            load_mcp_tool,  # only specs with MCP tools load the SDK
        )

        if mcp_credentials is None:
            raise ValueError(f"MCP tool {name!r} is loaded with its server's credentials")
        servers = mcp_servers or {}
        tool = load_mcp_tool(name, tool_def, servers, base_dir, mcp_credentials)
        assert tool_def.server is not None  # load_mcp_tool found it in ``servers``
        server = servers[tool_def.server]
        endpoint = mcp_endpoint_key(server)
        # The server's limits hold all its tools together; the tool's, this tool alone.
        limits = tool_limits(
            {
                endpoint: (f"spec.mcp_servers.{tool_def.server}", server.limits),
                f"{endpoint}#{tool_def.tool or name}": (f"spec.tools.{name}", tool_def.limits),
            }
        )
        return with_tool_limits(_with_policies(tool, tool_def, base_dir, endpoint), limits)
    assert tool_def.function is not None  # the model's validator: python tools have one
    function = import_function(tool_def.function, base_dir)
    if tool_def.secrets:  # resolved per call, hidden from the schema, redacted from the output
        function = with_secrets_argument(function, tool_def.secrets)
    description = tool_def.description or inspect.getdoc(function) or f"Calls {name}."
    timeout = duration_seconds(tool_def.timeout) if tool_def.timeout is not None else None
    is_async = inspect.iscoroutinefunction(function)

    @functools.wraps(function)
    async def call(**kwargs: Any) -> Any:
        # A sync function runs in a worker thread so the timeout can fire while it runs.
        work = function(**kwargs) if is_async else asyncio.to_thread(function, **kwargs)
        if timeout is None:
            return await work
        try:
            return await asyncio.wait_for(work, timeout)
        except TimeoutError:
            raise TimeoutError(f"tool {name!r} timed out after {timeout:g}s") from None

    tool = StructuredTool.from_function(
        func=None if is_async else function,
        coroutine=call,
        name=name,
        description=description,
        args_schema=tool_def.parameters,
        infer_schema=tool_def.parameters is None,
    )
    # Keyed by the function, as its breaker: every spec calling it shares its limits.
    limits = tool_limits({f"tool:{tool_def.function}": (f"spec.tools.{name}", tool_def.limits)})
    return with_tool_limits(_with_policies(tool, tool_def, base_dir), limits)


def load_reconcile(name: str, tool_def: ToolDef, base_dir: Path) -> Reconcile:
    """Tool ``name``'s ``reconcile`` function, called as ``reconcile(args, key)``.

    A sync function runs in a thread; the tool's ``timeout`` applies to it too.
    Raises ``ImportError`` when it is missing, ``TypeError`` when it cannot
    take the two arguments.
    """
    assert tool_def.reconcile is not None
    function = import_function(tool_def.reconcile, base_dir)
    try:
        inspect.signature(function).bind({}, "key")
    except TypeError:
        raise TypeError(
            f"reconcile {tool_def.reconcile!r} of tool {name!r} must take two arguments: "
            "(args, key)"
        ) from None
    except ValueError:  # no signature to read (a builtin): let the call tell
        pass
    timeout = duration_seconds(tool_def.timeout) if tool_def.timeout is not None else None
    is_async = inspect.iscoroutinefunction(function)

    async def reconcile(args: dict[str, Any], key: str) -> Any:
        work = function(args, key) if is_async else asyncio.to_thread(function, args, key)
        if timeout is None:
            return await work
        try:
            return await asyncio.wait_for(work, timeout)
        except TimeoutError:
            raise TimeoutError(f"reconcile of tool {name!r} timed out after {timeout:g}s") from None

    return reconcile


def mcp_endpoint_key(server: McpServerDef) -> str:
    """The endpoint an MCP tool's breaker protects: its server's URL, or its command line.

    Keyed like a model's endpoint, not by the spec's name for the server, so
    two specs (or tenants) that both call their server ``demo`` do not share
    one breaker unless it is the same server.
    """
    if server.transport == "http":
        return f"mcp:{server.url}"
    # Per-run values keep their expression: every run's session of the server shares one breaker.
    args = [arg if isinstance(arg, str) else f"{{{arg.expr}}}" for arg in server.args]
    return "mcp:" + " ".join([str(server.command), *args])


def _with_policies(
    tool: BaseTool, tool_def: ToolDef, base_dir: Path, breaker_key: str | None = None
) -> BaseTool:
    """Risk, idempotency (and ``reconcile``), retries by error class and the breaker.

    See engine/governance/retries.py; ``breaker_key`` replaces the default endpoint
    key (the python ``function``).
    """
    metadata = dict(tool.metadata or {})
    if tool_def.risk != "low":
        # Only a non-default risk is marked, so low-risk tools stay as they were.
        metadata[RISK_KEY] = tool_def.risk
    if not tool_def.idempotent:
        # Never retried automatically: no call retries, and the gateway stops node retries.
        metadata[NON_IDEMPOTENT_KEY] = True
        if tool_def.reconcile is not None:  # settles its calls in doubt (engine/tools/in_doubt.py)
            metadata[RECONCILE_KEY] = load_reconcile(tool.name, tool_def, base_dir)
        tool_def = tool_def.model_copy(update={"retry": None})
    tool.metadata = metadata or None
    return with_call_policy(tool, tool_def, breaker_key)
