/**
 * Version history of one graph: every stored version with its change note;
 * pick two to compare them. The comparison opens full size: a diff canvas
 * (nodes and edges marked added / removed / changed), the list of changes
 * (pick a changed node to see its fields before and after) and the text diff.
 * When the newer one is the version open in the editor, its canvas is marked
 * too (the editor store's `nodeDiff` / `edgeDiff`). Above the list, the
 * tenant's rollout: which version new threads start on (stable, canary and its
 * share), and each version's runs of the last day.
 */

import { useCallback, useEffect, useState } from "react";
import "./versions.css";
import { graphs, type GraphVersionInfo, type RolloutReport } from "../api/client";
import { EMPTY_MODEL, parseSpec, type GraphModel } from "../spec/model";
import { useEditorStore } from "../store/editorStore";
import { DiffGraph } from "./DiffGraph";
import { edgeLabel, edgeMarks, graphDiff, nodeMarks, type GraphDiffResult } from "./graphDiff";
import { roleLabel, rolloutSummary, runsLabel, versionRole } from "./rollout";
import { RolloutControls } from "./RolloutControls";
import { TextDiff } from "./TextDiff";

export interface VersionHistoryProps {
  graph: string;
  /** The version open in the editor. */
  current: string;
  onOpen(version: string): void;
}

export interface Comparison {
  from: string;
  to: string;
  before: string;
  after: string;
  beforeModel: GraphModel;
  afterModel: GraphModel;
  diff: GraphDiffResult;
}

export function VersionHistory({ graph, current, onOpen }: VersionHistoryProps) {
  const [versions, setVersions] = useState<GraphVersionInfo[]>([]);
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [comparison, setComparison] = useState<Comparison | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [rollout, setRollout] = useState<RolloutReport | null>(null);
  // Bumped after a rollout change: the report (shares, runs per version) is read again.
  const [rolloutSeen, setRolloutSeen] = useState(0);
  const setNodeDiff = useEditorStore((s) => s.setNodeDiff);
  const clear = useCallback(() => setNodeDiff({}), [setNodeDiff]);

  useEffect(() => {
    let live = true;
    graphs
      .versions(graph)
      .then((found) => {
        if (!live) return;
        setVersions(found);
        const names = found.map((v) => v.version);
        const at = Math.max(0, names.indexOf(current));
        setTo(names[at] ?? "");
        setFrom(names[at > 0 ? at - 1 : Math.min(1, names.length - 1)] ?? "");
      })
      .catch((e: unknown) => live && setError(String(e)));
    return () => {
      live = false;
    };
  }, [graph, current]);
  useEffect(() => {
    let live = true;
    graphs
      .rollout(graph)
      .then((found) => live && setRollout(found))
      // The versions still show without it (an older server, a graph not stored yet).
      .catch(() => live && setRollout(null));
    return () => {
      live = false;
    };
  }, [graph, rolloutSeen]);
  const counts = new Map((rollout?.versions ?? []).map((v) => [v.version, v]));

  // The canvas marks belong to this panel: clear them when it closes.
  useEffect(() => clear, [clear]);

  async function compare() {
    setError(null);
    try {
      const [before, after] = await Promise.all([graphs.yaml(graph, from), graphs.yaml(graph, to)]);
      const beforeModel = parseSpec(before).model ?? EMPTY_MODEL;
      const afterModel = parseSpec(after).model ?? EMPTY_MODEL;
      const diff = graphDiff(beforeModel, afterModel);
      setComparison({ from, to, before, after, beforeModel, afterModel, diff });
      if (to === current) setNodeDiff(nodeMarks(diff), edgeMarks(diff));
      else clear();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  return (
    <div className="version-history" data-testid="version-history">
      <h3>Versions of {graph}</h3>
      {rollout && (
        <section className="rollout-summary" data-testid="rollout-summary">
          <h4>Rollout</h4>
          <p>{rolloutSummary(rollout)}</p>
          {rollout.canary && (
            <div className="rollout-bar" role="img" aria-label={`canary share ${rollout.share}%`}>
              <span className="rollout-bar-canary" style={{ width: `${rollout.share}%` }} />
            </div>
          )}
          <RolloutControls
            key={`${rollout.stable ?? ""} ${rollout.canary ?? ""} ${rollout.share}`}
            graph={graph}
            rollout={rollout.stable ? rollout : null}
            versions={versions.map((v) => v.version)}
            onChanged={() => setRolloutSeen((n) => n + 1)}
          />
          <p className="muted">
            Runs below: the last {rollout.window_hours} h. <code>plait rollout</code> and the API change it too.
          </p>
        </section>
      )}
      <ol className="version-list">
        {[...versions].reverse().map((v) => (
          <li key={v.version} className={v.version === current ? "current" : undefined} data-version={v.version} data-testid="version-row">
            <div className="version-head">
              <strong>{v.version}</strong>
              {roleLabel(rollout, v.version) && (
                <span className={`rollout-role rollout-${versionRole(rollout, v.version)}`} data-testid="version-role">
                  {roleLabel(rollout, v.version)}
                </span>
              )}
              <span className="muted">{new Date(v.created_at).toLocaleString()}</span>
              <span className="muted" title={v.digest}>
                {v.digest.replace(/^sha256:/, "").slice(0, 8)}
              </span>
              {v.version === current ? (
                <span className="muted">open</span>
              ) : (
                <button type="button" onClick={() => onOpen(v.version)}>
                  Open
                </button>
              )}
            </div>
            {rollout && (
              <p className="version-runs muted" data-testid="version-runs">
                {runsLabel(counts.get(v.version))} in {rollout.window_hours} h
              </p>
            )}
            {v.note ? (
              <p className="version-note" data-testid="version-note">
                {v.note}
              </p>
            ) : (
              <p className="version-note muted">No change note.</p>
            )}
          </li>
        ))}
      </ol>
      <div className="version-compare">
        <label>
          From
          <select data-testid="diff-from" value={from} onChange={(e) => setFrom(e.target.value)}>
            {versions.map((v) => (
              <option key={v.version}>{v.version}</option>
            ))}
          </select>
        </label>
        <label>
          To
          <select data-testid="diff-to" value={to} onChange={(e) => setTo(e.target.value)}>
            {versions.map((v) => (
              <option key={v.version}>{v.version}</option>
            ))}
          </select>
        </label>
        <button type="button" data-testid="diff-compare" disabled={!from || !to || from === to} onClick={() => void compare()}>
          Compare
        </button>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {comparison && (
        <VersionCompare
          graph={graph}
          comparison={comparison}
          onClose={() => {
            setComparison(null);
            clear();
          }}
        />
      )}
    </div>
  );
}

const show = (value: unknown) => (value === undefined ? "—" : typeof value === "string" ? value : JSON.stringify(value, null, 1));

/** The comparison, full size: diff canvas and changes side by side, the text diff below. */
function VersionCompare({ graph, comparison, onClose }: { graph: string; comparison: Comparison; onClose(): void }) {
  const { diff } = comparison;
  const [picked, setPicked] = useState<string | null>(Object.keys(diff.nodes.changed)[0] ?? null);
  const [tab, setTab] = useState<"graph" | "text">("graph");
  const changedFields = picked ? diff.nodes.changed[picked] : undefined;
  const nothing =
    diff.nodes.added.length +
      diff.nodes.removed.length +
      Object.keys(diff.nodes.changed).length +
      diff.edges.added.length +
      diff.edges.removed.length +
      diff.edges.changed.length ===
    0;
  return (
    <div className="modal-backdrop" role="presentation">
      <div className="modal version-diff-modal" role="dialog" aria-label="Compare versions" data-testid="version-diff">
        <header className="version-diff-head">
          <h2>
            {graph}: {comparison.from} → {comparison.to}
          </h2>
          <nav className="tabs">
            <button type="button" aria-pressed={tab === "graph"} onClick={() => setTab("graph")}>
              Graph
            </button>
            <button type="button" aria-pressed={tab === "text"} data-testid="diff-tab-text" onClick={() => setTab("text")}>
              Text
            </button>
          </nav>
          <span className="plait-spacer" />
          <button type="button" onClick={onClose} data-testid="diff-close">
            Close
          </button>
        </header>
        {tab === "text" ? (
          <TextDiff before={comparison.before} after={comparison.after} testId="version-text-diff" />
        ) : (
          <div className="version-diff-body">
            <DiffGraph before={comparison.beforeModel} after={comparison.afterModel} diff={diff} picked={picked} onPick={setPicked} />
            <aside className="version-diff-changes" data-testid="diff-changes">
              {nothing && <p className="muted">The graphs are the same (only comments or formatting differ: see Text).</p>}
              <ChangeList title="Nodes added" items={diff.nodes.added} mark="added" onPick={setPicked} />
              <ChangeList title="Nodes removed" items={diff.nodes.removed} mark="removed" onPick={setPicked} />
              <ChangeList title="Nodes changed" items={Object.keys(diff.nodes.changed)} mark="changed" onPick={setPicked} picked={picked} />
              <ChangeList title="Edges added" items={diff.edges.added.map(edgeLabel)} mark="added" testId="diff-edges-added" />
              <ChangeList title="Edges removed" items={diff.edges.removed.map(edgeLabel)} mark="removed" testId="diff-edges-removed" />
              <ChangeList
                title="Edges changed"
                items={diff.edges.changed.map((c) => `${edgeLabel(c.before)} ⇒ ${c.after.label ?? "no label"}`)}
                mark="changed"
                testId="diff-edges-changed"
              />
              {changedFields && (
                <section className="diff-node-fields" data-testid="diff-node-fields" data-node={picked ?? ""}>
                  <h4>What changed in {picked}</h4>
                  <table>
                    <thead>
                      <tr>
                        <th>Field</th>
                        <th>{comparison.from}</th>
                        <th>{comparison.to}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {changedFields.map((f) => (
                        <tr key={f.field} data-field={f.field}>
                          <td>{f.field}</td>
                          <td className="diff-removed">
                            <pre>{show(f.before)}</pre>
                          </td>
                          <td className="diff-added">
                            <pre>{show(f.after)}</pre>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </section>
              )}
            </aside>
          </div>
        )}
      </div>
    </div>
  );
}

function ChangeList({
  title,
  items,
  mark,
  onPick,
  picked,
  testId,
}: {
  title: string;
  items: string[];
  mark: "added" | "removed" | "changed";
  onPick?(item: string): void;
  picked?: string | null;
  testId?: string;
}) {
  if (items.length === 0) return null;
  return (
    <section className="diff-change-list" data-testid={testId}>
      <h4>{title}</h4>
      <ul>
        {items.map((item) => (
          <li key={item} className={`diff-${mark}${picked === item ? " picked" : ""}`} data-node={onPick ? item : undefined} data-mark={mark}>
            {onPick ? (
              <button type="button" className="linkish" onClick={() => onPick(item)}>
                {item}
              </button>
            ) : (
              item
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
