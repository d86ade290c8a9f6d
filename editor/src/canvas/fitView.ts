/**
 * How the canvas fits the graph into view, and fitting again whenever the
 * canvas changes size (a pane opened or closed beside it, the window resized).
 */
import { useReactFlow, useStore, type FitViewOptions } from "@xyflow/react";
import { useEffect, useRef } from "react";

/** A fixed margin round the graph (a share of a small canvas would waste it), never zoomed in past 1. */
export const FIT_VIEW: FitViewOptions = { padding: { x: "28px", y: "24px" }, maxZoom: 1 };

/** Fit the view again when React Flow's pane changes size (not on its first measure: `fitView` does that). */
export function useFitOnResize(): void {
  const flow = useReactFlow();
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);
  const measured = useRef(false);
  useEffect(() => {
    if (!width || !height) return;
    if (!measured.current) {
      measured.current = true;
      return;
    }
    void flow.fitView(FIT_VIEW);
  }, [flow, width, height]);
}
