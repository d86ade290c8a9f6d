/**
 * Time travel in the open thread: its checkpoints as a tree of branches; pick
 * one to see its state, compare it with another, fork a run from it, or edit
 * its state first and run from the edited copy (a new branch).
 */

import { useEffect, useMemo, useState } from "react";
import { threads, type ThreadState } from "../api/client";
import { checkpointRows, type CheckpointRow } from "./checkpointTree";
import { editState } from "./runApi";
import { forkRun } from "./runController";
import { useRunStore } from "./runStore";
import { stateDiff } from "./stateDiff";
import * as fmt from "./format";

function valuesOf(state: ThreadState): Record<string, unknown> {
  return Array.isArray(state.values) ? {} : state.values;
}

/** Nodes that ran on the way to `row` (shown done when a fork starts from it). */
function doneBefore(rows: CheckpointRow[], row: CheckpointRow): Record<string, boolean> {
  const done: Record<string, boolean> = {};
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (let at = byId.get(row.state.parent_checkpoint?.checkpoint_id ?? ""); at; at = byId.get(at.state.parent_checkpoint?.checkpoint_id ?? ""))
    for (const node of at.state.next) done[node] = true;
  return done;
}

function Diff({ before, after }: { before: CheckpointRow; after: CheckpointRow }) {
  const changes = stateDiff(valuesOf(before.state), valuesOf(after.state));
  return (
    <div className="state-diff" data-testid="state-diff">
      <p className="muted">
        From “{before.label}” to “{after.label}”:{" "}
        {changes.length === 0 ? "no field changed." : `${changes.length} field${changes.length > 1 ? "s" : ""} changed.`}
      </p>
      {changes.map((change) => (
        <div key={change.field} className={`diff-field diff-${change.change}`} data-testid="diff-field" data-field={change.field}>
          <b>{change.field}</b> <span className="muted">{change.change}</span>
          {change.change !== "added" && <pre className="diff-before">{fmt.json(change.before)}</pre>}
          {change.change !== "removed" && <pre className="diff-after">{fmt.json(change.after)}</pre>}
        </div>
      ))}
    </div>
  );
}

export function TimeTravel({ nodeIds, onError }: { nodeIds: string[]; onError(message: string): void }) {
  const threadId = useRunStore((s) => s.threadId);
  const assistantId = useRunStore((s) => s.assistantId);
  const phase = useRunStore((s) => s.phase);
  const [history, setHistory] = useState<ThreadState[]>([]);
  const [picked, setPicked] = useState<string | null>(null);
  const [compare, setCompare] = useState<string | null>(null);
  const [draft, setDraft] = useState<string | null>(null);
  const [draftError, setDraftError] = useState<string | null>(null);

  useEffect(() => {
    if (!threadId || phase === "running" || phase === "starting") return;
    let live = true;
    threads
      .history(threadId, 500)
      .then((found) => live && setHistory(found))
      .catch((e: unknown) => onError(String(e)));
    return () => {
      live = false;
    };
  }, [threadId, phase, onError]);

  const rows = useMemo(() => checkpointRows(history), [history]);
  if (!threadId) return <p className="muted">Run the graph or open a past run first.</p>;
  const row = rows.find((r) => r.id === picked) ?? null;
  const other = rows.find((r) => r.id === compare) ?? null;

  function fork(from: CheckpointRow, checkpointId: string) {
    if (!threadId || !assistantId) return;
    void forkRun(threadId, assistantId, checkpointId, nodeIds, doneBefore(rows, from)).catch((e: unknown) => onError(String(e)));
  }

  async function forkEdited(from: CheckpointRow) {
    if (!threadId || draft === null) return;
    let values: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(draft);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("the state must be a JSON object");
      values = parsed as Record<string, unknown>;
    } catch (e) {
      setDraftError(e instanceof Error ? e.message : String(e));
      return;
    }
    // Only what the person changed is written, as the node that wrote this checkpoint.
    const changed = Object.fromEntries(stateDiff(valuesOf(from.state), values).map((c) => [c.field, c.after ?? null]));
    try {
      const edited = await editState(threadId, from.id, changed, from.writer);
      setDraft(null);
      fork(from, edited.checkpoint_id);
    } catch (e) {
      setDraftError(e instanceof Error ? e.message : String(e));
    }
  }

  return (
    <div className="time-travel" data-testid="time-travel">
      <ol className="checkpoint-tree" data-testid="checkpoint-tree">
        {rows.map((r) => (
          <li key={r.id} style={{ paddingLeft: r.depth * 14 }} data-checkpoint={r.id} data-depth={r.depth}>
            <button
              type="button"
              data-testid="checkpoint"
              className={`${r.id === picked ? "active" : ""}${r.id === compare ? " compared" : ""}`}
              onClick={() => {
                setPicked(r.id);
                setDraft(null);
                setDraftError(null);
              }}
            >
              {r.branch && (
                <span className="branch-mark" title="a branch: a run from an earlier checkpoint">
                  ⑂{" "}
                </span>
              )}
              {r.label}
              {r.fork && <span className="muted"> · forked</span>}
            </button>
          </li>
        ))}
      </ol>
      {row && (
        <div className="checkpoint-detail">
          <div className="checkpoint-actions">
            <button
              type="button"
              className="primary"
              data-testid="fork-run"
              disabled={!assistantId || row.state.next.length === 0}
              title={row.state.next.length === 0 ? "Nothing runs after this checkpoint" : "Run again from here on a new branch"}
              onClick={() => fork(row, row.id)}
            >
              Fork a run from here
            </button>
            <button
              type="button"
              data-testid="edit-state"
              disabled={row.state.next.length === 0}
              onClick={() => {
                setDraft(fmt.json(valuesOf(row.state)));
                setDraftError(null);
              }}
            >
              Edit state…
            </button>
            <label>
              Compare with{" "}
              <select data-testid="compare-with" value={compare ?? ""} onChange={(e) => setCompare(e.target.value || null)}>
                <option value="">—</option>
                {rows
                  .filter((r) => r.id !== row.id)
                  .map((r) => (
                    <option key={r.id} value={r.id}>
                      {r.label}
                    </option>
                  ))}
              </select>
            </label>
          </div>
          {draft !== null ? (
            <div className="state-editor">
              <textarea data-testid="state-draft" value={draft} rows={12} onChange={(e) => setDraft(e.target.value)} spellCheck={false} />
              {draftError && (
                <p className="error" role="alert">
                  {draftError}
                </p>
              )}
              <div className="checkpoint-actions">
                <button type="button" className="primary" data-testid="fork-edited" onClick={() => void forkEdited(row)}>
                  Fork a run with this state
                </button>
                <button type="button" onClick={() => setDraft(null)}>
                  Cancel
                </button>
              </div>
            </div>
          ) : other ? (
            <Diff before={rows.indexOf(other) < rows.indexOf(row) ? other : row} after={rows.indexOf(other) < rows.indexOf(row) ? row : other} />
          ) : (
            <pre className="state-json" data-testid="checkpoint-state">
              {fmt.json(valuesOf(row.state))}
            </pre>
          )}
        </div>
      )}
    </div>
  );
}
