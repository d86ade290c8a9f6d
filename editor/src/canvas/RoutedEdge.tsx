/**
 * The canvas's edge, drawn along its route (elk's, or a detour the canvas
 * found for an edge elk did not route: canvas/detour.ts) while the route meets
 * both handles; otherwise (a node being dragged, a self-loop) a smooth-step
 * edge between the handles.
 */
import { BaseEdge, getSmoothStepPath, type Edge, type EdgeProps } from "@xyflow/react";
import type { EdgeKind } from "../spec/model";
import type { EdgeRoute } from "../spec/layout";
import { attachRoute, labelPoint, roundedPath, routeMeets } from "./edgePath";

export type RoutedEdgeData = { kind: EdgeKind; route?: EdgeRoute };
export type RoutedFlowEdge = Edge<RoutedEdgeData, "routed">;

export function RoutedEdge(props: EdgeProps<RoutedFlowEdge>) {
  const { sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, data, label, markerEnd, style, interactionWidth } = props;
  const source = { x: sourceX, y: sourceY };
  const target = { x: targetX, y: targetY };
  const route = data?.route;
  let path: string;
  let labelX: number;
  let labelY: number;
  // Which drawing this is (elk's route, a detour, or a step edge): for tests and for a look in devtools.
  let drawn = "step";
  if (route && routeMeets(route, source, target)) {
    drawn = route.by ?? "elk";
    path = roundedPath(attachRoute(route.points, source, target));
    const box = route.label;
    const mid = labelPoint(route.points);
    [labelX, labelY] = box ? [box.x + box.width / 2, box.y + box.height / 2] : [mid.x, mid.y];
  } else {
    [path, labelX, labelY] = getSmoothStepPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, borderRadius: 8 });
  }
  return (
    <BaseEdge
      id={props.id}
      path={path}
      label={label}
      labelX={labelX}
      labelY={labelY}
      labelStyle={props.labelStyle}
      labelShowBg={props.labelShowBg}
      labelBgStyle={props.labelBgStyle}
      labelBgPadding={props.labelBgPadding}
      labelBgBorderRadius={props.labelBgBorderRadius}
      markerEnd={markerEnd}
      style={style}
      interactionWidth={interactionWidth}
      data-route={drawn}
    />
  );
}
