/** One decision's outcome: what was decided, the run it resumed, how that run ended, and a link to it. */

import { editorHash } from "../routes";
import { useEffect } from "react";
import { decisionVerb, headerOutcome, runOutcomeText, useDecisionFeedback, type DecisionOutcome } from "./decisionFeedback";

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

/**
 * The newest decision made in this tab, in the top bar wherever you are, until its run has
 * settled and you move to another page (`page` names the one on screen); the inbox keeps it.
 */
export function LatestDecision({ page }: { page: string }) {
  const latest = useDecisionFeedback(headerOutcome);
  const pageChanged = useDecisionFeedback((s) => s.pageChanged);
  useEffect(() => pageChanged(), [page, pageChanged]);
  return latest ? <DecisionNote outcome={latest} /> : null;
}
