/**
 * The graph's earlier runs, newest first: how each ended (Plait's state, so a
 * run whose map lost items, one waiting for a tool, a dead-lettered or an expired
 * one says so; a priority other than the default and a waiting run's deadline
 * beside it), the version that ran, when it started,
 * how long it took and, for a spec with `evaluation`, its graders' mean score
 * (each grader's score and reason on hover). Opening one shows it on the version that ran: another
 * version's run opens that version's editor.
 */

import { useEffect, useState } from "react";
import { editorHash } from "../routes";
import { runsOf, threadsOf, type PlaitRun, type PlaitThread } from "./runApi";
import { assistantOf, openThread } from "./runController";
import { pastState, queueNote } from "./runStates";
import { scoreBadge } from "./scores";
import { useRunStore } from "./runStore";
import * as fmt from "./format";

interface PastRun {
  thread: PlaitThread;
  runs: PlaitRun[];
}

export function PastRuns({
  graph,
  version,
  nodeIds,
  onOpened,
  onError,
}: {
  graph: string;
  version: string;
  nodeIds: string[];
  onOpened(): void;
  onError(message: string): void;
}) {
  const [found, setFound] = useState<PastRun[] | null>(null);
  const phase = useRunStore((s) => s.phase);
  useEffect(() => {
    let live = true;
    threadsOf(graph)
      .then((list) => Promise.all(list.map(async (thread) => ({ thread, runs: await runsOf(thread.thread_id) }))))
      .then((list) => live && setFound(list))
      .catch((e: unknown) => onError(String(e)));
    return () => {
      live = false;
    };
  }, [graph, phase, onError]);
  if (found === null) return <p>Loading…</p>;
  if (found.length === 0) return <p className="muted">No runs of {graph} yet.</p>;

  function open({ thread, runs }: PastRun) {
    const ran = thread.version ?? version;
    onOpened();
    if (ran !== version && !ran.includes("+draft")) {
      // Show it on the version that ran: that version's editor opens the thread the URL names.
      window.location.hash = editorHash(graph, ran, thread.thread_id);
      return;
    }
    const last = runs[runs.length - 1];
    void openThread(thread.thread_id, last?.assistant_id ?? assistantOf(graph, version), nodeIds).catch((e: unknown) => onError(String(e)));
  }

  return (
    <table className="past-runs" data-testid="past-runs">
      <thead>
        <tr>
          <th>Started</th>
          <th>Status</th>
          <th>Version</th>
          <th>Took</th>
          <th>Score</th>
        </tr>
      </thead>
      <tbody>
        {found.map((past) => {
          const { thread, runs } = past;
          const first = runs[0];
          const last = runs[runs.length - 1];
          const shown = pastState(thread, runs);
          const note = last ? queueNote(last, fmt.when) : "";
          const took = first && last ? Date.parse(last.updated_at) - Date.parse(first.created_at) : null;
          const score = scoreBadge(runs);
          return (
            <tr key={thread.thread_id} data-testid="past-run" data-thread={thread.thread_id} data-version={thread.version ?? ""}>
              <td>
                <button type="button" data-testid="open-past-run" onClick={() => open(past)} title={`thread ${thread.thread_id}`}>
                  {fmt.when(first?.created_at ?? thread.created_at)}
                </button>
              </td>
              <td>
                <span
                  className={`run-badge past-tone-${shown.tone}`}
                  data-testid="past-status"
                  data-state={shown.state}
                  title={runs.length > 1 ? `${runs.length} runs on this thread (resumes and forks)` : undefined}
                >
                  {shown.label}
                </span>
                {note && (
                  <span className="muted" data-testid="past-queue">
                    {" "}
                    {note}
                  </span>
                )}
              </td>
              <td
                data-testid="past-version"
                className={thread.version === version ? "shown-version" : undefined}
                title={thread.version === version ? "the version shown" : "opens that version"}
              >
                {thread.version ?? "—"}
              </td>
              <td>{shown.tone === "active" ? "…" : fmt.duration(took)}</td>
              <td>
                {score ? (
                  <span className={`run-badge score-tone-${score.tone}`} data-testid="past-score" data-tone={score.tone} title={score.title}>
                    {score.label}
                  </span>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
