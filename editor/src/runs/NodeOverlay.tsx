/**
 * What a run adds to the canvas, through the editor store: each node's status
 * (`skipped` once the run ended without reaching it), the edges the run took,
 * how many times each node ran, and inside a node (`nodeExtra`) one line: the
 * tail of the tokens its model is streaming. While a node waits, its approval
 * card (ApprovalAnchor, beside the node). What a node did in full is the run
 * panel's node inspector, so cards never grow.
 */

import { useEffect } from "react";
import { useEditorStore } from "../store/editorStore";
import { ApprovalAnchor } from "./ApprovalAnchor";
import { shownStatus, useRunStore } from "./runStore";
import { takenEdges } from "./timeline";

/** Characters of streamed text a card shows (one line; the inspector has it all). */
const TOKEN_TAIL = 48;

export function NodeRunExtra({ nodeId }: { nodeId: string }) {
  const status = useRunStore((s) => s.nodeStatus[nodeId]);
  const tokens = useRunStore((s) => s.tokens[nodeId]);
  return (
    <div className="node-run-extra" data-testid="node-run-extra" data-status={status}>
      {tokens && status === "running" && (
        <div className="node-tokens" data-testid="node-tokens" title="streaming: the run panel's node inspector shows it all">
          {tokens.length > TOKEN_TAIL ? `…${tokens.slice(-TOKEN_TAIL).replace(/\s+/g, " ")}` : tokens.replace(/\s+/g, " ")}
        </div>
      )}
      <ApprovalAnchor nodeId={nodeId} />
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
