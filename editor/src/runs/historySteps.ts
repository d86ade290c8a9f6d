/**
 * A run's steps read back from its thread's checkpoints, for a run whose journal holds none.
 *
 * The journal keeps the stream modes a run was started with. A run an API client started
 * with the SDK's default (`values`), or the run an approval's decision started for it, has
 * no `tasks` or `debug` events: the canvas still shows what its nodes did (from the
 * checkpoints), and without this the timeline and the node inspector would say they never
 * ran. Each checkpoint names the run that wrote it (`metadata.run_id`) and, in its tasks,
 * what each task of the step after it wrote (`result`) or how it failed; these become the
 * `tasks` events the journal would have held, timed by the checkpoints.
 */

import type { ThreadState } from "../api/client";
import { publicState, type RunEvent } from "./timeline";

/** Whether `event` says which of the graph's nodes ran when (a subgraph's, `mode|ns`, say it of its own). */
export function isStepEvent(event: Pick<RunEvent, "event">): boolean {
  return event.event === "tasks" || event.event === "debug";
}

/** Whether `events` (a run's journal) say which of the graph's nodes ran when. */
export function hasSteps(events: readonly RunEvent[]): boolean {
  return events.some(isStepEvent);
}

/**
 * The `tasks` events of run `runId` (started at `startedAt`) as its checkpoints in `history`
 * (newest first, as the API lists them) tell them. A task keeps its interrupts after a later
 * run resumed it: where this run left it, it was waiting on them.
 */
export function historySteps(history: readonly ThreadState[], runId: string, startedAt: string): RunEvent[] {
  const oldestFirst = [...history].reverse();
  const runOf = (state: ThreadState) => (state.metadata?.run_id as string | undefined) ?? null;
  const events: RunEvent[] = [];
  for (const [i, before] of oldestFirst.entries()) {
    const after = oldestFirst[i + 1];
    const mine = runOf(before) === runId;
    // The step after `before` finished in this run (its checkpoint is the run's), or this
    // run stopped before it finished (its last checkpoint, the next one another run's or none).
    const finishedHere = after !== undefined && runOf(after) === runId;
    const leftHere = mine && !finishedHere;
    if (!finishedHere && !leftHere) continue;
    // A step resumed from an earlier run's checkpoint starts, in this run, when the run did.
    const start = mine ? before.created_at : startedAt;
    const input = publicState(before.values);
    for (const task of before.tasks) {
      if (task.name.startsWith("__")) continue;
      if (finishedHere) {
        events.push({ event: "tasks", data: { id: task.id, name: task.name, input }, at: start });
        const result = task.error ? { error: task.error } : { result: task.result ?? null };
        events.push({ event: "tasks", data: { id: task.id, name: task.name, ...result, interrupts: [] }, at: after.created_at });
        continue;
      }
      // The run's last checkpoint: its tasks were interrupted, failed, or had not run.
      if (!task.error && task.interrupts.length === 0) continue;
      events.push({ event: "tasks", data: { id: task.id, name: task.name, input }, at: start });
      events.push({ event: "tasks", data: { id: task.id, name: task.name, error: task.error ?? null, interrupts: task.interrupts }, at: null });
    }
  }
  return events;
}
