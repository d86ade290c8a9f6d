/**
 * Keeps the open graph's unsaved edits in the browser (drafts.ts) a moment
 * after each change, at once when the page is hidden or another graph opens,
 * and asks before the page is left with unsaved edits.
 */
import { useEffect } from "react";
import { removeDraft, writeDraft } from "./drafts";
import { isDirty, useEditorStore, type EditorState } from "./editorStore";

const KEEP_DEBOUNCE_MS = 250;

/** Write (or, when nothing is unsaved, remove) the draft of the graph `state` shows. */
export function keepDraft(state: EditorState): void {
  const { graphName, version } = state;
  if (!graphName || !version) return;
  if (isDirty(state))
    writeDraft({
      graph: graphName,
      version,
      yaml: state.yaml,
      positions: state.positions,
      baseYaml: state.baseYaml,
      isNew: state.isNew,
    });
  else removeDraft(graphName, version);
}

export function useDraftKeeper(): void {
  useEffect(() => {
    let timer = 0;
    let pending: EditorState | null = null;
    const flush = () => {
      window.clearTimeout(timer);
      if (pending) keepDraft(pending);
      pending = null;
    };
    const unsubscribe = useEditorStore.subscribe((s, prev) => {
      const same = s.graphName === prev.graphName && s.version === prev.version;
      // Another graph opened (or this one saved under a new version): keep the old one's edits now.
      if (!same) flush();
      if (s.yaml === prev.yaml && s.positions === prev.positions && s.baseYaml === prev.baseYaml && s.isNew === prev.isNew && same) return;
      if (!same) return; // a load: its text is what the server or the draft already holds
      pending = s;
      window.clearTimeout(timer);
      timer = window.setTimeout(flush, KEEP_DEBOUNCE_MS);
    });
    const onLeave = (event: BeforeUnloadEvent) => {
      flush();
      if (isDirty(useEditorStore.getState())) {
        // The draft is kept either way; leaving still asks first, as people expect of unsaved work.
        event.preventDefault();
        event.returnValue = "";
      }
    };
    window.addEventListener("beforeunload", onLeave);
    window.addEventListener("pagehide", flush);
    return () => {
      flush();
      unsubscribe();
      window.removeEventListener("beforeunload", onLeave);
      window.removeEventListener("pagehide", flush);
    };
  }, []);
}
