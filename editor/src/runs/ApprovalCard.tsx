/**
 * One pending approval: the action, its arguments, the reason, budget used and
 * expiry, with approve / reject / edit-arguments. Editing opens a form built
 * from the arguments (or JSON) and shows old → new per argument before
 * "Approve edited" sends it. The approver's name is remembered in this
 * browser and sent as the decision's `actor`. Used on the waiting node's
 * card (canvas) and in the approvals inbox.
 */

import { useLayoutEffect, useRef, useState } from "react";
import "./runs.css";
import type { Decision } from "../api/client";
import { ArgumentChanges } from "../approvals/ArgumentChanges";
import { ArgumentsEditor } from "../approvals/ArgumentsEditor";
import { changesOf } from "../approvals/argumentFields";

export interface ApprovalView {
  action: string | null;
  arguments: unknown;
  reason: string | null;
  budgetUsed: unknown;
  expiresAt: string | null;
  node: string;
  /** When the run asked (the inbox knows it; the canvas card may not). */
  requestedAt?: string | null;
}

export interface ApprovalCardProps {
  approval: ApprovalView;
  onDecide(decision: Decision): Promise<void>;
  /** Extra content (e.g. links on the approvals page). */
  children?: React.ReactNode;
}

const APPROVER_KEY = "plait.approver";

function savedApprover(): string {
  try {
    return window.localStorage.getItem(APPROVER_KEY) ?? "";
  } catch {
    return "";
  }
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

/** "3 min ago (2 Dec, 22:40)". */
export function formatRequested(at: string): string {
  const when = new Date(at);
  const minutes = Math.round((Date.now() - when.getTime()) / 60000);
  const relative =
    minutes < 1
      ? "just now"
      : minutes < 60
        ? `${minutes} min ago`
        : minutes < 48 * 60
          ? `${Math.round(minutes / 60)} h ago`
          : `${Math.round(minutes / 1440)} days ago`;
  return `${relative} (${when.toLocaleString()})`;
}

function formatExpiry(expiresAt: string | null): string {
  if (!expiresAt) return "never";
  const when = new Date(expiresAt);
  const minutes = Math.round((when.getTime() - Date.now()) / 60000);
  const relative = minutes < 0 ? "expired" : minutes < 60 ? `in ${minutes} min` : `in ${Math.round(minutes / 60)} h`;
  return `${when.toLocaleString()} (${relative})`;
}

export function ApprovalCard({ approval, onDecide, children }: ApprovalCardProps) {
  const [editing, setEditing] = useState(false);
  // The edited arguments, or null while an input does not parse.
  const [edited, setEdited] = useState<unknown | null>(approval.arguments ?? {});
  const [comment, setComment] = useState("");
  const [approver, setApprover] = useState(savedApprover);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const changed = edited !== null && changesOf(approval.arguments, edited).length > 0;
  const root = useRef<HTMLDivElement>(null);
  const refocus = useRef(false);

  // Opening or closing the form removes the button that had focus: focus goes to the form's first
  // field, or back to "Edit arguments", so a keyboard user keeps their place (and the canvas card,
  // which holds still while focus is inside it, is not moved under them).
  useLayoutEffect(() => {
    if (!refocus.current) return;
    refocus.current = false;
    const target = editing ? ".arguments-editor :is(input, textarea)" : '[data-testid="approval-edit"]';
    root.current?.querySelector<HTMLElement>(target)?.focus({ preventScroll: true });
  }, [editing]);

  function edit(open: boolean) {
    refocus.current = true;
    setEditing(open);
  }

  async function send(decision: Decision) {
    setBusy(true);
    setError(null);
    const actor = approver.trim();
    try {
      window.localStorage.setItem(APPROVER_KEY, actor);
    } catch {
      // Private mode: the name is still sent, just not remembered.
    }
    try {
      await onDecide({ ...decision, ...(comment ? { comment } : {}), ...(actor ? { actor } : {}) });
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    // nodrag/nowheel: on the canvas, clicks and scrolls belong to the card.
    <div ref={root} className="approval-card nodrag nowheel" data-testid="approval-card" data-node={approval.node} data-editing={editing || undefined}>
      <div className="approval-title">
        Approval needed: <strong>{approval.action ?? approval.node}</strong>
      </div>
      {approval.reason && <p className="approval-reason">{approval.reason}</p>}
      <dl className="approval-facts">
        <dt>Arguments</dt>
        <dd>
          {editing ? (
            <ArgumentsEditor initial={approval.arguments} onChange={setEdited} />
          ) : (
            <pre data-testid="approval-arguments">{JSON.stringify(approval.arguments, null, 2)}</pre>
          )}
        </dd>
        {editing && edited !== null && (
          <>
            <dt>Change</dt>
            <dd>
              <ArgumentChanges before={approval.arguments} after={edited} />
            </dd>
          </>
        )}
        {approval.requestedAt && (
          <>
            <dt>Requested</dt>
            <dd data-testid="approval-requested">{formatRequested(approval.requestedAt)}</dd>
          </>
        )}
        <dt>Budget used</dt>
        <dd data-testid="approval-budget">{formatBudget(approval.budgetUsed)}</dd>
        <dt>Expires</dt>
        <dd data-testid="approval-expiry">{formatExpiry(approval.expiresAt)}</dd>
      </dl>
      <div className="approval-who">
        <input
          className="approval-comment"
          data-testid="approval-comment"
          placeholder="Comment (optional)"
          value={comment}
          onChange={(event) => setComment(event.target.value)}
        />
        <input
          className="approval-actor"
          data-testid="approval-actor"
          placeholder="Your name (recorded)"
          aria-label="Your name, recorded with the decision"
          value={approver}
          onChange={(event) => setApprover(event.target.value)}
        />
      </div>
      <div className="approval-buttons">
        {editing ? (
          <>
            <button
              type="button"
              className="primary"
              data-testid="approval-send-edit"
              disabled={busy || !changed}
              title={edited === null ? "Fix the arguments first" : changed ? undefined : "Nothing changed: use Approve"}
              onClick={() => void send({ decision: "edit", arguments: edited })}
            >
              Approve edited
            </button>
            <button type="button" disabled={busy} onClick={() => edit(false)}>
              Cancel edit
            </button>
          </>
        ) : (
          <>
            <button type="button" className="primary" data-testid="approval-approve" disabled={busy} onClick={() => void send({ decision: "approve" })}>
              Approve
            </button>
            <button type="button" data-testid="approval-reject" disabled={busy} onClick={() => void send({ decision: "reject" })}>
              Reject
            </button>
            <button
              type="button"
              data-testid="approval-edit"
              disabled={busy}
              onClick={() => {
                setEdited(approval.arguments ?? {});
                edit(true);
              }}
            >
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
