/**
 * What one node execution did: its input and output, tool calls with their
 * arguments (large ones folded), retries, map progress, the approval it asked
 * for, its error, and the text its model streamed.
 */

import { useRunStore } from "./runStore";
import { interruptWait, waitingText, type TimelineNote, type TimelineStep } from "./timeline";
import * as fmt from "./format";

/** Values longer than this many characters start folded. */
const FOLD_AT = 400;

/** Tool arguments fold sooner: a step may make many calls. */
const FOLD_TOOL_AT = 120;

function Folded({ label, value, testId, foldAt = FOLD_AT }: { label: string; value: unknown; testId?: string; foldAt?: number }) {
  const text = fmt.json(value);
  return (
    <details className="folded" open={text.length <= foldAt} data-testid={testId}>
      <summary>
        {label}
        {text.length > foldAt && <span className="muted"> · {fmt.preview(value, 60)}</span>}
      </summary>
      <pre className="state-json">{text}</pre>
    </details>
  );
}

export function StepDetail({ step }: { step: TimelineStep }) {
  const interrupt = step.interrupt as { action?: string; reason?: string; arguments?: unknown } | null;
  const decision = (step.output as { decision?: { decision?: string; comment?: string | null } } | null)?.decision;
  // Who decided and when: the note of the run that answered it (the step's resumed run).
  const decided = useRunStore((s) =>
    interrupt ? s.timeline.entries.find((e): e is TimelineNote => e.kind === "note" && e.type === "decision" && e.run === step.run) : undefined,
  );
  return (
    <div className="step-detail" data-testid="step-detail" data-node={step.node}>
      <dl className="step-facts">
        <dt>Started</dt>
        <dd>{fmt.clock(step.startedAt)}</dd>
        <dt>Duration</dt>
        <dd data-testid="step-duration">
          {step.status === "running"
            ? "running…"
            : step.status === "waiting"
              ? waitingWords(step.interrupt)
              : step.status === "stopped"
                ? `stopped after ${fmt.duration(step.durationMs)} (the run was stopped)`
                : fmt.duration(step.durationMs)}
        </dd>
        {step.attempt > 1 && (
          <>
            <dt>Attempt</dt>
            <dd>{step.attempt} (taken over by another worker)</dd>
          </>
        )}
        {step.tokensIn + step.tokensOut > 0 && (
          <>
            <dt>Tokens</dt>
            <dd>
              {step.tokensIn} in · {step.tokensOut} out
            </dd>
          </>
        )}
        {step.cost !== null && (
          <>
            <dt>Cost</dt>
            <dd>{fmt.cost(step.cost)}</dd>
          </>
        )}
        {step.map && (
          <>
            <dt>Items</dt>
            <dd data-testid="map-progress">
              {step.map.done}
              {step.map.total !== null ? ` of ${step.map.total}` : ""} done
              {step.map.failed > 0 ? `, ${step.map.failed} failed (item${step.map.failed > 1 ? "s" : ""} ${step.map.failedItems.join(", ")})` : ""}
            </dd>
          </>
        )}
      </dl>
      {step.error && (
        <p className="error" data-testid="step-error">
          {step.error}
        </p>
      )}
      {interrupt && interruptWait(interrupt).kind === "person" && (
        <div className="step-approval" data-testid="step-approval">
          Asked to approve <b>{interrupt.action ?? "an action"}</b>
          {interrupt.reason ? `: ${interrupt.reason}` : ""}
          {decision?.decision && (
            <div>
              Decision: <b data-testid="step-decision">{decision.decision}</b>
              {decision.comment ? ` · “${decision.comment}”` : ""}
              {decided && (
                <span className="muted" data-testid="step-decided">
                  {" "}
                  · by {(decided.data as { decided_by?: string | null } | null)?.decided_by ?? "an unnamed person"}, {fmt.clock(decided.at)}
                </span>
              )}
            </div>
          )}
        </div>
      )}
      {step.retries.map((retry, i) => (
        <p key={i} className="warn" data-testid="step-retry">
          retry {retry.attempt} of {retry.target} after {retry.errorClass} ({fmt.duration(retry.delay * 1000)} wait): {retry.error}
        </p>
      ))}
      {step.waits > 0 && (
        <p className="warn" data-testid="step-waiting">
          {step.waits === 1 ? "1 tool call waited for its turn" : `${step.waits} tool calls waited for their turn`} under the tool&apos;s limits
          {step.waiting ? `: ${waitingText(step.waiting)}` : ""}
        </p>
      )}
      {step.toolCalls.length > 0 && (
        <div className="tool-calls" data-testid="tool-calls">
          {step.toolCalls.map((call, i) => (
            <div key={i} className="tool-call" data-testid="tool-call-entry">
              <Folded
                label={`${call.tool} · ${call.status === "unfinished" ? "no result (cancelled: a timeout?)" : call.status}${call.reused ? " (result reused)" : ""}${call.error ? ` · ${call.error}` : ""}`}
                value={call.args}
                testId="tool-call"
                foldAt={FOLD_TOOL_AT}
              />
              {"result" in call && (
                <Folded
                  label={call.truncatedFrom ? `result (the first part of ${fmt.bytes(call.truncatedFrom)})` : "result"}
                  value={call.result}
                  testId="tool-result"
                  foldAt={FOLD_TOOL_AT}
                />
              )}
            </div>
          ))}
        </div>
      )}
      <Folded label="Input (the state it read)" value={step.input} testId="step-input" />
      {/* A step still running or waiting has written nothing yet: no "null" or "{}" to read as its output. */}
      {(wroteSomething(step.output) || (step.status !== "running" && step.status !== "waiting")) && (
        <Folded label="Output (its state writes)" value={step.output} testId="step-output" />
      )}
      {step.text && <Folded label="Model text" value={step.text} />}
    </div>
  );
}

/** Whether a step's output holds any write (`null` and `{}` hold none). */
function wroteSomething(output: unknown): boolean {
  if (output === null || output === undefined) return false;
  return typeof output !== "object" || Object.keys(output).length > 0;
}

/** What a waiting step waits for: a `wait` node its time (local), an MCP task its tool, anything else a decision. */
function waitingWords(interrupt: unknown): string {
  const wait = interruptWait(interrupt);
  // The time as the run line says it: a time of day, with the date when it is not today.
  return wait.kind === "timer" ? `waiting until ${fmt.soon(wait.until)}` : wait.kind === "tool" ? `waiting for ${wait.tool}` : "waiting for a decision";
}
