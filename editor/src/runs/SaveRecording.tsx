/**
 * Save the shown thread's runs as a recording (`GET /threads/{id}/recording`), the
 * file `plait replay` runs again with no model, tool or remote agent called. When
 * the server cannot record it (a model's replies were not kept), says why in its words.
 */

import { useState } from "react";
import { recordingOf } from "./runApi";

export function recordingFileName(graph: string, threadId: string): string {
  return `${graph}-${threadId.slice(0, 8)}.recording.json`;
}

export function SaveRecording({ threadId, graph }: { threadId: string; graph: string }) {
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function save() {
    setBusy(true);
    setProblem(null);
    try {
      const recording = await recordingOf(threadId);
      const blob = new Blob([JSON.stringify(recording, null, 2) + "\n"], { type: "application/json" });
      const link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = recordingFileName(graph, threadId);
      link.click();
      URL.revokeObjectURL(link.href);
    } catch (e: unknown) {
      setProblem(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="save-recording">
      <button
        type="button"
        data-testid="save-recording"
        disabled={busy}
        onClick={() => void save()}
        title="The thread's input, decisions, model replies, tool results and remote agents' answers as a file: `plait replay FILE --spec SPEC` runs it again with nothing called"
      >
        {busy ? "Saving…" : "Save as recording"}
      </button>
      {problem && (
        <p className="error" data-testid="save-recording-problem">
          {problem}
        </p>
      )}
    </div>
  );
}
