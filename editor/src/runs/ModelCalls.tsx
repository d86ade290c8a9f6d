/**
 * What the selected node's model saw and said in the shown thread: each call's
 * messages and reply, from the runs' audit trails (`GET /runs/{id}/audit`, kept
 * only when the spec sets `audit: {model_calls: true}`; secrets masked by the
 * server). Loaded when opened: a thread's audit can be long.
 */

import { useState } from "react";
import { auditOf, runsOf, type AuditRecord } from "./runApi";
import * as fmt from "./format";

interface AuditMessage {
  type?: string;
  content?: unknown;
  tool_calls?: { name: string; args: unknown }[];
}

/** The thread's model calls made by `node`, oldest first, from its runs' audit records. */
export function modelCallsOf(records: AuditRecord[], node: string): AuditRecord[] {
  return records.filter((record) => record.kind === "model_call" && record.node === node);
}

/** One message as a line's label and its text. */
export function messageText(message: AuditMessage): { role: string; text: string } {
  const role = message.type === "ai" ? "model" : message.type === "human" ? "user" : (message.type ?? "message");
  const content = typeof message.content === "string" ? message.content : fmt.json(message.content ?? "");
  const calls = (message.tool_calls ?? []).map((call) => `→ ${call.name}(${JSON.stringify(call.args)})`);
  return { role, text: [content, ...calls].filter(Boolean).join("\n") };
}

function Message({ message }: { message: AuditMessage }) {
  const { role, text } = messageText(message);
  return (
    <div className={`model-message role-${role}`}>
      <span className="model-role">{role}</span>
      <pre>{text || "(empty)"}</pre>
    </div>
  );
}

export function ModelCalls({ threadId, node }: { threadId: string; node: string }) {
  const [calls, setCalls] = useState<AuditRecord[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  async function load() {
    if (calls !== null) return;
    try {
      const runs = await runsOf(threadId);
      const records = (await Promise.all(runs.map((run) => auditOf(run.run_id)))).flat();
      setCalls(modelCallsOf(records, node));
    } catch (e: unknown) {
      setProblem(e instanceof Error ? e.message : String(e));
    }
  }

  return (
    <details className="model-calls" data-testid="model-calls" onToggle={(e) => (e.currentTarget.open ? void load() : undefined)}>
      <summary>What the model saw and said{calls !== null && ` (${calls.length} call${calls.length === 1 ? "" : "s"})`}</summary>
      {problem && <p className="error">{problem}</p>}
      {calls === null && !problem && <p className="muted">Loading…</p>}
      {calls?.length === 0 && (
        <p className="muted" data-testid="model-calls-none">
          Not kept for this run: set <code>audit: {"{model_calls: true}"}</code> in the spec to keep each call's messages and reply (secrets masked).
        </p>
      )}
      {calls?.map((call, i) => {
        const detail = call.detail as { model?: string; messages?: AuditMessage[]; reply?: AuditMessage };
        return (
          <div key={i} className="model-call" data-testid="model-call">
            <div className="muted">
              #{i + 1} · {detail.model ?? "model"} · {fmt.clock(call.created_at)}
            </div>
            {(detail.messages ?? []).map((message, j) => (
              <Message key={j} message={message} />
            ))}
            {detail.reply && <Message message={detail.reply} />}
          </div>
        );
      })}
    </details>
  );
}
