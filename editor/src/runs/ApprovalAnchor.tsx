/**
 * The approval card of a waiting node, anchored beside it (a React Flow
 * NodeToolbar, drawn at screen scale above the canvas). Its side is chosen
 * so node and card stay inside the canvas and clear of the minimap, the
 * controls and any pane over the canvas, hiding no other node where it can;
 * when no side fits as the view stands, the view pans (when the card
 * appears, or it or the canvas resizes). While that pan animates, the side
 * stays: the view passes through states the card was not placed for, and a
 * card that jumps sides while it is read is worse than one that covers a
 * label; the side is checked again against where the pan ended (or once it
 * would have: a pan the person interrupts never reports its end, so a second
 * later). The first placement may pan too, so the card shows on its final side
 * from its first frame.
 */

import { NodeToolbar, Position, useReactFlow, useStore } from "@xyflow/react";
import { useCallback, useLayoutEffect, useRef, useState } from "react";
import { decisionFailed, decisionResumed, decisionSent } from "../approvals/decisionFeedback";
import { placeCard, type Rect, type Side } from "../approvals/cardPlacement";
import type { Decision } from "../api/client";
import { useEditorStore } from "../store/editorStore";
import { ApprovalCard } from "./ApprovalCard";
import { decide } from "./runController";
import { type ApprovalRequest, useRunStore } from "./runStore";

const GAP = 10;
const MARGIN = 8;
/** The card's width where there is room; a narrow canvas gets a narrower (taller) card. */
const CARD_WIDTH = 340;
const MIN_CARD_WIDTH = 220;
/** How long the view's pan to the card animates. */
const PAN_MS = 200;
const POSITION: Record<Side, Position> = { bottom: Position.Bottom, top: Position.Top, left: Position.Left, right: Position.Right };
/** What floats over the canvas: React Flow's panels (minimap, controls) and panes that mark themselves. */
const OBSTACLES = ".react-flow__panel, [data-overlays-canvas]";

const toRect = (r: DOMRect): Rect => ({ left: r.left, top: r.top, right: r.right, bottom: r.bottom });

/** The card of `nodeId` while it waits for a decision; nothing otherwise. */
export function ApprovalAnchor({ nodeId }: { nodeId: string }) {
  const status = useRunStore((s) => s.nodeStatus[nodeId]);
  const approval = useRunStore((s) => s.approvals[nodeId]);
  if (!approval || status !== "waiting") return null;
  return <PlacedCard key={approval.interruptId ?? nodeId} nodeId={nodeId} approval={approval} />;
}

function PlacedCard({ nodeId, approval }: { nodeId: string; approval: ApprovalRequest }) {
  const flow = useReactFlow();
  const [side, setSide] = useState<Side>("bottom");
  const [width, setWidth] = useState(CARD_WIDTH);
  const card = useRef<HTMLDivElement>(null);
  // Our own pan while it animates (null: none): the view moves, the card keeps its side.
  const panning = useRef<object | null>(null);
  // Re-evaluated as the view moves (the side only; panning is for appearing and resizing).
  const transform = useStore((s) => s.transform.join(","));

  const place = useCallback(
    (pan: boolean) => {
      const element = card.current;
      const node = document.querySelector(`.react-flow__node[data-id="${CSS.escape(nodeId)}"]`);
      const canvas = node?.closest(".react-flow");
      if (!element || !node || !canvas || panning.current !== null) return;
      const view = canvas.getBoundingClientRect();
      const area = {
        left: Math.max(view.left, 0),
        top: Math.max(view.top, 0),
        right: Math.min(view.right, window.innerWidth),
        bottom: Math.min(view.bottom, window.innerHeight),
      };
      const fitted = Math.max(MIN_CARD_WIDTH, Math.min(CARD_WIDTH, Math.floor(area.right - area.left - 2 * MARGIN)));
      if (fitted !== width) {
        setWidth(fitted); // the resize observer places it again at its new size
        return;
      }
      const obstacles = [...document.querySelectorAll(OBSTACLES)].filter((o) => !o.contains(element)).map((o) => toRect(o.getBoundingClientRect()));
      const others = [...canvas.querySelectorAll(".react-flow__node")].filter((other) => other !== node).map((other) => toRect(other.getBoundingClientRect()));
      const labels = [...canvas.querySelectorAll(".react-flow__edge-textwrapper")].map((label) => toRect(label.getBoundingClientRect()));
      const placed = placeCard({
        node: toRect(node.getBoundingClientRect()),
        card: { width: element.offsetWidth, height: element.offsetHeight },
        area,
        obstacles,
        others,
        labels,
        canPan: pan,
        gap: GAP,
        margin: MARGIN,
      });
      setSide(placed.side);
      if (pan && (placed.shift.x !== 0 || placed.shift.y !== 0)) {
        const { x, y, zoom } = flow.getViewport();
        const thisPan = {};
        panning.current = thisPan;
        const ended = () => {
          if (panning.current !== thisPan) return; // already ended, or a later pan is on
          panning.current = null;
          place(false);
        };
        void flow.setViewport({ x: x + placed.shift.x, y: y + placed.shift.y, zoom }, { duration: PAN_MS }).then(ended);
        // A pan interrupted (the person drags, the view is fitted) never resolves: end it anyway,
        // late enough that a slow frame of a pan still under way is not taken for one.
        window.setTimeout(ended, PAN_MS + 1000);
      }
    },
    [flow, nodeId, width],
  );

  // The first placement may pan (the card appears): placed without, it would show on the
  // side that needs none for a frame, then move when the resize observer's placement pans.
  const shown = useRef(false);
  useLayoutEffect(() => {
    place(!shown.current);
    shown.current = true;
  }, [place, transform]);

  useLayoutEffect(() => {
    const element = card.current;
    const canvas = document.querySelector(`.react-flow__node[data-id="${CSS.escape(nodeId)}"]`)?.closest(".react-flow");
    if (!element) return;
    // Fires once at once (the card appeared), then on every size change of card or canvas.
    const observer = new ResizeObserver(() => place(true));
    observer.observe(element);
    if (canvas) observer.observe(canvas);
    return () => observer.disconnect();
  }, [place, nodeId]);

  return (
    <NodeToolbar nodeId={nodeId} isVisible position={POSITION[side]} offset={GAP}>
      <div ref={card} className="approval-anchor" data-testid="approval-anchor" data-side={side} style={{ width }}>
        <ApprovalCard approval={approval} onDecide={(decision) => decideHere(approval, decision)} />
      </div>
    </NodeToolbar>
  );
}

/** Decide on the canvas, and report which run resumed and how it ended (the top bar shows it). */
async function decideHere(approval: ApprovalRequest, decision: Decision): Promise<void> {
  const { threadId } = useRunStore.getState();
  const { graphName, version } = useEditorStore.getState();
  const key = approval.approvalId ?? `${threadId}:${approval.node}`;
  if (threadId && graphName && version)
    decisionSent({ key, graph: graphName, version, node: approval.node, action: approval.action, decision: decision.decision, threadId });
  // The resumed run is known once its stream starts: follow its status from then on.
  const before = useRunStore.getState().runId;
  let followed = false;
  const follow = (runId: string | null) => {
    if (followed || !threadId || !runId || runId === before) return;
    followed = true;
    void decisionResumed(key, threadId, runId);
  };
  const unsubscribe = useRunStore.subscribe((state) => follow(state.runId));
  try {
    // Follows the resumed run to its end on the canvas.
    await decide(approval, decision);
    follow(useRunStore.getState().runId);
  } catch (e) {
    decisionFailed(key, e instanceof Error ? e.message : String(e));
    throw e;
  } finally {
    unsubscribe();
  }
}
