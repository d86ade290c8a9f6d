/**
 * The approval card of a waiting node, anchored beside it (a React Flow
 * NodeToolbar, drawn at screen scale above the canvas). Its side, and where
 * along that side, are chosen (approvals/cardPlacement.ts) so node and card
 * stay inside the canvas and clear of the minimap, the controls and any pane
 * over the canvas, and the card lies on none of the graph's other nodes and
 * edge labels wherever a placement allows it; when none fits as the view
 * stands, the view pans, and zooms out a little if a pan alone cannot make
 * room (when the card appears, when it or the canvas resizes, and once the
 * view settles after a move that was not the person's, such as a fit). While
 * that pan animates, the placement stays: the view passes through states the
 * card was not placed for, and a card that jumps sides while it is read is
 * worse than one that covers a label; it is checked again against where the
 * pan ended. A pan interrupted never reports its end: when a fit cut it
 * short, it is over once the view has been still for a moment, and the card
 * is placed (and the view panned) for the fitted view then; else a second
 * later. While the person moves the view, the card follows without panning
 * it back. The first placement may pan too, so the card shows on its final
 * side from its first frame. While the pointer is over the card or focus is
 * inside it, it holds its place (approvals/cardHold.ts): no placement moves
 * it or the view under the person's hand, its top edge stays as it grows,
 * and what was asked meanwhile is placed once they have left it; unless the
 * view has pushed it out of sight (a smaller window's refit left it under the
 * run pane, say): then a placement asked for is made at once, still held.
 */

import { NodeToolbar, Position, useReactFlow, useStore } from "@xyflow/react";
import { useCallback, useLayoutEffect, useRef, useState, type FocusEvent } from "react";
import { decisionFailed, decisionResumed, decisionSent } from "../approvals/decisionFeedback";
import { placeCard, type Align, type Rect, type Side } from "../approvals/cardPlacement";
import { ask, FREE, isHeld, outOfSight, pressEnded, touch, type Hold, type HoldStep } from "../approvals/cardHold";
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
/** How far the view may be zoomed out to make room for the card: by these factors, never below MIN_ZOOM. */
const ZOOM_OUT = [0.95, 0.9, 0.85, 0.8, 0.75, 0.7];
const MIN_ZOOM = 0.5;
/** A view move this soon after the person's pointer or wheel on the canvas is theirs (ms). */
const PERSON_MS = 1000;
/** A move that was not the person's (a fit) is placed for once the view has been still this long (ms). */
const SETTLE_MS = 250;
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
  const [align, setAlign] = useState<Align>("center");
  const [width, setWidth] = useState(CARD_WIDTH);
  // While held, the toolbar keeps the height the card had (what grows overflows it): a node toolbar
  // centres its card beside the node (or sets it on it), and would move the field being typed in.
  const [heldHeight, setHeldHeight] = useState<number | null>(null);
  const card = useRef<HTMLDivElement>(null);
  // Our own pan while it animates (null: none): the view moves, the card keeps its side.
  const panning = useRef<object | null>(null);
  // Re-evaluated as the view moves (the side only; panning is for appearing and resizing).
  const transform = useStore((s) => s.transform.join(","));

  // When the person last touched the canvas (pointer, wheel) and whether a pointer is down on it.
  const touched = useRef({ at: -Infinity, down: false });
  const byPerson = useCallback(() => touched.current.down || performance.now() - touched.current.at < PERSON_MS, []);
  // Whether the person is using the card, and the placement that waits for them to leave it.
  const hold = useRef<Hold>(FREE);

  const place = useCallback(
    (pan: boolean) => {
      // Our pan animates (the view moves every frame): the card is placed where it ends. A held
      // card still looks, so that what it is asked meanwhile is owed, or made if it is hidden.
      if (panning.current !== null && !isHeld(hold.current)) return;
      const element = card.current;
      const node = document.querySelector(`.react-flow__node[data-id="${CSS.escape(nodeId)}"]`);
      const canvas = node?.closest(".react-flow");
      const view = canvas?.getBoundingClientRect();
      const area = view && {
        left: Math.max(view.left, 0),
        top: Math.max(view.top, 0),
        right: Math.min(view.right, window.innerWidth),
        bottom: Math.min(view.bottom, window.innerHeight),
      };
      const obstacles = element
        ? [...document.querySelectorAll(OBSTACLES)].filter((o) => !o.contains(element)).map((o) => toRect(o.getBoundingClientRect()))
        : [];
      // Held, the card is placed only if the view has pushed it out of sight (under a pane, past the edge).
      const hidden = isHeld(hold.current) && !!element && !!area && outOfSight(toRect(element.getBoundingClientRect()), area, obstacles);
      const asked = ask(hold.current, pan, hidden);
      hold.current = asked.hold;
      if (asked.place === null) return; // held: placed once they leave it
      if (!element || !node || !canvas || !view || !area || panning.current !== null) return;
      const fitted = Math.max(MIN_CARD_WIDTH, Math.min(CARD_WIDTH, Math.floor(area.right - area.left - 2 * MARGIN)));
      if (fitted !== width) {
        setWidth(fitted); // the resize observer places it again at its new size
        return;
      }
      // Still held (it was out of sight): the toolbar keeps the height the card has now, the
      // height it is placed for (with an older one, what overflows it could fall off the canvas).
      if (isHeld(asked.hold)) setHeldHeight(element.offsetHeight);
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
        zoomOut: ZOOM_OUT.filter((f) => flow.getViewport().zoom * f >= MIN_ZOOM),
        gap: GAP,
        margin: MARGIN,
      });
      setSide(placed.side);
      setAlign(placed.align);
      if (pan && (placed.shift.x !== 0 || placed.shift.y !== 0 || placed.zoom !== 1)) {
        const { x, y, zoom } = flow.getViewport();
        // Zoomed about the node's centre (in the canvas's own pixels), then panned.
        const nodeBox = node.getBoundingClientRect();
        const cx = (nodeBox.left + nodeBox.right) / 2 - view.left;
        const cy = (nodeBox.top + nodeBox.bottom) / 2 - view.top;
        const f = placed.zoom;
        const thisPan = {};
        panning.current = thisPan;
        const ended = () => {
          if (panning.current !== thisPan) return; // already ended, or a later pan is on
          panning.current = null;
          place(!byPerson());
        };
        const target = { x: cx + (x - cx) * f + placed.shift.x, y: cy + (y - cy) * f + placed.shift.y, zoom: zoom * f };
        void flow.setViewport(target, { duration: PAN_MS }).then(ended);
        // A pan interrupted (the person drags, the view is fitted) never resolves: end it anyway,
        // late enough that a slow frame of a pan still under way is not taken for one.
        window.setTimeout(ended, PAN_MS + 1000);
      }
    },
    [flow, nodeId, width, byPerson],
  );

  const holdStep = useCallback(
    (step: HoldStep) => {
      const held = isHeld(step.hold);
      if (held !== isHeld(hold.current)) setHeldHeight(held ? (card.current?.offsetHeight ?? null) : null);
      hold.current = step.hold;
      if (step.place !== null) place(step.place);
    },
    [place],
  );

  // The first placement may pan (the card appears): placed without, it would show on the
  // side that needs none for a frame, then move when the resize observer's placement pans.
  // Later moves of the view: the person's are followed without a pan (the view is theirs);
  // any other (a fit) is placed for, pan and all, once the view is still.
  const shown = useRef(false);
  useLayoutEffect(() => {
    if (!shown.current) {
      shown.current = true;
      place(true);
      return;
    }
    if (byPerson()) {
      place(false);
      return;
    }
    const settled = window.setTimeout(() => {
      // Still this long, the view runs no pan of ours (each of its frames moves the view):
      // one a fit interrupted never reports its end, and must not keep this placement out.
      panning.current = null;
      place(!byPerson());
    }, SETTLE_MS);
    return () => window.clearTimeout(settled);
  }, [place, transform, byPerson]);

  useLayoutEffect(() => {
    const canvas = document.querySelector(`.react-flow__node[data-id="${CSS.escape(nodeId)}"]`)?.closest(".react-flow");
    if (!canvas) return;
    const stamp = (down?: boolean) => () => {
      touched.current = { at: performance.now(), down: down ?? touched.current.down };
    };
    const listeners: [string, () => void][] = [
      ["pointerdown", stamp(true)],
      ["wheel", stamp()],
      ["touchstart", stamp(true)],
    ];
    // A press that began on the canvas ends; one elsewhere (say on Fit view) is not the person
    // moving the view, and the fit it asks for is placed for once the view stands still. A
    // placement that waited for the press (cardHold.ts) is due.
    const up = () => {
      if (!touched.current.down) return;
      touched.current = { at: performance.now(), down: false };
      holdStep(pressEnded(hold.current));
    };
    const ups: [string, () => void][] = [
      ["pointerup", up],
      ["pointercancel", up],
      ["touchend", up],
    ];
    for (const [name, listener] of listeners) canvas.addEventListener(name, listener, { capture: true, passive: true });
    for (const [name, listener] of ups) window.addEventListener(name, listener, { capture: true, passive: true });
    return () => {
      for (const [name, listener] of listeners) canvas.removeEventListener(name, listener, { capture: true });
      for (const [name, listener] of ups) window.removeEventListener(name, listener, { capture: true });
    };
  }, [nodeId, holdStep]);

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

  const holdChanged = (change: Partial<Pick<Hold, "pointer" | "focus">>) => holdStep(touch(hold.current, change, touched.current.down));
  // Focus moving within the card keeps it held; leaving it (or its element removed) does not.
  const blurred = (event: FocusEvent) => holdChanged({ focus: !!card.current?.contains(event.relatedTarget as Node | null) });

  return (
    <NodeToolbar
      nodeId={nodeId}
      isVisible
      position={POSITION[side]}
      align={align}
      offset={GAP}
      style={heldHeight === null ? undefined : { height: heldHeight }}
    >
      <div
        ref={card}
        className="approval-anchor"
        data-testid="approval-anchor"
        data-side={side}
        data-align={align}
        style={{ width }}
        onPointerEnter={() => holdChanged({ pointer: true })}
        onPointerLeave={() => holdChanged({ pointer: false })}
        onFocus={() => holdChanged({ focus: true })}
        onBlur={blurred}
      >
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
