/**
 * The graph canvas (@xyflow/react 12), a projection of the YAML text.
 *
 * Nodes and edges come from the store's model; every structural change
 * (drop from the palette, connect, delete, paste) is an edit of the YAML
 * Document and comes back through the model. Positions are kept in the store
 * (never in the YAML): nodes without one are placed (elk for a fresh graph,
 * next to their predecessor while editing), and nothing moves unless the user
 * drags it or asks for "Auto layout".
 */
import {
  applyNodeChanges,
  Background,
  Controls,
  ReactFlow,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type Node,
  type NodeChange,
} from "@xyflow/react";
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent } from "react";
import { addNode, applyEdit, connect, copyNodes, disconnect, pasteNodes, removeNodes, uniqueId } from "../spec/edit";
import { canvasNodeIds, edgeLabels, placeNewNode, placeNewNodes, routedLayout, routesFor, sizeOf, type EdgeRoute, type XY } from "../spec/layout";
import { END, START, type GraphModel } from "../spec/model";
import { redo, undo, useEditorStore } from "../store/editorStore";
import { problemsByNode, useProblems } from "../problems/problems";
import { detourRoute, type Card } from "./detour";
import { routeMeets } from "./edgePath";
import { useEdgeRoutes, useRoutesOf } from "./edgeRoutes";
import { edgeTypes, toFlowEdge } from "./edges";
import { FIT_VIEW, useFitOnResize } from "./fitView";
import { SparseMiniMap } from "./SparseMiniMap";
import { nodeTypeOf, nodeTypes, type SpecNodeData } from "./nodes";
import { KIND_MIME } from "./Palette";
import { RenameNode } from "./RenameNode";
import { YamlBrokenBanner } from "./YamlBrokenBanner";

/** Whether a key event belongs to a text field (or CodeMirror), not the canvas. */
export function isTextTarget(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable || !!el.closest?.(".cm-editor");
}

/** Clipboard of the canvas (within the page): nodes as YAML plus their inner edges. */
let clipboard: { yaml: string; edges: { from: string; to: string }[]; positions: Record<string, XY> } | null = null;

/**
 * Add a node of `kind` at `position` (or below the selection), moved to the
 * nearest spot where it overlaps no node; returns its id.
 */
export function addNodeAt(kind: string, position?: XY): string | undefined {
  const state = useEditorStore.getState();
  const id = uniqueId(
    state.model.nodes.map((n) => n.id),
    kind,
  );
  const anchor = state.positions[state.selectedNodes[0]] ?? null;
  const wanted = position ?? (anchor ? { x: anchor.x + 40, y: anchor.y + 150 } : null);
  if (wanted) state.setPositions({ [id]: placeNewNode(id, wanted, state.positions) });
  const added = state.edit((doc) => addNode(doc, kind, id));
  if (added) state.select([added]);
  return added;
}

function copySelection(): void {
  const { yaml, selectedNodes, model, positions } = useEditorStore.getState();
  if (selectedNodes.length === 0) return;
  const ids = selectedNodes.filter((id) => id !== START && id !== END);
  const picked = new Set(ids);
  clipboard = {
    yaml: applyEdit(yaml, (doc) => copyNodes(doc, ids)).result,
    edges: model.edges.filter((e) => e.kind === "static" && picked.has(e.source) && picked.has(e.target)).map((e) => ({ from: e.source, to: e.target })),
    positions: Object.fromEntries(ids.filter((id) => positions[id]).map((id) => [id, positions[id]])),
  };
}

function pasteClipboard(): void {
  if (!clipboard) return;
  const clip = clipboard;
  const state = useEditorStore.getState();
  const renamed = state.edit((doc) => pasteNodes(doc, clip.yaml, clip.edges));
  if (!renamed) return;
  const moved: Record<string, XY> = {};
  for (const [from, to] of Object.entries(renamed)) {
    const p = clip.positions[from];
    if (p) moved[to] = { x: p.x + 40, y: p.y + 40 };
  }
  state.setPositions(moved);
  state.select(Object.values(renamed));
}

/**
 * The route each edge is drawn along: elk's while it meets both ends where
 * they are now, else (once elk's routes for this graph are known) a detour
 * around the cards; none for a self-loop or an unplaced end (a step edge).
 */
function edgeRoutes(model: GraphModel, positions: Record<string, XY>, routes: Record<string, EdgeRoute>, ready: boolean): Record<string, EdgeRoute> {
  const out: Record<string, EdgeRoute> = {};
  let cards: Card[] | null = null;
  for (const edge of model.edges) {
    const s = positions[edge.source];
    const t = positions[edge.target];
    if (!s || !t || edge.source === edge.target) continue;
    const from = { x: s.x + sizeOf(edge.source).width / 2, y: s.y + sizeOf(edge.source).height };
    const to = { x: t.x + sizeOf(edge.target).width / 2, y: t.y };
    const laid = routes[edge.id];
    if (laid && routeMeets(laid, from, to)) out[edge.id] = laid;
    else if (ready) {
      cards ??= canvasNodeIds(model)
        .filter((id) => positions[id])
        .map((id) => ({ id, l: positions[id].x, t: positions[id].y, r: positions[id].x + sizeOf(id).width, b: positions[id].y + sizeOf(id).height }));
      const points = detourRoute(from, to, cards, edge.source, edge.target);
      if (points) out[edge.id] = { points, by: "detour" };
    }
  }
  return out;
}

function buildNodes(
  model: GraphModel,
  positions: Record<string, XY>,
  selected: Set<string>,
  issues: Record<string, string[]>,
  previous: Map<string, Node>,
): Node[] {
  const out: Node[] = [];
  for (const id of [START, END]) {
    if (!positions[id]) continue;
    out.push({ id, type: "terminal", position: positions[id], data: {}, deletable: false, selected: selected.has(id), measured: previous.get(id)?.measured });
  }
  for (const node of model.nodes) {
    if (!positions[node.id]) continue;
    // Run state and diff marks are not data: each card selects its own from the store (canvas/nodes).
    const data: SpecNodeData = { node, issues: issues[node.id] ?? [] };
    out.push({
      id: node.id,
      type: nodeTypeOf(node.kind),
      position: positions[node.id],
      data,
      selected: selected.has(node.id),
      measured: previous.get(node.id)?.measured,
    });
  }
  return out;
}

export function Canvas() {
  const model = useEditorStore((s) => s.model);
  const positions = useEditorStore((s) => s.positions);
  const selectedNodes = useEditorStore((s) => s.selectedNodes);
  const selectedEdges = useEditorStore((s) => s.selectedEdges);
  const layoutRequest = useEditorStore((s) => s.layoutRequest);
  const takenEdges = useEditorStore((s) => s.takenEdges);
  const opened = useEditorStore((s) => `${s.graphName}@${s.version}`);
  const routes = useRoutesOf(opened);
  const routesReady = useEdgeRoutes((s) => s.graph === opened);
  const routedFor = useRef<string | null>(null);
  const problems = useProblems();
  const issues = useMemo(() => problemsByNode(problems), [problems]);
  const flow = useReactFlow();
  const [nodes, setNodes] = useState<Node[]>([]);
  const layingOut = useRef(false);
  const host = useRef<HTMLDivElement>(null);
  const [renaming, setRenaming] = useState<string | null>(null);
  const stopRenaming = useCallback(() => setRenaming(null), []);
  // While the text does not parse the canvas shows the last graph that did: read-only, under a banner.
  const broken = useEditorStore((s) => s.parseProblems.some((p) => p.severity === "error"));

  // Place nodes that have no position: a fresh graph gets a full elk layout
  // (positions and routes); while editing, new nodes go next to their
  // predecessor. A graph opened with stored positions gets elk's routes for
  // them once (spec/layout.ts `routesFor`).
  useEffect(() => {
    const missing = canvasNodeIds(model).filter((id) => !positions[id]);
    if (layingOut.current) return;
    const placedCount = canvasNodeIds(model).length - missing.length;
    if (placedCount === 0) {
      layingOut.current = true;
      routedFor.current = opened;
      void routedLayout(model)
        .then((laid) => {
          useEdgeRoutes.getState().setRoutes(opened, laid.routes);
          useEditorStore.getState().setPositions(laid.positions, false, true);
          requestAnimationFrame(() => void flow.fitView(FIT_VIEW));
        })
        .finally(() => {
          layingOut.current = false;
        });
      return;
    }
    if (missing.length > 0) useEditorStore.getState().setPositions(placeNewNodes(model, positions), false, true);
    // Routes this graph already has (the canvas remounted) stay; else elk finds them for the stored positions.
    const held = useEdgeRoutes.getState();
    if (routedFor.current !== opened && held.graph !== opened) {
      routedFor.current = opened;
      // Just saved as a new version: the same drawing meanwhile (each route is still checked against its ends).
      if (held.graph?.startsWith(`${useEditorStore.getState().graphName}@`)) held.setRoutes(opened, held.routes);
      void routesFor(model, positions).then((found) => routedFor.current === opened && useEdgeRoutes.getState().setRoutes(opened, found));
    }
  }, [model, positions, flow, opened]);

  // "Auto layout": elk for every node, replacing stored positions.
  useEffect(() => {
    if (layoutRequest === 0) return;
    void routedLayout(useEditorStore.getState().model).then((laid) => {
      const state = useEditorStore.getState();
      useEdgeRoutes.getState().setRoutes(`${state.graphName}@${state.version}`, laid.routes);
      useEditorStore.getState().setPositions(laid.positions, true);
      requestAnimationFrame(() => void flow.fitView({ ...FIT_VIEW, duration: 200 }));
    });
  }, [layoutRequest, flow]);

  // Panes opening or closing beside the canvas change its size: fit the graph again.
  useFitOnResize();

  useEffect(() => {
    const selected = new Set(selectedNodes);
    setNodes((prev) => buildNodes(model, positions, selected, issues, new Map(prev.map((n) => [n.id, n]))));
  }, [model, positions, selectedNodes, issues]);

  const edgeDiff = useEditorStore((s) => s.edgeDiff);
  const edges: Edge[] = useMemo(() => {
    const selected = new Set(selectedEdges);
    const labels = edgeLabels(model);
    const taken = new Set(takenEdges);
    const drawn = edgeRoutes(model, positions, routes, routesReady);
    return model.edges.map((e) => {
      const run = taken.size === 0 ? null : taken.has(e.id) ? "taken" : "not-taken";
      const flow = toFlowEdge(e, selected.has(e.id), { label: labels[e.id], route: drawn[e.id], run });
      const mark = edgeDiff[e.id];
      return mark ? { ...flow, className: `${flow.className ?? ""} diff-edge-${mark}` } : flow;
    });
  }, [model, positions, selectedEdges, edgeDiff, routes, routesReady, takenEdges]);

  const onNodesChange = useCallback((changes: NodeChange[]) => {
    const state = useEditorStore.getState();
    let selection: Set<string> | null = null;
    const moved: Record<string, XY> = {};
    for (const change of changes) {
      if (change.type === "select") {
        selection ??= new Set(state.selectedNodes);
        if (change.selected) selection.add(change.id);
        else selection.delete(change.id);
      } else if (change.type === "position" && change.position && !change.dragging) moved[change.id] = change.position;
    }
    // Removals are YAML edits (onDelete); position and size changes apply here.
    setNodes((prev) =>
      applyChanges(
        prev,
        changes.filter((c) => c.type !== "remove" && c.type !== "select"),
      ),
    );
    if (Object.keys(moved).length > 0) state.setPositions(moved);
    if (selection) state.select([...selection], changes.some((c) => c.type === "select" && c.selected) ? [] : state.selectedEdges);
  }, []);

  const onEdgesChange = useCallback((changes: EdgeChange[]) => {
    const state = useEditorStore.getState();
    const selection = new Set(state.selectedEdges);
    let touched = false;
    for (const change of changes) {
      if (change.type !== "select") continue;
      touched = true;
      if (change.selected) selection.add(change.id);
      else selection.delete(change.id);
    }
    if (touched) state.select(changes.some((c) => c.type === "select" && c.selected) ? [] : state.selectedNodes, [...selection]);
  }, []);

  const onDelete = useCallback(({ nodes: gone, edges: cut }: { nodes: Node[]; edges: Edge[] }) => {
    const state = useEditorStore.getState();
    const ids = gone.map((n) => n.id).filter((id) => id !== START && id !== END);
    const removed = new Set(ids);
    const byId = new Map(state.model.edges.map((e) => [e.id, e]));
    const edgesToCut = cut.map((e) => byId.get(e.id)).filter((e) => e && !removed.has(e.source) && !removed.has(e.target));
    state.edit((doc) => {
      disconnect(doc, edgesToCut as NonNullable<(typeof edgesToCut)[number]>[]);
      removeNodes(doc, ids);
    });
    state.select([], []);
  }, []);

  const onConnect = useCallback((c: Connection) => {
    if (c.source && c.target) useEditorStore.getState().edit((doc) => connect(doc, c.source, c.target));
  }, []);

  const onDrop = useCallback(
    (event: DragEvent) => {
      const kind = event.dataTransfer.getData(KIND_MIME);
      if (!kind) return;
      event.preventDefault();
      addNodeAt(kind, flow.screenToFlowPosition({ x: event.clientX, y: event.clientY }));
    },
    [flow],
  );

  // Copy / paste / undo / redo when the focus is not in a text field.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || isTextTarget(e.target)) return;
      const key = e.key.toLowerCase();
      if (key === "c") copySelection();
      else if (key === "v") pasteClipboard();
      else if (key === "z" && e.shiftKey) redo();
      else if (key === "z") undo();
      else if (key === "y") redo();
      else return;
      e.preventDefault();
    };
    const onF2 = (e: KeyboardEvent) => {
      const selected = useEditorStore.getState().selectedNodes;
      if (e.key !== "F2" || isTextTarget(e.target) || selected.length !== 1 || selected[0] === START || selected[0] === END) return;
      e.preventDefault();
      setRenaming(selected[0]);
    };
    document.addEventListener("keydown", onF2);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("keydown", onF2);
    };
  }, []);

  return (
    <div
      ref={host}
      className={`plait-canvas${broken ? " yaml-broken" : ""}`}
      data-testid="canvas"
      onDragOver={(e) => {
        if (e.dataTransfer.types.includes(KIND_MIME)) {
          e.preventDefault();
          e.dataTransfer.dropEffect = "copy";
        }
      }}
      onDrop={onDrop}
    >
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onDelete={onDelete}
        onConnect={onConnect}
        onNodeDoubleClick={(_, node) => node.id !== START && node.id !== END && setRenaming(node.id)}
        nodesDraggable={!broken}
        nodesConnectable={!broken}
        elementsSelectable={!broken}
        fitView
        fitViewOptions={FIT_VIEW}
        deleteKeyCode={broken ? null : ["Delete", "Backspace"]}
        multiSelectionKeyCode={["Shift", "Meta", "Control"]}
        minZoom={0.05}
        maxZoom={2.5}
        onlyRenderVisibleElements={model.nodes.length > 150}
      >
        <Background gap={20} size={1} />
        <SparseMiniMap host={host} />
        <Controls />
      </ReactFlow>
      {broken && <YamlBrokenBanner />}
      {renaming && !broken && <RenameNode nodeId={renaming} container={host.current} onDone={stopRenaming} />}
    </div>
  );
}

function applyChanges(nodes: Node[], changes: NodeChange[]): Node[] {
  return changes.length > 0 ? applyNodeChanges(changes, nodes) : nodes;
}
