/**
 * A read-only canvas of two versions at once: the union of their nodes and
 * edges, with added / removed / changed nodes and edges marked. Removed nodes
 * and edges exist only in the old version, so they cannot be marked on the
 * editor's canvas of the new one; here every mark is visible. Same node
 * components and elk layout as the editor's canvas; clicking a node picks it.
 */

import { Background, Controls, type Edge, ReactFlow, ReactFlowProvider } from "@xyflow/react";
import { useEffect, useState } from "react";
import { toFlowEdge } from "../canvas/edges";
import { diffNodeTypes, nodeTypeOf, type SpecFlowNode } from "../canvas/nodes";
import { autoLayout } from "../spec/layout";
import { END, type GraphModel, START } from "../spec/model";
import { edgeMarks, nodeMarks, type GraphDiffResult } from "./graphDiff";

/** Both versions in one model: the new one, plus the nodes and edges only the old one has. */
export function unionModel(before: GraphModel, after: GraphModel, diff: GraphDiffResult): GraphModel {
  const nodeIds = new Set(after.nodes.map((node) => node.id));
  return {
    ...after,
    nodes: [...after.nodes, ...before.nodes.filter((node) => !nodeIds.has(node.id))],
    edges: [...after.edges, ...diff.edges.removed.map((edge) => ({ ...edge, id: `old:${edge.id}` }))],
    usesEnd: before.usesEnd || after.usesEnd,
  };
}

async function diffLayout(before: GraphModel, after: GraphModel, diff: GraphDiffResult): Promise<{ nodes: SpecFlowNode[]; edges: Edge[] }> {
  const model = unionModel(before, after, diff);
  const positions = await autoLayout(model);
  const marks = nodeMarks(diff);
  const edgesMarked = edgeMarks(diff);
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
    const mark = edge.id.startsWith("old:") ? "removed" : edgesMarked[edge.id];
    return mark ? { ...flow, className: `${flow.className ?? ""} diff-edge-${mark}` } : flow;
  });
  return { nodes, edges };
}

export function DiffGraph({
  before,
  after,
  diff,
  picked,
  onPick,
}: {
  before: GraphModel;
  after: GraphModel;
  diff: GraphDiffResult;
  picked: string | null;
  onPick(node: string | null): void;
}) {
  const [layout, setLayout] = useState<{ nodes: SpecFlowNode[]; edges: Edge[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    diffLayout(before, after, diff)
      .then((result) => live && setLayout(result))
      .catch((e: unknown) => live && setError(String(e)));
    return () => {
      live = false;
    };
  }, [before, after, diff]);
  if (error) return <p className="error">{error}</p>;
  if (!layout) return <p>Laying out…</p>;
  return (
    <div className="diff-graph" data-testid="diff-graph">
      <ReactFlowProvider>
        <ReactFlow
          nodes={layout.nodes.map((node) => (node.id === picked ? { ...node, selected: true } : node))}
          edges={layout.edges}
          nodeTypes={diffNodeTypes}
          fitView
          fitViewOptions={{ padding: 0.1, maxZoom: 1 }}
          minZoom={0.1}
          nodesDraggable={false}
          nodesConnectable={false}
          onNodeClick={(_, node) => onPick(node.id === START || node.id === END ? null : node.id)}
          onPaneClick={() => onPick(null)}
          proOptions={{ hideAttribution: true }}
        >
          <Background />
          <Controls showInteractive={false} />
        </ReactFlow>
      </ReactFlowProvider>
    </div>
  );
}
