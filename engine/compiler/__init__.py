"""Compile a validated spec into a LangGraph ``StateGraph``.

``compile_spec`` caches per spec digest (plus the digests of every spec a
``subgraph`` refers to); ``CompiledSpec.bind`` attaches a checkpointer per run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
from langgraph.graph import StateGraph

from plait.engine.compiler.compiled import CompiledSpec
from plait.engine.compiler.context import CompileContext
from plait.engine.compiler.edges import add_edges, route_sources
from plait.engine.compiler.mermaid import to_mermaid
from plait.engine.compiler.nodes import KIND_BUILDERS
from plait.engine.compiler.nodes.base import NodeRunner
from plait.engine.compiler.nodes.wait import TIMER_FIRED
from plait.engine.compiler.saga import SagaStep, TrackedCompute, has_compensation, saga_channels
from plait.engine.compiler.state import state_schemas
from plait.engine.errors import CompileError, NodeError
from plait.engine.gc_pause import gc_paused
from plait.engine.governance.limits import governance_channels, governance_gate
from plait.engine.governance.policies import retry_policy
from plait.engine.lru import LruCache
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.expressions import ExpressionError
from plait.engine.spec.models import GraphSpec, duration_seconds
from plait.engine.spec.registry import SpecRegistry, UnknownSpecRef
from plait.engine.tools.rejection import reject_channels

__all__ = [
    "TIMER_FIRED",
    "CompileError",
    "CompiledSpec",
    "NodeError",
    "clear_cache",
    "compile_spec",
    "to_mermaid",
]

#: ``compile_spec``'s key: a spec's digest and its references' ``(ref, digest)``.
Key = tuple[str, tuple[tuple[str, str], ...]]
_CACHE: LruCache[Key, CompiledSpec] = LruCache()


def compile_spec(loaded: LoadedSpec, registry: SpecRegistry | None = None) -> CompiledSpec:
    """Compile ``loaded`` (cached); ``registry`` resolves ``subgraph`` refs."""
    with gc_paused():
        return _compile(loaded, registry, ())


def clear_cache() -> None:
    """Drop every cached compiled graph."""
    _CACHE.clear()


def cache_stats() -> tuple[int, int]:
    """``(hits, misses)`` of the compile cache."""
    return _CACHE.hits, _CACHE.misses


def _compile(
    loaded: LoadedSpec, registry: SpecRegistry | None, stack: tuple[str, ...]
) -> CompiledSpec:
    if loaded.ref in stack:
        raise CompileError(f"subgraph refs form a cycle: {' -> '.join((*stack, loaded.ref))}")
    key = _cache_key(loaded, registry)
    return _CACHE.get_or_build(key, lambda: _build(loaded, registry, (*stack, loaded.ref)))


def _refs(spec: GraphSpec) -> Iterator[str]:
    for node in spec.spec.nodes.values():
        if node.kind == "subgraph":
            yield node.ref
        elif node.kind == "map" and node.do.kind == "subgraph" and node.do.ref is not None:
            yield node.do.ref


def _resolve(registry: SpecRegistry | None, ref: str, parent: LoadedSpec) -> LoadedSpec:
    if registry is None:
        raise CompileError(f"{parent.ref} uses subgraph {ref!r} but no spec registry was given")
    try:
        return registry.resolve(ref)
    except UnknownSpecRef as exc:
        raise CompileError(f"{parent.ref}: {exc}") from None


def _cache_key(loaded: LoadedSpec, registry: SpecRegistry | None) -> Key:
    seen: dict[str, str] = {}
    pending = [loaded]
    while pending:
        current = pending.pop()
        for ref in _refs(current.spec):
            if ref not in seen:
                child = _resolve(registry, ref, current)
                seen[ref] = child.digest
                pending.append(child)
    return loaded.digest, tuple(sorted(seen.items()))


def _build(
    loaded: LoadedSpec, registry: SpecRegistry | None, stack: tuple[str, ...]
) -> CompiledSpec:
    spec = loaded.spec
    body = spec.spec
    ctx = CompileContext(loaded, registry)
    for ref in dict.fromkeys(_refs(spec)):
        ctx.children[ref] = _compile(_resolve(registry, ref, loaded), registry, stack)
    sources = route_sources(spec)
    counted = any(node.max_visits is not None for node in body.nodes.values())
    state, input_schema, output_schema = state_schemas(
        spec,
        route_sources=sources,
        counted=counted,
        private={**governance_channels(spec), **saga_channels(spec), **reject_channels(spec)},
    )
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(
        state, input_schema=input_schema, output_schema=output_schema
    )
    keep = frozenset(sources)
    saga = has_compensation(spec)
    for node_id, node in body.nodes.items():
        build_kind: Callable[..., Any] = KIND_BUILDERS[node.kind]
        try:
            compute = build_kind(node_id, node, ctx)
            if saga:  # docs/governance.md, compensation: record steps, undo on failure
                compute = TrackedCompute(compute)
            action: Any = NodeRunner(node_id, node, ctx, compute, keep_result=node_id in keep)
            if saga:
                action = SagaStep(node_id, node, ctx, action)
        except (ValueError, KeyError, ExpressionError, jsonschema.SchemaError) as exc:
            raise CompileError(f"{loaded.ref}: node {node_id!r}: {exc}") from exc
        step_timeout = duration_seconds(node.timeout) if node.timeout is not None else None
        builder.add_node(
            node_id,
            action,
            input_schema=state,
            retry_policy=retry_policy(node.retry) if node.retry is not None else None,
            # With compensations the saga wrapper enforces it, so a timeout compensates.
            timeout=step_timeout if not saga else None,
            metadata={"plait_kind": node.kind},
        )
    try:
        add_edges(builder, spec, ctx, gate=governance_gate(spec))
    except ExpressionError as exc:
        raise CompileError(f"{loaded.ref}: edge: {exc}") from exc
    graph = builder.compile(name=loaded.name)
    # The spec's step bound is the default; a run's own config still overrides it.
    graph.config = {"recursion_limit": body.max_steps}
    # `values` streams and get_state show the spec's fields, not the private channels.
    graph.stream_channels = list(body.state)
    for node_id, node in body.nodes.items():
        if node.kind == "subgraph":
            # LangGraph finds nested graphs by scanning closures, which it cannot do
            # through NodeRunner: name the child, so get_state(subgraphs=True) and
            # state updates inside the child work.
            graph.nodes[node_id].subgraphs = [ctx.children[node.ref].graph]
    return CompiledSpec(
        loaded=loaded,
        digest=loaded.digest,
        builder=builder,
        graph=graph,
        detached=graph.copy({"checkpointer": False, "auto_validate": False}),
        input_fields=ctx.inputs,
        output_fields=tuple(body.output_fields),
        children=dict(ctx.children),
    )
