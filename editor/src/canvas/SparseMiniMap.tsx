/**
 * The minimap, kept small in the bottom-right corner and hidden while it would
 * cover a node, an approval card or a control there (it stays mounted, so it
 * shows again as soon as the corner is clear).
 */
import { MiniMap, useStore, type Node, type Transform } from "@xyflow/react";
import { useLayoutEffect, useState, type RefObject } from "react";
import type { SpecNodeData } from "./nodes";

const SIZE = { width: 150, height: 100 };
/** React Flow's panel margin. */
const MARGIN = 15;
/** Besides nodes, what the minimap may not cover: cards drawn in node toolbars, the zoom controls. */
const GUARDED = ".react-flow__node-toolbar, .react-flow__controls";

interface Box {
  l: number;
  t: number;
  r: number;
  b: number;
}

const intersects = (a: Box, b: Box) => a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b;

/**
 * Whether the minimap's corner of a `width` x `height` canvas is clear: node
 * boxes come from React Flow's store (no layout read for hundreds of nodes),
 * the few toolbars and controls from the page.
 */
function cornerClear(host: HTMLElement, nodes: Node[], [tx, ty, zoom]: Transform, width: number, height: number): boolean {
  const corner = { l: width - MARGIN - SIZE.width, t: height - MARGIN - SIZE.height, r: width - MARGIN, b: height - MARGIN };
  for (const node of nodes) {
    const w = node.measured?.width ?? 0;
    const h = node.measured?.height ?? 0;
    const l = node.position.x * zoom + tx;
    const t = node.position.y * zoom + ty;
    if (intersects(corner, { l, t, r: l + w * zoom, b: t + h * zoom })) return false;
  }
  const frame = host.getBoundingClientRect();
  for (const el of host.querySelectorAll(GUARDED)) {
    const r = el.getBoundingClientRect();
    if (intersects(corner, { l: r.left - frame.left, t: r.top - frame.top, r: r.right - frame.left, b: r.bottom - frame.top })) return false;
  }
  return true;
}

export function SparseMiniMap({ host }: { host: RefObject<HTMLElement | null> }) {
  const transform = useStore((s) => s.transform);
  const nodes = useStore((s) => s.nodes);
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);
  const [clear, setClear] = useState(false);
  // In the same commit as the view's move (before it is painted), so the
  // minimap never shows for a frame over what just moved under it.
  useLayoutEffect(() => {
    if (host.current) setClear(cornerClear(host.current, nodes, transform, width, height));
  }, [host, transform, nodes, width, height]);
  return (
    <MiniMap
      pannable
      zoomable
      data-testid="minimap"
      data-clear={clear ? "true" : "false"}
      aria-hidden={!clear}
      style={{ ...SIZE, visibility: clear ? "visible" : "hidden" }}
      nodeColor={(n) => ((n.data as SpecNodeData)?.node ? "#8fa3c8" : "#333")}
    />
  );
}
