/**
 * The run's timeline: one row per step (node, visit, start, duration, tokens,
 * cost, tool calls) and per note (takeover, approval, decision, budget,
 * error). Rows have one height and only those in view are drawn, so a run
 * of thousands of events scrolls smoothly. Picking a step shows its detail.
 */

import { useEffect, useMemo, useRef, useState } from "react";
import { useRunStore } from "./runStore";
import { StepDetail } from "./StepDetail";
import { runSpan, type TimelineEntry, type TimelineStep } from "./timeline";
import * as fmt from "./format";

/** Height of one row in px (CSS `.timeline-row` uses the same). */
export const ROW_HEIGHT = 26;
/** The list's height at most (px); a short run's list is only as tall as its rows. */
const MAX_HEIGHT = 300;
/** Rows drawn beyond the visible ones, above and below. */
const OVERSCAN = 8;

function StepRow({ step, start }: { step: TimelineStep; start: number | null }) {
  const offset = start !== null && step.startedAt ? `+${fmt.duration(Date.parse(step.startedAt) - start)}` : fmt.clock(step.startedAt);
  return (
    <>
      <span className={`run-dot run-${step.status}`} title={step.status} />
      <span className="timeline-node">
        {step.node}
        {step.visit > 1 && <span className="muted"> #{step.visit}</span>}
      </span>
      <span className="timeline-at muted">{offset}</span>
      <span className="timeline-duration" data-testid="timeline-duration">
        {step.status === "running" ? "…" : step.status === "waiting" ? "waiting" : fmt.duration(step.durationMs)}
      </span>
      <span className="timeline-extra muted">
        {[
          fmt.tokens(step.tokensIn, step.tokensOut),
          fmt.cost(step.cost),
          step.toolCalls.length ? `${step.toolCalls.length} tool${step.toolCalls.length > 1 ? "s" : ""}` : "",
          step.retries.length ? `${step.retries.length} retr${step.retries.length > 1 ? "ies" : "y"}` : "",
          step.attempt > 1 ? `attempt ${step.attempt}` : "",
          step.error ? "error" : "",
        ]
          .filter(Boolean)
          .join(" · ")}
      </span>
    </>
  );
}

function Row({ entry, start, active, onPick }: { entry: TimelineEntry; start: number | null; active: boolean; onPick(): void }) {
  if (entry.kind === "note")
    return (
      <div className={`timeline-row timeline-note note-${entry.type}`} data-testid="timeline-note" data-type={entry.type} title={entry.text}>
        <span className="note-mark">{entry.type === "error" ? "✕" : entry.type === "decision" ? "✓" : "•"}</span>
        <span className="note-text">{entry.text}</span>
        <span className="timeline-at muted">{fmt.clock(entry.at)}</span>
      </div>
    );
  return (
    <button
      type="button"
      className={`timeline-row timeline-step${active ? " active" : ""}`}
      data-testid="timeline-step"
      data-node={entry.node}
      data-status={entry.status}
      onClick={onPick}
    >
      <StepRow step={entry} start={start} />
    </button>
  );
}

/** Said when a settled run shows no steps: neither its events nor its checkpoints name any. */
export const NO_STEPS_RECORDED =
  "No steps to show: neither this run's events nor its checkpoints name a node that ran. Time travel lists every checkpoint of the thread.";

export function TimelineView() {
  const timeline = useRunStore((s) => s.timeline);
  const phase = useRunStore((s) => s.phase);
  const [picked, setPicked] = useState<string | null>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(320);
  const box = useRef<HTMLDivElement>(null);
  const entries = timeline.entries;
  // Offsets count from when the run began, as the outcome's time does: a wait
  // before a resumed step is in them.
  const startedAt = useMemo(() => runSpan(timeline).startedAt, [timeline]);
  const start = startedAt ? Date.parse(startedAt) : null;

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setHeight(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  if (entries.length === 0) {
    const settled = phase === "success" || phase === "error" || phase === "waiting";
    return (
      <p className="muted" data-testid="timeline-empty">
        {settled ? NO_STEPS_RECORDED : "No steps yet: run the graph or open a past run."}
      </p>
    );
  }
  const from = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const to = Math.min(entries.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const shown = entries.find((entry): entry is TimelineStep => entry.kind === "step" && entry.key === picked);
  return (
    <div className="timeline" data-testid="timeline" data-count={entries.length}>
      <div
        className="timeline-scroll"
        ref={box}
        style={{ height: Math.min(MAX_HEIGHT, entries.length * ROW_HEIGHT + 2) }}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
        data-testid="timeline-scroll"
      >
        <div style={{ height: entries.length * ROW_HEIGHT, position: "relative" }}>
          {entries.slice(from, to).map((entry, i) => (
            <div key={entry.key} className="timeline-slot" style={{ top: (from + i) * ROW_HEIGHT, height: ROW_HEIGHT }}>
              <Row entry={entry} start={start} active={entry.key === picked} onPick={() => setPicked(entry.key === picked ? null : entry.key)} />
            </div>
          ))}
        </div>
      </div>
      {shown && <StepDetail step={shown} />}
    </div>
  );
}
