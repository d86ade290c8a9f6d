/** The run view's line on what Run starts (the saved version or the unsaved draft) and what the live run ran. */
import { useRunStore } from "../runs/runStore";
import { useStartedRun, type RunTarget } from "./runTarget";

export function RunTargetNote({ target, problem }: { target: RunTarget | null; problem: string | null }) {
  const ran = useStartedRun((s) => s.target);
  const ranThread = useStartedRun((s) => s.threadId);
  const threadId = useRunStore((s) => s.threadId);
  // By thread, not assistant id: re-reading the thread (a timer's resume) names its assistant by UUID.
  const live = ran && threadId && threadId === ranThread ? ran : null;
  return (
    <div className="run-target" data-testid="run-target">
      {live && (
        <p data-testid="run-ran" data-draft={live.draft ? "true" : "false"}>
          This run ran <strong>{live.label}</strong>
          {live.draft ? ": the text on the canvas, not a saved version." : "."}
        </p>
      )}
      {problem ? (
        <p className="error" data-testid="run-target-problem">
          {problem}
        </p>
      ) : (
        target && (
          <p className="muted" data-testid="run-next" data-draft={target.draft ? "true" : "false"}>
            Run starts {target.label}
            {target.draft ? " (your edits are not saved; the run does not save them)" : ""}.
          </p>
        )
      )}
    </div>
  );
}
