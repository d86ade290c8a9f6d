/**
 * The run side of the editor: start a run from the input form, follow it
 * (status on the canvas, tokens, state after each step), open past runs of
 * the graph, and travel in a thread's history: pick a checkpoint, see its
 * state, fork a new run from it.
 */

import { useEffect, useMemo, useState } from "react";
import "./runs.css";
import { assistants, threads, type AssistantSchemas, type Thread, type ThreadState } from "../api/client";
import { useEditorStore } from "../store/editorStore";
import { InputForm } from "./InputForm";
import { useCanvasRunBridge } from "./NodeOverlay";
import { assistantOf, detach, forkRun, openThread, startRun } from "./runController";
import { useRunStore } from "./runStore";
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
    // Only when the graph opens: later edits of the text must not reopen it.
  }, [graph]);

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
      useStartedRun.getState().started(ran);
      await startRun(graph, version, nodeIds, input, ran.assistantId);
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
        {phase === "idle" ? "No run" : phase}
        {threadId && <span className="muted"> · thread {threadId.slice(0, 8)}</span>}
        {runError && <span className="error"> · {runError}</span>}
      </div>
      <RunTargetNote target={target} problem={problem} />
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {tab === "run" &&
        (schemas === undefined ? (
          <p>Loading the input schema…</p>
        ) : (
          <>
            <InputForm
              key={`${graph}@${version}`}
              schema={schemas?.input_schema ?? null}
              stateSchema={schemas?.state_schema ?? null}
              examples={model.examples} disabled={busy} onSubmit={(input) => void run(input)} />
            <TokenStream />
          </>
        ))}
      {tab === "steps" && <StepInspector />}
      {tab === "history" && <TimeTravel nodeIds={nodeIds} onError={setError} />}
      {tab === "past" && <PastRuns graph={graph} assistantId={assistantOf(graph, version)} nodeIds={nodeIds} onOpened={() => setTab("run")} onError={setError} />}
    </div>
  );
}

/** Tokens of every node that streamed some, the running ones first. */
function TokenStream() {
  const tokens = useRunStore((s) => s.tokens);
  const status = useRunStore((s) => s.nodeStatus);
  const nodes = Object.keys(tokens).filter((node) => tokens[node]);
  if (nodes.length === 0) return null;
  nodes.sort((a, b) => Number(status[b] === "running") - Number(status[a] === "running"));
  return (
    <div className="token-stream" data-testid="token-stream">
      {nodes.map((node) => (
        <section key={node} data-node={node}>
          <h4>
            {node} <span className={`run-badge run-${status[node] ?? "done"}`}>{status[node]}</span>
          </h4>
          <pre>{tokens[node]}</pre>
        </section>
      ))}
    </div>
  );
}

/** The state after each step of the live run (its `values` events). */
function StepInspector() {
  const steps = useRunStore((s) => s.steps);
  const [picked, setPicked] = useState<number | null>(null);
  if (steps.length === 0) return <p className="muted">No steps yet.</p>;
  const shown = steps.find((step) => step.step === picked) ?? steps[steps.length - 1];
  return (
    <div className="step-inspector" data-testid="step-inspector">
      <ol className="step-list">
        {steps.map((step) => (
          <li key={step.step}>
            <button type="button" className={step === shown ? "active" : undefined} onClick={() => setPicked(step.step)}>
              Step {step.step}
              {step.after.length ? ` · after ${step.after.join(", ")}` : ""}
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

/** Checkpoints of the open thread, newest first; pick one to see its state and fork from it. */
function TimeTravel({ nodeIds, onError }: { nodeIds: string[]; onError(message: string): void }) {
  const threadId = useRunStore((s) => s.threadId);
  const assistantId = useRunStore((s) => s.assistantId);
  const phase = useRunStore((s) => s.phase);
  const [history, setHistory] = useState<ThreadState[]>([]);
  const [picked, setPicked] = useState<ThreadState | null>(null);

  useEffect(() => {
    if (!threadId || phase === "running" || phase === "starting") return;
    let live = true;
    threads
      .history(threadId)
      .then((found) => live && setHistory(found))
      .catch((e: unknown) => onError(String(e)));
    return () => {
      live = false;
    };
  }, [threadId, phase, onError]);

  if (!threadId) return <p className="muted">Run the graph or open a past run first.</p>;
  return (
    <div className="time-travel" data-testid="time-travel">
      <ol className="checkpoint-list">
        {history.map((state, i) => {
          const step = (state.metadata?.step as number | undefined) ?? history.length - 1 - i;
          return (
            <li key={state.checkpoint.checkpoint_id} data-checkpoint={state.checkpoint.checkpoint_id}>
              <button type="button" data-testid="checkpoint" className={picked === state ? "active" : undefined} onClick={() => setPicked(state)}>
                step {step} · next: {state.next.length ? state.next.join(", ") : "—"}
              </button>
            </li>
          );
        })}
      </ol>
      {picked && (
        <div className="checkpoint-detail">
          <button
            type="button"
            className="primary"
            data-testid="fork-run"
            disabled={!assistantId || picked.next.length === 0}
            title={picked.next.length === 0 ? "Nothing runs after this checkpoint" : "Run again from here on a new branch"}
            onClick={() => {
              void forkRun(threadId, assistantId as string, picked.checkpoint.checkpoint_id, nodeIds, doneBefore(history, picked)).catch(
                (e: unknown) => onError(String(e)),
              );
            }}
          >
            Fork a run from here
          </button>
          <pre className="state-json" data-testid="checkpoint-state">
            {JSON.stringify(picked.values, null, 2)}
          </pre>
        </div>
      )}
    </div>
  );
}

/**
 * Nodes that ran before `picked` (shown done when a fork starts): every node
 * an older checkpoint had as `next` (history is newest first).
 */
function doneBefore(history: ThreadState[], picked: ThreadState): Record<string, boolean> {
  const done: Record<string, boolean> = {};
  for (const state of history.slice(history.indexOf(picked) + 1)) for (const node of state.next) done[node] = true;
  return done;
}

/** The graph's earlier runs (threads tagged with its name), newest first. */
function PastRuns({
  graph,
  assistantId,
  nodeIds,
  onOpened,
  onError,
}: {
  graph: string;
  assistantId: string;
  nodeIds: string[];
  onOpened(): void;
  onError(message: string): void;
}) {
  const [found, setFound] = useState<Thread[] | null>(null);
  const phase = useRunStore((s) => s.phase);
  useEffect(() => {
    let live = true;
    threads
      .search({ metadata: { graph_id: graph } })
      .then((list) => live && setFound(list))
      .catch((e: unknown) => onError(String(e)));
    return () => {
      live = false;
    };
  }, [graph, phase, onError]);
  if (found === null) return <p>Loading…</p>;
  if (found.length === 0) return <p className="muted">No runs of {graph} yet.</p>;
  return (
    <ul className="past-runs" data-testid="past-runs">
      {found.map((thread) => (
        <li key={thread.thread_id}>
          <button
            type="button"
            data-thread={thread.thread_id}
            onClick={() => {
              onOpened();
              void openThread(thread.thread_id, assistantId, nodeIds).catch((e: unknown) => onError(String(e)));
            }}
          >
            {new Date(thread.created_at).toLocaleString()} · <span className={`thread-${thread.status}`}>{thread.status}</span>
            {typeof thread.metadata.plait_version === "string" ? ` · ${thread.metadata.plait_version}` : ""}
          </button>
        </li>
      ))}
    </ul>
  );
}
