/**
 * One pending approval: the action, its arguments, the reason, budget used and
 * expiry, with approve / reject / edit-arguments. Editing opens a JSON editor
 * for the arguments; "edit" is sent only when they parse. Used on the waiting
 * node's card (canvas) and on the approvals page.
 */

import { useState } from "react";
import "./runs.css";
import type { Decision } from "../api/client";

export interface ApprovalView {
  action: string | null;
  arguments: unknown;
  reason: string | null;
  budgetUsed: unknown;
  expiresAt: string | null;
  node: string;
}

export interface ApprovalCardProps {
  approval: ApprovalView;
  onDecide(decision: Decision): Promise<void>;
  /** Extra content (e.g. links on the approvals page). */
  children?: React.ReactNode;
}

function formatBudget(budget: unknown): string {
  if (budget === null || budget === undefined) return "—";
  if (typeof budget === "number" || typeof budget === "string") return String(budget);
  // A run's usage (spec budgets): steps, tokens and cost so far.
  const usage = budget as { steps?: unknown; input_tokens?: unknown; output_tokens?: unknown; cost?: unknown };
  if (typeof usage.steps === "number") {
    const tokens = Number(usage.input_tokens ?? 0) + Number(usage.output_tokens ?? 0);
    const parts = [`${usage.steps} step${usage.steps === 1 ? "" : "s"}`, `${tokens.toLocaleString()} tokens`];
    if (typeof usage.cost === "number" && usage.cost > 0) parts.push(`$${usage.cost.toFixed(4)}`);
    return parts.join(" · ");
  }
  return JSON.stringify(budget);
}

function formatExpiry(expiresAt: string | null): string {
  if (!expiresAt) return "never";
  const when = new Date(expiresAt);
  const minutes = Math.round((when.getTime() - Date.now()) / 60000);
  const relative =
    minutes < 0 ? "expired" : minutes < 60 ? `in ${minutes} min` : `in ${Math.round(minutes / 60)} h`;
  return `${when.toLocaleString()} (${relative})`;
}

export function ApprovalCard({ approval, onDecide, children }: ApprovalCardProps) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(() => JSON.stringify(approval.arguments ?? {}, null, 2));
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  let parsed: unknown = undefined;
  let parseError: string | null = null;
  if (editing) {
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      parseError = e instanceof Error ? e.message : String(e);
    }
  }

  async function send(decision: Decision) {
    setBusy(true);
    setError(null);
    try {
      await onDecide(comment ? { ...decision, comment } : decision);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    // nodrag/nowheel: inside a React Flow node, clicks and scrolls belong to the card.
    <div className="approval-card nodrag nowheel" data-testid="approval-card" data-node={approval.node}>
      <div className="approval-title">
        Approval needed: <strong>{approval.action ?? approval.node}</strong>
      </div>
      {approval.reason && <p className="approval-reason">{approval.reason}</p>}
      <dl className="approval-facts">
        <dt>Arguments</dt>
        <dd>
          {editing ? (
            <>
              <textarea
                data-testid="approval-arguments-editor"
                className={parseError ? "invalid" : undefined}
                value={text}
                rows={Math.min(12, text.split("\n").length + 1)}
                spellCheck={false}
                onChange={(event) => setText(event.target.value)}
              />
              {parseError && <span className="error">{parseError}</span>}
            </>
          ) : (
            <pre data-testid="approval-arguments">{JSON.stringify(approval.arguments, null, 2)}</pre>
          )}
        </dd>
        <dt>Budget used</dt>
        <dd data-testid="approval-budget">{formatBudget(approval.budgetUsed)}</dd>
        <dt>Expires</dt>
        <dd data-testid="approval-expiry">{formatExpiry(approval.expiresAt)}</dd>
      </dl>
      <input
        className="approval-comment"
        placeholder="Comment (optional)"
        value={comment}
        onChange={(event) => setComment(event.target.value)}
      />
      <div className="approval-buttons">
        {editing ? (
          <>
            <button
              type="button"
              className="primary"
              data-testid="approval-send-edit"
              disabled={busy || parseError !== null}
              onClick={() => void send({ decision: "edit", arguments: parsed })}
            >
              Approve edited
            </button>
            <button type="button" disabled={busy} onClick={() => setEditing(false)}>
              Cancel edit
            </button>
          </>
        ) : (
          <>
            <button
              type="button"
              className="primary"
              data-testid="approval-approve"
              disabled={busy}
              onClick={() => void send({ decision: "approve" })}
            >
              Approve
            </button>
            <button type="button" data-testid="approval-reject" disabled={busy} onClick={() => void send({ decision: "reject" })}>
              Reject
            </button>
            <button type="button" data-testid="approval-edit" disabled={busy} onClick={() => setEditing(true)}>
              Edit arguments
            </button>
          </>
        )}
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {children}
    </div>
  );
}
