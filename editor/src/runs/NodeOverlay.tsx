/**
 * What a live run adds inside a canvas node (through the editor store's
 * `nodeExtra`): the tokens its model is streaming and, while it waits, the
 * approval card (in the node's NodeToolbar, below it). The status itself is
 * the store's `nodeStatus`.
 */

import { NodeToolbar, Position, useReactFlow } from "@xyflow/react";
import { useEffect } from "react";
import { useEditorStore } from "../store/editorStore";
import { ApprovalCard } from "./ApprovalCard";
import { decide } from "./runController";
import { useRunStore } from "./runStore";

const TOKEN_TAIL = 600;
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
      {tokens && (
        <div className="node-tokens nowheel" data-testid="node-tokens">
          {tokens.length > TOKEN_TAIL ? `…${tokens.slice(-TOKEN_TAIL)}` : tokens}
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
    const push = (state: ReturnType<typeof useRunStore.getState>) => {
      const editor = useEditorStore.getState();
      editor.setNodeStatus(state.nodeStatus);
      const extra: Record<string, React.ReactNode> = {};
      for (const node of new Set([...Object.keys(state.tokens).filter((n) => state.tokens[n]), ...Object.keys(state.approvals)]))
        extra[node] = <NodeRunExtra nodeId={node} />;
      // Same nodes as before: the components re-render from the run store themselves.
      const before = Object.keys(editor.nodeExtra).sort().join("\0");
      if (before !== Object.keys(extra).sort().join("\0")) editor.setNodeExtra(extra);
    };
    push(useRunStore.getState());
    const unsubscribe = useRunStore.subscribe((state, previous) => {
      if (state.nodeStatus !== previous.nodeStatus || state.tokens !== previous.tokens || state.approvals !== previous.approvals) push(state);
    });
    return () => {
      unsubscribe();
      useEditorStore.getState().setNodeStatus({});
      useEditorStore.getState().setNodeExtra({});
    };
  }, []);
}
