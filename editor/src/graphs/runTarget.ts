/**
 * What a Run starts: the saved version when the text is as saved, otherwise
 * exactly what the canvas shows, as a draft (`POST /drafts`: validated as an
 * upload, run as its own assistant, never published). The run view says which.
 */
import { useEffect, useState } from "react";
import { create } from "zustand";
import { ApiError, graphs } from "../api/client";
import { useEditorStore } from "../store/editorStore";

export interface RunTarget {
  assistantId: string;
  /** Set when the target is unsaved text: the draft's digest and stored version. */
  draft: { digest: string; version: string } | null;
  /** "version 1.0.1" or "the unsaved draft (1a2b3c4d)". */
  label: string;
}

const DRAFT_DEBOUNCE_MS = 400;

/** The target of a run of `graph@version` as the editor holds it now. */
export async function runTarget(graph: string, version: string): Promise<RunTarget> {
  const { yaml, baseYaml, isNew } = useEditorStore.getState();
  if (!isNew && yaml === baseYaml) return { assistantId: `${graph}@${version}`, draft: null, label: `version ${version}` };
  const draft = await graphs.draft(yaml);
  return { assistantId: draft.assistant_id, draft: { digest: draft.digest, version: draft.version }, label: draftLabel(draft.digest) };
}

/** How a draft is named: by the start of its digest. */
function draftLabel(digest: string): string {
  return `the unsaved draft (${digest.replace(/^sha256:/, "").slice(0, 8)})`;
}

/**
 * What a run that exists ran, as its row says (a run opened from Past runs, or read again):
 * a draft when its metadata marks one, else its version; `null` from a server that does not say.
 */
export function ranTargetOf(run: { assistant_id: string; metadata?: Record<string, unknown> | null; plait_version?: string }): RunTarget | null {
  const draft = run.metadata?.plait_draft as { digest?: string; version?: string } | undefined;
  if (draft?.digest && draft.version)
    return { assistantId: run.assistant_id, draft: { digest: draft.digest, version: draft.version }, label: draftLabel(draft.digest) };
  return run.plait_version ? { assistantId: run.assistant_id, draft: null, label: `version ${run.plait_version}` } : null;
}

/** Why unsaved text cannot run, in words. */
function draftProblem(error: unknown): string {
  if (error instanceof ApiError && error.issues.length > 0) {
    const first = error.issues[0];
    const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more in Problems)` : "";
    return `the unsaved text cannot run: ${first.line ? `line ${first.line}: ` : ""}${first.message}${more}`;
  }
  return `the unsaved text cannot run: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * The run target, kept up to date while the text changes (a draft is stored
 * a moment after typing stops), or why the text cannot run.
 */
export function useRunTarget(graph: string, version: string): { target: RunTarget | null; problem: string | null } {
  const yaml = useEditorStore((s) => s.yaml);
  const clean = useEditorStore((s) => !s.isNew && s.yaml === s.baseYaml);
  const parses = useEditorStore((s) => s.parseProblems.every((p) => p.severity !== "error"));
  const [found, setFound] = useState<{ target: RunTarget | null; problem: string | null }>({ target: null, problem: null });
  useEffect(() => {
    if (clean) {
      setFound({ target: { assistantId: `${graph}@${version}`, draft: null, label: `version ${version}` }, problem: null });
      return;
    }
    if (!parses) {
      setFound({ target: null, problem: "the YAML does not parse: fix it (see Problems) to run the draft" });
      return;
    }
    let live = true;
    const timer = window.setTimeout(() => {
      runTarget(graph, version)
        .then((target) => live && setFound({ target, problem: null }))
        .catch((e: unknown) => live && setFound({ target: null, problem: draftProblem(e) }));
    }, DRAFT_DEBOUNCE_MS);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [graph, version, yaml, clean, parses]);
  return found;
}

/**
 * What the run started here ran, and its thread (set once the thread exists), for the run
 * view to say. Kept by thread: the thread pins the version, so its resumes ran it too.
 */
export const useStartedRun = create<{ target: RunTarget | null; threadId: string | null; started: (target: RunTarget, threadId: string) => void }>((set) => ({
  target: null,
  threadId: null,
  started: (target, threadId) => set({ target, threadId }),
}));
