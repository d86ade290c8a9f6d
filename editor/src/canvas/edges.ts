/**
 * Spec edges -> React Flow edges: switch conditions, `default` and route labels
 * as edge labels, each form with its own stroke, drawn along elk's route
 * (RoutedEdge). While a run is shown, the edges it took are highlighted and the
 * others dimmed.
 */
import { MarkerType, type Edge, type EdgeTypes } from "@xyflow/react";
import { edgeLabelText, type EdgeRoute } from "../spec/layout";
import type { EdgeKind, GraphEdge } from "../spec/model";
import { RoutedEdge, type RoutedFlowEdge } from "./RoutedEdge";

const STYLES: Record<EdgeKind, { stroke: string; dash?: string }> = {
  static: { stroke: "#6b7280" },
  case: { stroke: "#c77700" },
  default: { stroke: "#9aa1ab", dash: "6 4" },
  route: { stroke: "#6d4fd8" },
  "route-default": { stroke: "#9aa1ab", dash: "6 4" },
  branch: { stroke: "#4b5a6b", dash: "2 4" },
  join: { stroke: "#4b5a6b", dash: "2 4" },
};

/** The accent of the path a run took. */
const TAKEN = "#2f5fd0";

export const edgeTypes: EdgeTypes = { routed: RoutedEdge };

/** How an edge reads while a run is shown: on the path it took, off it, or no run shown. */
export type RunMark = "taken" | "not-taken" | null;

/** What the editor's canvas adds to an edge: its grouped label (spec/layout `edgeLabels`), elk's route, the run's mark. */
export interface CanvasEdgeExtras {
  label?: string;
  route?: EdgeRoute;
  run?: RunMark;
}

/**
 * The React Flow edge of a spec edge. Without `extras` (the version diff's
 * read-only canvas) it is a smooth-step edge with its own label; with them,
 * a routed edge.
 */
export function toFlowEdge(edge: GraphEdge, selected: boolean, extras?: CanvasEdgeExtras): RoutedFlowEdge | Edge {
  const { route, run = null } = extras ?? {};
  const label = extras ? extras.label : (edgeLabelText(edge) ?? undefined);
  const look = STYLES[edge.kind];
  const stroke = run === "taken" ? TAKEN : look.stroke;
  const width = run === "taken" ? 3 : selected ? 2.5 : 1.5;
  return {
    id: edge.id,
    source: edge.source,
    target: edge.target,
    type: extras ? "routed" : "smoothstep",
    label,
    selected,
    data: { kind: edge.kind, route },
    className: ["plait-edge", `edge-${edge.kind}`, run ?? ""].filter(Boolean).join(" "),
    style: { stroke, strokeDasharray: run === "taken" ? undefined : look.dash, strokeWidth: width },
    markerEnd: { type: MarkerType.ArrowClosed, color: stroke },
    labelStyle: { fill: stroke, fontSize: 11, fontWeight: 600 },
    labelBgStyle: { fill: "#fff", fillOpacity: 0.9 },
    labelBgPadding: [4, 2],
    labelBgBorderRadius: 3,
  };
}
