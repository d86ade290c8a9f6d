/**
 * The minimap, kept small in the bottom-right corner and hidden while it would
 * cover a node, an approval card or a control there (it stays mounted, so it
 * shows again as soon as the corner is clear).
 */
import { MiniMap, useStore } from "@xyflow/react";
import { useLayoutEffect, useState, type RefObject } from "react";
import type { SpecNodeData } from "./nodes";

const SIZE = { width: 150, height: 100 };
/** React Flow's panel margin. */
const MARGIN = 15;
/** What the minimap may not cover: nodes, cards drawn in node toolbars, the zoom controls. */
const GUARDED = ".react-flow__node, .react-flow__node-toolbar, .react-flow__controls";

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

const intersects = (a: Box, b: Box) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/** Whether the minimap's corner of `host` is free of everything it may not cover. */
function cornerClear(host: HTMLElement): boolean {
  const frame = host.getBoundingClientRect();
  const corner = { right: frame.right - MARGIN, bottom: frame.bottom - MARGIN, left: frame.right - MARGIN - SIZE.width, top: frame.bottom - MARGIN - SIZE.height };
  for (const el of host.querySelectorAll(GUARDED)) if (intersects(corner, el.getBoundingClientRect())) return false;
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
    if (host.current) setClear(cornerClear(host.current));
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
