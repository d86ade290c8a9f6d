/**
 * What a run adds to the canvas, as plain data in the editor store: each
 * node's status (`skipped` once the run ended without reaching it), the edges
 * the run took, how many times each node ran, and the one line a running
 * node's card shows (what its tool call waits for under a tool's limits, or
 * the tail of the tokens its model is streaming). The
 * node cards select these by their id and draw them; a waiting node's card
 * also anchors its approval card beside it. What a node did in full is the
 * run panel's node inspector, so cards never grow.
 */

import { useEffect } from "react";
import { shallow } from "zustand/shallow";
import { useEditorStore } from "../store/editorStore";
import { lossLines, runLines, shownStatus, useRunStore, waitingLines } from "./runStore";
import { reachedEnd } from "./runStates";
import { takenEdges } from "./timeline";

/** Mirror the run onto the canvas while mounted (RunPanel mounts it); clears it on unmount. */
export function useCanvasRunBridge(): void {
  useEffect(() => {
    const push = (state: ReturnType<typeof useRunStore.getState>, previous: ReturnType<typeof useRunStore.getState> | null) => {
      const editor = useEditorStore.getState();
      if (!previous || state.nodeStatus !== previous.nodeStatus || state.phase !== previous.phase)
        editor.setNodeStatus(shownStatus(state.nodeStatus, state.phase));
      if (!previous || state.timeline.entries !== previous.timeline.entries || state.phase !== previous.phase || state.ended !== previous.ended) {
        // The edges into END only once the run's row says it got there (not a cancelled or timed-out run).
        const taken = takenEdges(state.timeline, editor.model.edges, reachedEnd(state.ended));
        if (taken.join("\0") !== editor.takenEdges.join("\0")) editor.setTakenEdges(taken);
        if (state.timeline.visits !== previous?.timeline.visits) editor.setNodeVisits(state.timeline.visits);
      }
      if (
        !previous ||
        state.tokens !== previous.tokens ||
        state.nodeStatus !== previous.nodeStatus ||
        state.timeline !== previous.timeline ||
        state.timers !== previous.timers ||
        state.tools !== previous.tools
      ) {
        const lines = runLines(state.tokens, state.nodeStatus, waitingLines(state.timeline), state.timers, state.tools, lossLines(state.timeline));
        // Tokens of a node whose line is unchanged (or not shown) re-render no card.
        if (!shallow(lines, editor.nodeRunLine)) editor.setNodeRunLine(lines);
      }
    };
    push(useRunStore.getState(), null);
    // push compares each part with the previous state itself: other run-store changes cost nothing.
    const unsubscribe = useRunStore.subscribe(push);
    return () => {
      unsubscribe();
      const editor = useEditorStore.getState();
      editor.setNodeStatus({});
      editor.setNodeRunLine({});
      editor.setTakenEdges([]);
      editor.setNodeVisits({});
    };
  }, []);
}
