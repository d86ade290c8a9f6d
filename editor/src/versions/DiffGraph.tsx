/**
 * A read-only canvas of two versions at once: the union of their nodes and
 * edges, with added / removed / changed nodes marked. Removed nodes exist only
 * in the old version, so they cannot be marked on the editor's canvas of the
 * new one; here every mark is visible. Same node components and elk layout as
 * the editor's canvas.
 */

import { Background, type Edge, ReactFlow, ReactFlowProvider } from "@xyflow/react";
import { useEffect, useState } from "react";
import { toFlowEdge } from "../canvas/edges";
import { nodeTypeOf, nodeTypes, type SpecFlowNode } from "../canvas/nodes";
import { autoLayout } from "../spec/layout";
import { EMPTY_MODEL, END, type GraphModel, parseSpec, START } from "../spec/model";
import type { NodeDiffMark } from "../store/editorStore";

/** Both versions in one model: the new one, plus the nodes and edges only the old one has. */
export function unionModel(before: GraphModel, after: GraphModel): GraphModel {
  const nodeIds = new Set(after.nodes.map((node) => node.id));
  const edgeKey = (edge: GraphModel["edges"][number]) => `${edge.source}->${edge.target}:${edge.label ?? ""}`;
  const edgeKeys = new Set(after.edges.map(edgeKey));
  return {
    ...after,
    nodes: [...after.nodes, ...before.nodes.filter((node) => !nodeIds.has(node.id))],
    edges: [
      ...after.edges,
      ...before.edges.filter((edge) => !edgeKeys.has(edgeKey(edge))).map((edge) => ({ ...edge, id: `old:${edge.id}` })),
    ],
    usesEnd: before.usesEnd || after.usesEnd,
  };
}

async function diffLayout(before: string, after: string, marks: Record<string, NodeDiffMark>): Promise<{ nodes: SpecFlowNode[]; edges: Edge[] }> {
  const model = unionModel(parseSpec(before).model ?? EMPTY_MODEL, parseSpec(after).model ?? EMPTY_MODEL);
  const positions = await autoLayout(model);
  const terminals = [START, END].map((id) => ({ id, type: "terminal", position: positions[id] ?? { x: 0, y: 0 } }));
  const nodes = [
    ...(terminals as unknown as SpecFlowNode[]),
    ...model.nodes.map<SpecFlowNode>((node) => ({
      id: node.id,
      type: nodeTypeOf(node.kind),
      position: positions[node.id] ?? { x: 0, y: 0 },
      data: { node, issues: [], diff: marks[node.id] },
    })),
  ];
  const edges = model.edges.map((edge) => {
    const flow = toFlowEdge(edge, false);
    return edge.id.startsWith("old:") ? { ...flow, className: `${flow.className ?? ""} diff-edge-removed` } : flow;
  });
  return { nodes, edges };
}

export function DiffGraph({ before, after, marks }: { before: string; after: string; marks: Record<string, NodeDiffMark> }) {
  const [layout, setLayout] = useState<{ nodes: SpecFlowNode[]; edges: Edge[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    diffLayout(before, after, marks)
      .then((result) => live && setLayout(result))
      .catch((e: unknown) => live && setError(String(e)));
    return () => {
      live = false;
    };
  }, [before, after, marks]);
  if (error) return <p className="error">{error}</p>;
  if (!layout) return <p>Laying out…</p>;
  return (
    <div className="diff-graph" data-testid="diff-graph">
      <ReactFlowProvider>
        <ReactFlow
          nodes={layout.nodes}
          edges={layout.edges}
          nodeTypes={nodeTypes}
          fitView
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          proOptions={{ hideAttribution: true }}
        >
          <Background />
        </ReactFlow>
      </ReactFlowProvider>
    </div>
  );
}
