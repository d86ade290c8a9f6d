/**
 * The URL names the run on screen: `#/graphs/<name>/<version>?thread=<id>`.
 * Opening such a link (or reloading it) opens the run view on that thread;
 * starting or opening a run in the editor writes its thread into the URL,
 * and closing the run view takes it out. So a link always shows what it names.
 */

import { useEffect } from "react";
import { parseRoute, setThreadInUrl, useHash } from "./routes";
import { assistantOf, openThread } from "./runs/runController";
import { useRunStore } from "./runs/runStore";
import { useEditorStore } from "./store/editorStore";

/** The run view of the editor page, as far as the URL needs it. */
export interface RunView {
  /** Whether the run panel (which shows the run store's thread) is mounted. */
  open: boolean;
  /** Open it: it then opens the thread the run store was asked to (`requestOpen`). */
  show(): void;
  onError?(message: string): void;
}

/** Keep the editor of `name@version` and the URL's `thread` in step (call once, in the editor page). */
export function useRunUrl(name: string, version: string, view: RunView): void {
  const route = parseRoute(useHash());
  const thread = route.page === "editor" ? route.thread : null;
  const { open, show, onError } = view;

  // URL → run: a link or a reload names a thread that is not the one shown.
  useEffect(() => {
    // The URL as it is now: the commit that closed the run panel may have taken the thread out.
    if (!thread || threadOfHash() !== thread || useRunStore.getState().threadId === thread) return;
    if (!open) {
      useRunStore.getState().requestOpen(name, thread);
      show();
      return;
    }
    const nodes = useEditorStore.getState().model.nodes.map((node) => node.id);
    openThread(thread, assistantOf(name, version), nodes).catch((e: unknown) => onError?.(e instanceof Error ? e.message : String(e)));
    // Only when the URL's thread changes (opening the panel must not reopen it).
    // eslint-disable-next-line react-hooks/exhaustive-deps -- not on `open`, `show` or `onError`
  }, [thread, name, version]);

  // Run → URL: a run started or opened here, or the run view closed.
  useEffect(
    () =>
      useRunStore.subscribe((state, previous) => {
        if (state.threadId === previous.threadId) return;
        if (state.threadId) setThreadInUrl(state.threadId, name, version);
        // Cleared: only the thread it showed (a link to another thread may be opening).
        else if (previous.threadId && threadOfHash() === previous.threadId) setThreadInUrl(null, name, version);
      }),
    [name, version],
  );
}

function threadOfHash(): string | null {
  const route = parseRoute(window.location.hash);
  return route.page === "editor" ? route.thread : null;
}
