/**
 * The run side of the editor: start a run from the input form, follow it
 * (status on the canvas), and read its story: the outcome first, what the
 * selected node did, then every step on a timeline. Also the state after each
 * step, past runs of the graph, and time travel in a thread's checkpoints.
 */

import { useEffect, useMemo, useState } from "react";
import "./runs.css";
import { assistants, type AssistantSchemas } from "../api/client";
import { useEditorStore } from "../store/editorStore";
import { InputForm } from "./InputForm";
import { NodeInspector } from "./NodeInspector";
import { useCanvasRunBridge } from "./canvasRunBridge";
import { Outcome } from "./Outcome";
import { PastRuns } from "./PastRuns";
import { assistantOf, detach, openThread, startRun } from "./runController";
import { type StepValues, useRunStore } from "./runStore";
import { shownState } from "./runStates";
import { TimelineView } from "./TimelineView";
import { TimeTravel } from "./TimeTravel";
import { RunTargetNote } from "../graphs/RunTargetNote";
import { runTarget, useRunTarget, useStartedRun } from "../graphs/runTarget";

export interface RunPanelProps {
  graph: string;
  version: string;
}

type Tab = "run" | "steps" | "history" | "past";

export function RunPanel({ graph, version }: RunPanelProps) {
  // Node ids and examples come from the model the editor already derived from the text.
  const model = useEditorStore((s) => s.model);
  const nodeIds = useMemo(() => model.nodes.map((node) => node.id), [model]);
  const [tab, setTab] = useState<Tab>("run");
  const [schemas, setSchemas] = useState<AssistantSchemas | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const phase = useRunStore((s) => s.phase);
  const threadId = useRunStore((s) => s.threadId);
  const runError = useRunStore((s) => s.error);
  // How the run ended as Plait says it (partial, waiting for a tool...), once known.
  const ended = useRunStore((s) => s.ended);
  // What a parked run waits for, as its interrupts say, until the server's state is read.
  const approvals = useRunStore((s) => s.approvals);
  const timers = useRunStore((s) => s.timers);
  const tools = useRunStore((s) => s.tools);
  // The stream broke and is being rejoined: the line says so, not how the run goes.
  const lost = useRunStore((s) => s.lost);
  useCanvasRunBridge();
  // Unsaved text runs as a draft: the schemas and the run are the draft's.
  const { target, problem } = useRunTarget(graph, version);
  const schemaOf = target?.assistantId ?? null;

  useEffect(() => {
    if (!schemaOf) return;
    let live = true;
    assistants
      .schemas(schemaOf)
      .then((found) => live && setSchemas(found))
      .catch((e: unknown) => {
        if (!live) return;
        setSchemas(null);
        setError(`cannot read the input schema: ${e instanceof Error ? e.message : String(e)}`);
      });
    return () => {
      live = false;
    };
  }, [schemaOf]);

  // A thread another view asked to open (the approvals page's link). The request
  // is cleared only once shown: a remount (StrictMode) aborts the first attempt.
  useEffect(() => {
    const requested = useRunStore.getState().openRequest;
    if (requested?.graph !== graph) return;
    openThread(requested.threadId, assistantOf(graph, version), nodeIds)
      .then(() => useRunStore.getState().clearOpenRequest(requested.threadId))
      .catch((e: unknown) => setError(String(e)));
    // Only when the graph (or the version shown: a past run opens the one it ran on) opens, not on edits.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- not on `nodeIds`, which edits change
  }, [graph, version]);

  // Leaving the graph stops following its stream and clears the canvas overlay.
  useEffect(
    () => () => {
      detach();
      useRunStore.getState().reset();
    },
    [graph, version],
  );

  async function run(input: Record<string, unknown>) {
    setError(null);
    try {
      const ran = await runTarget(graph, version); // exactly what the canvas shows now
      const threadId = await startRun(graph, version, nodeIds, input, ran.assistantId);
      useStartedRun.getState().started(ran, threadId);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  const busy = phase === "starting" || phase === "running";
  return (
    <div className="run-panel" data-testid="run-panel">
      <nav className="tabs">
        {(["run", "steps", "history", "past"] as Tab[]).map((name) => (
          <button key={name} type="button" className={tab === name ? "active" : undefined} data-testid={`run-tab-${name}`} onClick={() => setTab(name)}>
            {{ run: "Run", steps: "State", history: "Time travel", past: "Past runs" }[name]}
          </button>
        ))}
      </nav>
      <div className="run-status" data-testid="run-phase" data-phase={phase}>
        {shownState(phase, ended, { approvals, timers, tools }, lost).label}
        {threadId && <span className="muted"> · thread {threadId.slice(0, 8)}</span>}
        {runError && <span className="error"> · {runError}</span>}
      </div>
      <RunTargetNote target={target} problem={problem} />
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {tab === "run" && (
        <>
          <Outcome />
          <NodeInspector />
          {phase !== "idle" && phase !== "reading" && (
            <section className="run-timeline-section">
              <h3>Timeline</h3>
              <TimelineView />
            </section>
          )}
          <details className="run-input" open={phase === "idle" || phase === "error"} key={phase === "idle" ? "idle" : "ran"}>
            <summary>{phase === "idle" ? "Input" : "Run again"}</summary>
            {schemas === undefined ? (
              <p>Loading the input schema…</p>
            ) : (
              <InputForm
                key={`${graph}@${version}`}
                schema={schemas?.input_schema ?? null}
                stateSchema={schemas?.state_schema ?? null}
                examples={model.examples}
                disabled={busy}
                onSubmit={(input) => void run(input)}
              />
            )}
          </details>
          <TokenStream />
        </>
      )}
      {tab === "steps" && <StepInspector />}
      {tab === "history" && <TimeTravel nodeIds={nodeIds} onError={setError} />}
      {tab === "past" && <PastRuns graph={graph} version={version} nodeIds={nodeIds} onOpened={() => setTab("run")} onError={setError} />}
    </div>
  );
}

/** The latest model text of every node that streamed some, the running ones first. */
function TokenStream() {
  const tokens = useRunStore((s) => s.tokens);
  const status = useRunStore((s) => s.nodeStatus);
  const phase = useRunStore((s) => s.phase);
  const nodes = Object.keys(tokens).filter((node) => tokens[node]);
  if (nodes.length === 0) return null;
  nodes.sort((a, b) => Number(status[b] === "running") - Number(status[a] === "running"));
  const live = phase === "starting" || phase === "running";
  // Open while models stream; folded once the run is over (each step's detail has its text).
  return (
    <details className="token-stream" data-testid="token-stream" open={live} key={live ? "live" : "over"}>
      <summary>{live ? "Streaming" : "Model text by node"}</summary>
      {nodes.map((node) => (
        <section key={node} data-node={node}>
          <h4>
            {node} <span className={`run-badge run-${status[node] ?? "done"}`}>{status[node]}</span>
          </h4>
          <pre>{tokens[node]}</pre>
        </section>
      ))}
    </details>
  );
}

/** A first state that no node wrote is the run's input; the others count the steps as the
 * run's heading does. */
function stepLabel({ step, after }: StepValues, input: boolean): string {
  if (input && step === 1) return "Input";
  return `Step ${input ? step - 1 : step}${after.length ? ` · after ${after.join(", ")}` : ""}`;
}

/** The state after each step of the live run (its `values` events). */
function StepInspector() {
  const steps = useRunStore((s) => s.steps);
  const [picked, setPicked] = useState<number | null>(null);
  if (steps.length === 0) return <p className="muted">No steps yet.</p>;
  const shown = steps.find((step) => step.step === picked) ?? steps[steps.length - 1];
  const input = steps[0].after.length === 0;
  return (
    <div className="step-inspector" data-testid="step-inspector">
      <ol className="step-list">
        {steps.map((step) => (
          <li key={step.step}>
            <button type="button" className={step === shown ? "active" : undefined} onClick={() => setPicked(step.step)}>
              {stepLabel(step, input)}
            </button>
          </li>
        ))}
      </ol>
      <pre className="state-json" data-testid="step-state">
        {JSON.stringify(shown.values, null, 2)}
      </pre>
    </div>
  );
}
