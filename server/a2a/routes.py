"""HTTP routes of the served graphs: ``/a2a/<graph>/`` (JSON-RPC) and its Agent Card.

Every A2A request goes through the FastAPI routes below, so FastAPI
dependencies apply to it: the tenant of the request (``x-api-key``,
:data:`plait.server.auth.keys.Tenant`) is resolved here, in one place, and carried
to the task store and the executor in the A2A call context. The JSON-RPC
handling itself is the SDK's (``create_jsonrpc_routes``), one
``DefaultRequestHandler`` per served graph, created on first use; the route
hands the untouched request to it.

- ``GET /a2a`` lists the served graphs and their card URLs.
- ``GET /a2a/<graph>/.well-known/agent-card.json`` is the graph's card (its
  interface URL is built from the request's base URL).
- ``POST /a2a/<graph>/`` is the JSON-RPC endpoint (``SendMessage``,
  ``SendStreamingMessage``, ``GetTask``, ``ListTasks``, ``CancelTask``,
  ``SubscribeToTask``); protocol 0.3 requests (``message/send``...) are
  answered there too, by the SDK's compatibility layer.
- ``/a2a/<graph>/rest/...`` is the HTTP+JSON binding (``POST
  message:send``, ``GET tasks/{id}``, ``POST tasks/{id}:cancel``..., and
  0.3's ``/v1/...`` paths), from ``create_rest_routes``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import (
    DefaultServerCallContextBuilder,
    create_jsonrpc_routes,
    create_rest_routes,
)
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from starlette.applications import Starlette
from starlette.requests import Request as StarletteRequest
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from plait.server.a2a.cards import PREFIX, REST_PATH, agent_card, agent_url, is_exposed
from plait.server.a2a.executor import PlaitAgentExecutor
from plait.server.a2a.task_store import TENANT_STATE_KEY, PostgresTaskStore
from plait.server.api.deps import Services, Svc
from plait.server.auth.keys import Tenant
from plait.server.graphs import versions
from plait.server.graphs.versions import GraphVersion
from plait.server.http.problems import not_found

#: Where the route leaves the tenant for the call-context builder (ASGI scope key).
_SCOPE_TENANT = "plait.a2a.tenant"
CARD_PATH = "/.well-known/agent-card.json"
#: How long the SDK keeps a task parked on input-required in memory. A parked
#: run holds nothing (its approval is in Postgres); the follow-up that answers
#: it rebuilds the SDK's task from the store. Without it every unanswered task
#: would keep two asyncio tasks and their queues for the life of the process.
PARKED_TASK_SECONDS = 60.0


class _ContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call context, plus the Plait tenant the route resolved."""

    def build(self, request: StarletteRequest) -> ServerCallContext:
        context = super().build(request)
        context.state[TENANT_STATE_KEY] = request.scope.get(_SCOPE_TENANT)
        return context


@dataclass
class _Agent:
    handler: DefaultRequestHandler
    app: ASGIApp


@dataclass
class A2AHub:
    """The served graphs' request handlers (their tasks in flight live in them)."""

    services: Services
    _agents: dict[str, _Agent] = field(default_factory=dict)

    def agent(self, graph: GraphVersion) -> _Agent:
        """The handler of ``graph``'s name, created on first use."""
        found = self._agents.get(graph.name)
        if found is None:
            handler = DefaultRequestHandler(
                agent_executor=PlaitAgentExecutor(self.services, graph.name),
                task_store=PostgresTaskStore(self.services.pool, graph.name),
                # Only its capabilities are read (streaming); cards are served per request.
                agent_card=agent_card(graph.loaded.spec, f"{PREFIX}/{graph.name}/"),
                interrupted_task_timeout=PARKED_TASK_SECONDS,
            )
            found = _Agent(handler, Starlette(routes=_routes(handler)))
            self._agents[graph.name] = found
        return found

    async def aclose(self) -> None:
        """Stop every handler's tasks in flight (their runs go on in the queue)."""
        for agent in self._agents.values():
            await agent.handler.aclose()
        self._agents.clear()


def _routes(handler: DefaultRequestHandler) -> list[BaseRoute]:
    """The SDK's JSON-RPC and HTTP+JSON routes of one graph, each also speaking 0.3.

    The REST routes' catch-all ``Mount('/{tenant}')`` (A2A's own tenant in
    the path) is left out: Plait's tenant is the request's key, resolved by
    the route below, and a path segment must not be able to name another.
    """
    builder = _ContextBuilder()
    jsonrpc = create_jsonrpc_routes(
        handler, rpc_url="/", context_builder=builder, enable_v0_3_compat=True
    )
    rest = create_rest_routes(
        handler, context_builder=builder, enable_v0_3_compat=True, path_prefix=f"/{REST_PATH}"
    )
    return [*jsonrpc, *(route for route in rest if not isinstance(route, Mount))]


@contextlib.asynccontextmanager
async def a2a_hub(services: Services) -> AsyncIterator[A2AHub]:
    """The hub for the app's lifetime (enter it inside the services' lifespan)."""
    hub = A2AHub(services)
    try:
        yield hub
    finally:
        await hub.aclose()


async def get_hub(request: Request) -> A2AHub:
    """The app's :class:`A2AHub` (``app.state.a2a``, set by the lifespan)."""
    hub: A2AHub = request.app.state.a2a
    return hub


Hub = Annotated[A2AHub, Depends(get_hub)]

router = APIRouter(prefix=PREFIX, tags=["a2a"])


async def _served(services: Services, name: str, tenant: str) -> GraphVersion:
    graph = await versions.latest(
        services.pool, name, specs_dir=services.settings.specs_dir, tenant=tenant
    )
    if graph is None or not is_exposed(graph.loaded.spec):
        raise not_found(
            f"A2A agent {name}",
            f"no graph {name!r} is served over A2A; a spec serves itself with "
            "`spec.a2a: {expose: true}`",
        )
    return graph


@router.get("", summary="List the graphs served as A2A agents")
async def list_agents(request: Request, services: Svc, tenant: Tenant) -> list[dict[str, Any]]:
    """Each served graph with its version and card URL."""
    graphs = await versions.list_graphs(
        services.pool, specs_dir=services.settings.specs_dir, tenant=tenant
    )
    # list_graphs sorts by name, then oldest version first: the last of a name is its newest.
    newest = {graph.name: graph for graph in graphs}
    base = str(request.base_url)
    return [
        {
            "name": graph.name,
            "version": graph.version,
            "url": agent_url(base, graph.name),
            "card": agent_url(base, graph.name).rstrip("/") + CARD_PATH,
        }
        for graph in newest.values()
        if is_exposed(graph.loaded.spec)
    ]


@router.get("/{graph}" + CARD_PATH, summary="The Agent Card of a served graph")
async def card(graph: str, request: Request, services: Svc, tenant: Tenant) -> JSONResponse:
    """The graph's A2A Agent Card (JSON-RPC interface, streaming)."""
    served = await _served(services, graph, tenant)
    found = agent_card(served.loaded.spec, agent_url(str(request.base_url), graph))
    return JSONResponse(agent_card_to_dict(found))


# Only the SDK's one route, POST at the card's URL: anything else is FastAPI's 404/405.
@router.post(
    "/{graph}/",
    summary="A2A JSON-RPC endpoint of a served graph",
    response_class=Response,
    operation_id="a2a_endpoint_post",
)
async def endpoint(graph: str, services: Svc, hub: Hub, tenant: Tenant) -> Response:
    """Hand the request to the graph's A2A JSON-RPC handler (the body is read there)."""
    served = await _served(services, graph, tenant)
    return _Forward(hub.agent(served).app, f"{PREFIX}/{graph}", tenant)


async def rest_endpoint(graph: str, path: str, services: Svc, hub: Hub, tenant: Tenant) -> Response:
    """Hand the request to the graph's HTTP+JSON routes (``message:send``, ``tasks/{id}``...)."""
    served = await _served(services, graph, tenant)
    return _Forward(hub.agent(served).app, f"{PREFIX}/{graph}", tenant)


# One route per method: OpenAPI needs an operation id of its own for each.
for _method in ("GET", "POST", "DELETE"):
    router.add_api_route(
        "/{graph}/" + REST_PATH + "/{path:path}",
        rest_endpoint,
        methods=[_method],
        summary="A2A HTTP+JSON binding of a served graph",
        response_class=Response,
        operation_id=f"a2a_rest_{_method.lower()}",
    )


class _Forward(Response):
    """A response that lets an ASGI app answer the request, mounted at ``prefix``."""

    def __init__(self, app: ASGIApp, prefix: str, tenant: str) -> None:
        super().__init__()
        self.app, self.prefix, self.tenant = app, prefix, tenant

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        inner = dict(scope)
        inner["root_path"] = scope.get("root_path", "") + self.prefix
        inner[_SCOPE_TENANT] = self.tenant
        await self.app(inner, receive, send)
