/**
 * Change the tenant's rollout of a graph from its version history: start a
 * canary on a version with a share of new threads, change the share, promote
 * the canary to stable, roll it back, or end the rollout. The same calls as
 * `plait rollout` (`PUT /graphs/{name}/rollout`, `.../promote`, `.../rollback`,
 * `DELETE`); the server's refusal is shown in its words.
 */

import { useState } from "react";
import { graphs, type RolloutInfo } from "../api/client";
import { canaryCandidates, parseShare } from "./rollout";

export function RolloutControls({
  graph,
  rollout,
  versions,
  onChanged,
}: {
  graph: string;
  rollout: RolloutInfo | null;
  /** Every stored version, oldest first. */
  versions: string[];
  onChanged(): void;
}) {
  const candidates = canaryCandidates(rollout, versions);
  const [canary, setCanary] = useState(candidates[candidates.length - 1] ?? "");
  const [startShare, setStartShare] = useState("10");
  const [share, setShare] = useState(String(rollout?.share ?? 10));
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function act(call: () => Promise<unknown>) {
    setBusy(true);
    setProblem(null);
    try {
      await call();
      onChanged();
    } catch (e: unknown) {
      setProblem(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  const chosen = candidates.includes(canary) ? canary : (candidates[candidates.length - 1] ?? "");
  const started = parseShare(startShare);
  const changed = parseShare(share);
  return (
    <div className="rollout-controls" data-testid="rollout-controls">
      {rollout?.canary && (
        <div className="rollout-row">
          <label>
            Canary share
            <input data-testid="rollout-share" type="number" min={0} max={100} value={share} onChange={(e) => setShare(e.target.value)} />%
          </label>
          <button
            type="button"
            data-testid="rollout-set-share"
            disabled={busy || changed === null || changed === rollout.share}
            onClick={() => void act(() => graphs.setRollout(graph, { canary: rollout.canary, share: changed ?? 0, stable: rollout.stable ?? undefined }))}
          >
            Set
          </button>
          <button type="button" data-testid="rollout-promote" disabled={busy} onClick={() => void act(() => graphs.settleRollout(graph, "promote"))}>
            Promote {rollout.canary}
          </button>
          <button type="button" data-testid="rollout-rollback" disabled={busy} onClick={() => void act(() => graphs.settleRollout(graph, "rollback"))}>
            Roll back
          </button>
        </div>
      )}
      {!rollout?.canary && candidates.length > 0 && (
        <div className="rollout-row">
          <label>
            Canary
            <select data-testid="rollout-canary-version" value={chosen} onChange={(e) => setCanary(e.target.value)}>
              {candidates.map((version) => (
                <option key={version}>{version}</option>
              ))}
            </select>
          </label>
          <label>
            for
            <input data-testid="rollout-canary-share" type="number" min={1} max={100} value={startShare} onChange={(e) => setStartShare(e.target.value)} />% of
            new threads
          </label>
          <button
            type="button"
            data-testid="rollout-start"
            disabled={busy || !chosen || started === null || started === 0}
            onClick={() => void act(() => graphs.setRollout(graph, { canary: chosen, share: started ?? 0, stable: rollout?.stable ?? undefined }))}
          >
            Start
          </button>
        </div>
      )}
      {rollout?.stable && (
        <div className="rollout-row">
          <button
            type="button"
            data-testid="rollout-end"
            disabled={busy}
            title="New threads start on the newest version again"
            onClick={() => void act(() => graphs.endRollout(graph))}
          >
            End rollout
          </button>
        </div>
      )}
      {problem && (
        <p className="error" role="alert" data-testid="rollout-error">
          {problem}
        </p>
      )}
    </div>
  );
}
