/**
 * #/approvals, the approvals inbox. Pending: every approval waiting for a
 * decision, as decidable cards with when it was asked and a link that opens
 * its run (graph, version and thread in the URL). Decided: who decided what
 * and when, and the run the decision resumed. Filters by graph, status and
 * age; sorted by request time. Refreshes every few seconds.
 */

import { useCallback, useEffect, useMemo, useState } from "react";
import "./approvals.css";
import { approvals, resumedRun, runs, type Approval, type Decision, type RunStatus } from "../api/client";
import { editorHash } from "../routes";
import { ApprovalCard, formatRequested } from "../runs/ApprovalCard";
import { ArgumentChanges } from "./ArgumentChanges";
import { DecisionNote } from "./DecisionNote";
import { decisionFailed, decisionResumed, decisionSent, useDecisionFeedback } from "./decisionFeedback";
import { AGES, filterApprovals, type Age, type InboxFilter, type Sort } from "./inboxFilters";
import { refreshPending, usePendingCount } from "./pendingCount";

const REFRESH_MS = 5000;
const DECIDED_STATUSES = ["approved", "rejected", "edited", "expired"];

type Tab = "pending" | "decided";

export function ApprovalsPage() {
  const [tab, setTab] = useState<Tab>("pending");
  const [list, setList] = useState<Approval[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [filter, setFilter] = useState<InboxFilter>({ graph: "", status: "", age: "any", sort: "oldest" });
  const outcomes = useDecisionFeedback((s) => s.outcomes);

  const load = useCallback(async () => {
    try {
      // The server's order too, so its limit keeps the end the list shows first.
      const found = await approvals.list(tab, filter.sort);
      setList(found);
      setError(null);
      // The top bar's badge says what this list says, not what its last poll saw.
      if (tab === "pending") usePendingCount.setState({ count: found.length });
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }, [tab, filter.sort]);

  // Another tab is other data: it says "Loading…" until read. Another sort keeps the
  // list (sorted here at once) while the server's order is read: no flash of an empty inbox.
  useEffect(() => setList(null), [tab]);

  useEffect(() => {
    void load();
    const timer = window.setInterval(() => void load(), REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [load]);

  const graphs = useMemo(() => [...new Set((list ?? []).map((a) => a.graph))].sort(), [list]);
  const shown = useMemo(() => (list ? filterApprovals([...list], filter) : null), [list, filter]);

  async function decide(approval: Approval, decision: Decision) {
    const key = approval.approval_id;
    decisionSent({
      key,
      graph: approval.graph,
      version: approval.version,
      node: approval.node,
      action: approval.action,
      decision: decision.decision,
      threadId: approval.thread_id,
    });
    try {
      const run = resumedRun(await approvals.decide(approval.approval_id, decision));
      if (run) void decisionResumed(key, approval.thread_id, run.run_id);
      else void refreshPending();
    } catch (e) {
      decisionFailed(key, e instanceof Error ? e.message : String(e));
      throw e;
    }
    await load();
  }

  const set = (change: Partial<InboxFilter>) => setFilter((current) => ({ ...current, ...change }));
  return (
    <main className="approvals-page" data-testid="approvals-page">
      <header>
        <h1>Approvals</h1>
        <nav className="inbox-tabs" role="tablist">
          {(["pending", "decided"] as Tab[]).map((name) => (
            <button
              key={name}
              type="button"
              role="tab"
              aria-selected={tab === name}
              data-testid={`inbox-tab-${name}`}
              onClick={() => {
                setTab(name);
                set({ status: "" });
              }}
            >
              {name === "pending" ? "Pending" : "Decided"}
            </button>
          ))}
        </nav>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </header>
      <div className="inbox-filters">
        <label>
          Graph{" "}
          <select data-testid="inbox-filter-graph" value={filter.graph} onChange={(e) => set({ graph: e.target.value })}>
            <option value="">all graphs</option>
            {[...new Set([...graphs, ...(filter.graph ? [filter.graph] : [])])].map((graph) => (
              <option key={graph} value={graph}>
                {graph}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status{" "}
          <select data-testid="inbox-filter-status" value={filter.status} disabled={tab === "pending"} onChange={(e) => set({ status: e.target.value })}>
            <option value="">{tab === "pending" ? "pending" : "any decision"}</option>
            {tab === "decided" &&
              DECIDED_STATUSES.map((status) => (
                <option key={status} value={status}>
                  {status}
                </option>
              ))}
          </select>
        </label>
        <label>
          Requested{" "}
          <select data-testid="inbox-filter-age" value={filter.age} onChange={(e) => set({ age: e.target.value as Age })}>
            {(Object.keys(AGES) as Age[]).map((age) => (
              <option key={age} value={age}>
                {AGES[age]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Sort{" "}
          <select data-testid="inbox-sort" value={filter.sort} onChange={(e) => set({ sort: e.target.value as Sort })}>
            <option value="oldest">oldest first</option>
            <option value="newest">newest first</option>
          </select>
        </label>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {outcomes.length > 0 && (
        <ul className="inbox-outcomes" data-testid="inbox-outcomes">
          {outcomes.map((outcome) => (
            <li key={outcome.key}>
              <DecisionNote outcome={outcome} />
            </li>
          ))}
        </ul>
      )}
      {shown === null && !error && <p>Loading…</p>}
      {shown?.length === 0 && (
        <p className="muted" data-testid="approvals-empty">
          {list?.length ? "No approval matches these filters." : tab === "pending" ? "Nothing waits for a decision." : "No decisions yet."}
        </p>
      )}
      {tab === "pending" && shown && <PendingCards list={shown} onDecide={decide} />}
      {tab === "decided" && shown && shown.length > 0 && <DecidedTable list={shown} />}
    </main>
  );
}

function PendingCards({ list, onDecide }: { list: Approval[]; onDecide(approval: Approval, decision: Decision): Promise<void> }) {
  return (
    <div className="approval-grid" data-testid="inbox-pending">
      {list.map((approval) => (
        <ApprovalCard
          key={approval.approval_id}
          approval={{
            action: approval.action,
            arguments: approval.arguments,
            reason: approval.reason,
            budgetUsed: approval.budget_used ?? approval.budget ?? null,
            expiresAt: approval.expires_at,
            node: approval.node,
            requestedAt: approval.created_at ?? null,
          }}
          onDecide={(decision) => onDecide(approval, decision)}
        >
          <p className="approval-links">
            <a
              href={editorHash(approval.graph, approval.version, approval.thread_id)}
              data-testid="approval-open-run"
              title="Open the waiting run in the editor (a link you can share)"
            >
              Open run
            </a>{" "}
            <span className="muted">
              {approval.graph}@{approval.version} · node {approval.node} · thread <code title={approval.thread_id}>{approval.thread_id.slice(0, 8)}</code>
            </span>
          </p>
        </ApprovalCard>
      ))}
    </div>
  );
}

const DECIDED_WORD: Record<string, string> = { approved: "approved", rejected: "rejected", edited: "approved with edits", expired: "expired" };

function DecidedTable({ list }: { list: Approval[] }) {
  return (
    <table className="plait-table decided-table" data-testid="inbox-decided">
      <thead>
        <tr>
          <th>Requested</th>
          <th>Run</th>
          <th>Decision</th>
          <th>Decided by</th>
          <th>Decided</th>
          <th>Resumed run</th>
        </tr>
      </thead>
      <tbody>
        {list.map((approval) => {
          const decision = (approval.decision ?? {}) as { arguments?: unknown; comment?: string };
          return (
            <tr key={approval.approval_id} data-testid="decided-row" data-status={approval.status} data-approval={approval.approval_id}>
              <td>{approval.created_at ? formatRequested(approval.created_at) : "—"}</td>
              <td>
                {approval.graph}@{approval.version} · {approval.action ?? approval.node}
              </td>
              <td data-testid="decided-what">
                <strong>{DECIDED_WORD[approval.status] ?? approval.status}</strong>
                {decision.comment && <div className="muted">“{decision.comment}”</div>}
                {approval.status === "edited" && <ArgumentChanges before={approval.arguments} after={decision.arguments} />}
              </td>
              <td data-testid="decided-by">{approval.decided_by ?? <span className="muted">not recorded (no name, no API key)</span>}</td>
              <td data-testid="decided-at">{approval.decided_at ? new Date(approval.decided_at).toLocaleString() : "—"}</td>
              <td>{approval.resume_run_id ? <ResumedRun approval={approval} runId={approval.resume_run_id} /> : "—"}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The resume run's id and status, with a link that opens it. */
function ResumedRun({ approval, runId }: { approval: Approval; runId: string }) {
  const [status, setStatus] = useState<RunStatus | "unknown" | null>(null);
  useEffect(() => {
    let live = true;
    runs
      .get(approval.thread_id, runId)
      .then((run) => live && setStatus(run.status))
      .catch(() => live && setStatus("unknown"));
    return () => {
      live = false;
    };
  }, [approval.thread_id, runId]);
  return (
    <span data-testid="decided-run" data-status={status ?? ""}>
      <code title={runId}>{runId.slice(0, 8)}</code> · {status ?? "…"}{" "}
      <a href={editorHash(approval.graph, approval.version, approval.thread_id)} data-testid="decided-open-run">
        Open run
      </a>
    </span>
  );
}
