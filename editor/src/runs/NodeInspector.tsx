/**
 * The selected canvas node in the shown run: every execution of it (a loop's
 * visits one by one) with what it read, wrote, took and called; or why it did
 * not run. A subgraph node links to its graph.
 */

import { useState } from "react";
import { editorHash } from "../routes";
import { useEditorStore } from "../store/editorStore";
import { useRunStore } from "./runStore";
import { ModelCalls } from "./ModelCalls";
import { StepDetail } from "./StepDetail";
import { stepsOf } from "./timeline";
import * as fmt from "./format";

export function NodeInspector() {
  const selected = useEditorStore((s) => s.selectedNodes[0] ?? null);
  const model = useEditorStore((s) => s.model);
  const timeline = useRunStore((s) => s.timeline);
  const phase = useRunStore((s) => s.phase);
  const threadId = useRunStore((s) => s.threadId);
  const [visit, setVisit] = useState(0);
  // Nothing to tell of a node before a run, nor while the run's journal is being read.
  if (!selected || phase === "idle" || phase === "reading") return null;
  const node = model.nodes.find((n) => n.id === selected);
  if (!node) return null;
  const visits = stepsOf(timeline).filter((step) => step.node === selected);
  const shown = visits[Math.min(visit, visits.length - 1)];
  const ended = phase === "success" || phase === "error";
  // `ref: name@version`: the pinned graph the subgraph node runs as one step.
  const ref = node.kind === "subgraph" && typeof node.fields.ref === "string" ? node.fields.ref.split("@") : null;
  return (
    <section className="node-inspector" data-testid="node-inspector" data-node={selected}>
      <h3>
        {selected} <span className="muted">in this run</span>
      </h3>
      {visits.length === 0 ? (
        <p className="muted" data-testid="node-not-run">
          {ended ? "Skipped: the run did not reach this node." : "Not run yet."}
        </p>
      ) : (
        <>
          {visits.length > 1 && (
            <nav className="visit-tabs" aria-label="Visits">
              {visits.map((step, i) => (
                <button key={step.key} type="button" className={step === shown ? "active" : undefined} data-testid="node-visit" onClick={() => setVisit(i)}>
                  #{i + 1} · {step.status === "running" ? "…" : fmt.duration(step.durationMs)}
                </button>
              ))}
            </nav>
          )}
          {shown && <StepDetail key={shown.key} step={shown} />}
          {threadId && (node.kind === "llm" || node.kind === "agent") && <ModelCalls key={`${threadId} ${selected}`} threadId={threadId} node={selected} />}
        </>
      )}
      {ref && ref.length === 2 && (
        <p>
          Runs <a href={editorHash(ref[0], ref[1])}>{ref.join("@")}</a> as one step: its input and output are above.
        </p>
      )}
    </section>
  );
}
