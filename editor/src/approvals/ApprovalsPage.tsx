/**
 * #/approvals: every pending approval across runs, newest first, with the
 * decide buttons and a link to its graph (which opens the waiting run).
 * Refreshes every few seconds so approvals parked by other runs show up.
 */

import { useCallback, useEffect, useState } from "react";
import "./approvals.css";
import { approvals, type Approval, type Decision } from "../api/client";
import { editorHash } from "../routes";
import { ApprovalCard } from "../runs/ApprovalCard";
import { useRunStore } from "../runs/runStore";

const REFRESH_MS = 5000;

export function ApprovalsPage() {
  const [list, setList] = useState<Approval[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [decided, setDecided] = useState<Record<string, string>>({});

  const load = useCallback(async () => {
    try {
      const found = await approvals.list("pending");
      found.sort((a, b) => (b.created_at ?? "").localeCompare(a.created_at ?? ""));
      setList(found);
      setError(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }, []);

  useEffect(() => {
    void load();
    const timer = window.setInterval(() => void load(), REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [load]);

  async function decide(approval: Approval, decision: Decision) {
    await approvals.decide(approval.approval_id, decision);
    setDecided((done) => ({ ...done, [approval.approval_id]: decision.decision }));
    await load();
  }

  return (
    <main className="approvals-page" data-testid="approvals-page">
      <header>
        <h1>Pending approvals</h1>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </header>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {Object.entries(decided).length > 0 && (
        <p className="ok" data-testid="approvals-decided">
          Decided: {Object.entries(decided).map(([id, decision]) => `${id.slice(0, 8)} ${decision}`).join(", ")}
        </p>
      )}
      {list === null && !error && <p>Loading…</p>}
      {list?.length === 0 && <p className="muted" data-testid="approvals-empty">Nothing waits for a decision.</p>}
      <div className="approval-grid">
        {list?.map((approval) => (
          <ApprovalCard
            key={approval.approval_id}
            approval={{
              action: approval.action,
              arguments: approval.arguments,
              reason: approval.reason,
              budgetUsed: approval.budget_used ?? approval.budget ?? null,
              expiresAt: approval.expires_at,
              node: approval.node,
            }}
            onDecide={(decision) => decide(approval, decision)}
          >
            <p className="approval-links">
              <a
                href={editorHash(approval.graph, approval.version)}
                data-testid="approval-open-run"
                onClick={() => useRunStore.getState().requestOpen(approval.graph, approval.thread_id)}
              >
                {approval.graph}@{approval.version} · node {approval.node}
              </a>
              <span className="muted"> · run {approval.run_id.slice(0, 8)}</span>
            </p>
          </ApprovalCard>
        ))}
      </div>
    </main>
  );
}
