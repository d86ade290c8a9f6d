/**
 * What a run adds to the canvas, through the editor store: each node's status
 * (`skipped` once the run ended without reaching it), the edges the run took,
 * how many times each node ran, and inside a node (`nodeExtra`) one line: the
 * tail of the tokens its model is streaming. While a node waits, its approval
 * card (in the node's NodeToolbar, below it). What a node did in full is the
 * run panel's node inspector, so cards never grow.
 */

import { NodeToolbar, Position, useReactFlow } from "@xyflow/react";
import { useEffect } from "react";
import { useEditorStore } from "../store/editorStore";
import { ApprovalCard } from "./ApprovalCard";
import { decide } from "./runController";
import { shownStatus, useRunStore } from "./runStore";
import { takenEdges } from "./timeline";

/** Characters of streamed text a card shows (one line; the inspector has it all). */
const TOKEN_TAIL = 48;
/** Roughly half an approval card's height: the view centres on the card, below its node. */
const CARD_HALF_HEIGHT = 170;

/** Bring a waiting node's card into view once, when it appears. */
function useRevealCard(nodeId: string, waiting: boolean): void {
  const flow = useReactFlow();
  useEffect(() => {
    if (!waiting) return;
    const node = flow.getNode(nodeId);
    if (!node) return;
    const width = node.measured?.width ?? 0;
    const height = node.measured?.height ?? 0;
    void flow.setCenter(node.position.x + width / 2, node.position.y + height + CARD_HALF_HEIGHT, {
      zoom: Math.max(flow.getZoom(), 0.9),
      duration: 200,
    });
  }, [flow, nodeId, waiting]);
}

export function NodeRunExtra({ nodeId }: { nodeId: string }) {
  const status = useRunStore((s) => s.nodeStatus[nodeId]);
  const tokens = useRunStore((s) => s.tokens[nodeId]);
  const approval = useRunStore((s) => s.approvals[nodeId]);
  useRevealCard(nodeId, Boolean(approval) && status === "waiting");
  return (
    <div className="node-run-extra" data-testid="node-run-extra" data-status={status}>
      {tokens && status === "running" && (
        <div className="node-tokens" data-testid="node-tokens" title="streaming: the run panel's node inspector shows it all">
          {tokens.length > TOKEN_TAIL ? `…${tokens.slice(-TOKEN_TAIL).replace(/\s+/g, " ")}` : tokens.replace(/\s+/g, " ")}
        </div>
      )}
      {approval && status === "waiting" && (
        // A toolbar is drawn above every node at screen scale, so the card neither resizes its node nor gets clipped.
        <NodeToolbar nodeId={nodeId} isVisible position={Position.Bottom}>
          <ApprovalCard key={approval.interruptId ?? nodeId} approval={approval} onDecide={(decision) => decide(approval, decision)} />
        </NodeToolbar>
      )}
    </div>
  );
}

/** Mirror the run onto the canvas while mounted (RunPanel mounts it); clears it on unmount. */
export function useCanvasRunBridge(): void {
  useEffect(() => {
    const push = (state: ReturnType<typeof useRunStore.getState>, previous: ReturnType<typeof useRunStore.getState> | null) => {
      const editor = useEditorStore.getState();
      if (!previous || state.nodeStatus !== previous.nodeStatus || state.phase !== previous.phase)
        editor.setNodeStatus(shownStatus(state.nodeStatus, state.phase));
      if (!previous || state.timeline.entries !== previous.timeline.entries || state.phase !== previous.phase) {
        const ended = state.phase === "success";
        const taken = takenEdges(state.timeline, editor.model.edges, ended);
        if (taken.join("\0") !== editor.takenEdges.join("\0")) editor.setTakenEdges(taken);
        if (state.timeline.visits !== previous?.timeline.visits) editor.setNodeVisits(state.timeline.visits);
      }
      const extra: Record<string, React.ReactNode> = {};
      for (const node of new Set([...Object.keys(state.tokens).filter((n) => state.tokens[n]), ...Object.keys(state.approvals)]))
        extra[node] = <NodeRunExtra nodeId={node} />;
      // Same nodes as before: the components re-render from the run store themselves.
      const before = Object.keys(editor.nodeExtra).sort().join("\0");
      if (before !== Object.keys(extra).sort().join("\0")) editor.setNodeExtra(extra);
    };
    push(useRunStore.getState(), null);
    const unsubscribe = useRunStore.subscribe((state, previous) => {
      if (
        state.nodeStatus !== previous.nodeStatus ||
        state.tokens !== previous.tokens ||
        state.approvals !== previous.approvals ||
        state.timeline !== previous.timeline ||
        state.phase !== previous.phase
      )
        push(state, previous);
    });
    return () => {
      unsubscribe();
      const editor = useEditorStore.getState();
      editor.setNodeStatus({});
      editor.setNodeExtra({});
      editor.setTakenEdges([]);
      editor.setNodeVisits({});
    };
  }, []);
}
