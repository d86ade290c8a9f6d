/** One decision's outcome: what was decided, the run it resumed, how that run ended, and a link to it. */

import { editorHash } from "../routes";
import { decisionVerb, runOutcomeText, useDecisionFeedback, type DecisionOutcome } from "./decisionFeedback";

export function DecisionNote({ outcome }: { outcome: DecisionOutcome }) {
  const dismiss = useDecisionFeedback((s) => s.dismiss);
  return (
    <span className="decision-note" data-testid="decision-note" data-status={outcome.status ?? ""} data-run={outcome.runId ?? ""}>
      <strong>{decisionVerb(outcome.decision)}</strong> {outcome.action ?? outcome.node}
      {outcome.runId ? (
        <>
          {" "}
          — resumed run <code title={outcome.runId}>{outcome.runId.slice(0, 8)}</code> ·{" "}
        </>
      ) : (
        " — "
      )}
      <span className={`decision-status status-${outcome.status ?? "none"}`} data-testid="decision-run-status">
        {runOutcomeText(outcome)}
      </span>{" "}
      <a href={editorHash(outcome.graph, outcome.version, outcome.threadId)} data-testid="decision-open-run">
        Open run
      </a>
      <button type="button" className="decision-dismiss" aria-label="Hide this message" onClick={() => dismiss(outcome.key)}>
        ×
      </button>
    </span>
  );
}

/** The newest decision made in this tab (the top bar shows it wherever you are). */
export function LatestDecision() {
  const latest = useDecisionFeedback((s) => s.outcomes[0]);
  return latest ? <DecisionNote outcome={latest} /> : null;
}
