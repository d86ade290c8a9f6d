/**
 * How the shown run ended, shown first once it has: its state (Plait's, so a
 * partial success says how many items were lost), the values of the spec's
 * `output` fields, and what the whole run took (time, tokens, cost).
 */

import { useMemo } from "react";
import { parse } from "yaml";
import { useEditorStore } from "../store/editorStore";
import { shownState, stateHeading } from "./runStates";
import { SaveRecording } from "./SaveRecording";
import { useRunStore } from "./runStore";
import { parkedSince, runSpan, stepsOf } from "./timeline";
import * as fmt from "./format";

/** The spec's `spec.output` field names (empty when it declares none or does not parse). */
export function outputFields(text: string): string[] {
  try {
    const doc = parse(text) as { spec?: { output?: unknown } } | null;
    const output = doc?.spec?.output;
    return Array.isArray(output) ? output.filter((field): field is string => typeof field === "string") : [];
  } catch {
    return [];
  }
}

/** Values longer than this show as a one-line preview that opens on a click. */
const INLINE_CHARS = 90;

function OutcomeField({ field, value }: { field: string; value: unknown }) {
  const text = value === undefined ? "—" : typeof value === "string" ? value : fmt.json(value);
  return (
    <div className="outcome-field" data-testid="outcome-field" data-field={field}>
      {text.length <= INLINE_CHARS && !text.includes("\n") ? (
        <>
          <span className="outcome-name">{field}</span>
          <span className="outcome-value">{text}</span>
        </>
      ) : (
        <details>
          <summary>
            <span className="outcome-name">{field}</span>
            <span className="outcome-value muted">{fmt.preview(value, INLINE_CHARS)}</span>
          </summary>
          <pre>{text}</pre>
        </details>
      )}
    </div>
  );
}

export function Outcome() {
  const phase = useRunStore((s) => s.phase);
  const error = useRunStore((s) => s.error);
  const steps = useRunStore((s) => s.steps);
  const timeline = useRunStore((s) => s.timeline);
  const ended = useRunStore((s) => s.ended);
  const approvals = useRunStore((s) => s.approvals);
  const timers = useRunStore((s) => s.timers);
  const tools = useRunStore((s) => s.tools);
  const threadId = useRunStore((s) => s.threadId);
  const lost = useRunStore((s) => s.lost);
  const finalValues = useRunStore((s) => s.values);
  const graph = useEditorStore((s) => s.graphName);
  const text = useEditorStore((s) => s.derivedYaml);
  const fields = useMemo(() => outputFields(text), [text]);
  // Only a run that has ended or stopped to wait has an outcome; an ended one's, once its
  // state is read (the stream's end comes first, and a heading must not guess it).
  if (phase !== "waiting" && !((phase === "success" || phase === "error") && ended)) return null;
  // While the stream is being rejoined nothing new is known: the line says so, alone.
  if (lost && !ended) return null;
  // The thread's state as its newest checkpoint holds it; the stream's last state until it is read
  // (a run another client started may have streamed its input state only).
  const values = finalValues ?? steps[steps.length - 1]?.values ?? {};
  const shown = fields.length > 0 ? fields : Object.keys(values);
  const ran = stepsOf(timeline);
  const { startedAt, endedAt } = runSpan(timeline);
  // A waiting run has not taken a time yet: how long it has run so far would read as its time.
  const wall = phase !== "waiting" && startedAt && endedAt ? Date.parse(endedAt) - Date.parse(startedAt) : null;
  const since = phase === "waiting" ? parkedSince(timeline) : null;
  const tokensIn = ran.reduce((sum, step) => sum + step.tokensIn, 0);
  const tokensOut = ran.reduce((sum, step) => sum + step.tokensOut, 0);
  const priced = ran.filter((step) => step.cost !== null);
  const total = priced.length > 0 ? priced.reduce((sum, step) => sum + (step.cost ?? 0), 0) : null;
  const facts = [
    // No steps in the events (another client started the run) is not "0 steps".
    ran.length > 0 ? `${ran.length} step${ran.length === 1 ? "" : "s"}` : "",
    wall !== null ? fmt.duration(wall) : "",
    // The heading already says it waits: "since" is enough, and keeps it on one line.
    since ? `since ${fmt.soon(since)}` : "",
    fmt.tokens(tokensIn, tokensOut),
    fmt.cost(total),
  ].filter(Boolean);
  const state = shownState(phase, ended, { approvals, timers, tools });
  const heading = stateHeading(state);
  // The state's words when they tell more than the heading (how many items a map lost, until when).
  const detail = state.label.toLowerCase() !== heading.toLowerCase() && state.tone !== "ok" ? state.label : null;
  return (
    <section
      className={`run-outcome tone-${state.tone}${ended ? ` outcome-${ended.state}` : ""}`}
      data-testid="run-outcome"
      data-phase={phase}
      data-state={ended?.state ?? ""}
    >
      <h3>
        {heading}
        {facts.length > 0 && <span className="muted"> · {facts.join(" · ")}</span>}
      </h3>
      {detail && (
        <p className="run-state-label" data-testid="run-state-label">
          {detail}
        </p>
      )}
      {error && <p className="error">{error}</p>}
      {phase !== "waiting" && (
        <div className="outcome-fields">
          {shown.map((field) => (
            <OutcomeField key={field} field={field} value={values[field]} />
          ))}
        </div>
      )}
      {phase !== "waiting" && threadId && <SaveRecording threadId={threadId} graph={graph ?? "run"} />}
    </section>
  );
}
