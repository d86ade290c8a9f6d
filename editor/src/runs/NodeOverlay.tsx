/**
 * What a live run adds inside a canvas node (through the editor store's
 * `nodeExtra`): the tokens its model is streaming and, while it waits, the
 * approval card (ApprovalAnchor, beside the node). The status itself is
 * the store's `nodeStatus`.
 */

import { useEffect } from "react";
import { useEditorStore } from "../store/editorStore";
import { ApprovalAnchor } from "./ApprovalAnchor";
import { useRunStore } from "./runStore";

const TOKEN_TAIL = 600;

export function NodeRunExtra({ nodeId }: { nodeId: string }) {
  const status = useRunStore((s) => s.nodeStatus[nodeId]);
  const tokens = useRunStore((s) => s.tokens[nodeId]);
  return (
    <div className="node-run-extra" data-testid="node-run-extra" data-status={status}>
      {tokens && (
        <div className="node-tokens nowheel" data-testid="node-tokens">
          {tokens.length > TOKEN_TAIL ? `…${tokens.slice(-TOKEN_TAIL)}` : tokens}
        </div>
      )}
      <ApprovalAnchor nodeId={nodeId} />
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
