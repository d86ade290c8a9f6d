/**
 * Spec edges -> React Flow edges: switch conditions, `default` and route labels
 * as edge labels, each form with its own stroke (built-in edge types: the
 * label rendering React Flow ships is enough).
 */
import { MarkerType, type Edge } from "@xyflow/react";
import type { EdgeKind, GraphEdge } from "../spec/model";

const STYLES: Record<EdgeKind, { stroke: string; dash?: string }> = {
  static: { stroke: "#6b7280" },
  case: { stroke: "#c77700" },
  default: { stroke: "#9aa1ab", dash: "6 4" },
  route: { stroke: "#6d4fd8" },
  "route-default": { stroke: "#9aa1ab", dash: "6 4" },
  branch: { stroke: "#4b5a6b", dash: "2 4" },
  join: { stroke: "#4b5a6b", dash: "2 4" },
};

const clip = (text: string, max = 40) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export function toFlowEdge(edge: GraphEdge, selected: boolean): Edge {
  const style = STYLES[edge.kind];
  const label = edge.kind === "case" && edge.label ? `when ${clip(edge.label)}` : edge.label ?? undefined;
  return {
    id: edge.id,
    source: edge.source,
    target: edge.target,
    type: "smoothstep",
    label,
    selected,
    data: { kind: edge.kind },
    className: `plait-edge edge-${edge.kind}`,
    style: { stroke: style.stroke, strokeDasharray: style.dash, strokeWidth: selected ? 2.5 : 1.5 },
    markerEnd: { type: MarkerType.ArrowClosed, color: style.stroke },
    labelStyle: { fill: style.stroke, fontSize: 11, fontWeight: 600 },
    labelBgStyle: { fill: "#fff", fillOpacity: 0.9 },
    labelBgPadding: [4, 2],
    labelBgBorderRadius: 3,
  };
}
