/**
 * The registry's graphs (`GET /graphs`), each with its versions; any version
 * opens in the editor. "New graph" starts one; graphs made here and not saved
 * yet are listed from the browser's drafts.
 */
import { useEffect, useState } from "react";
import { graphs, type GraphSummary } from "../api/client";
import { editorHash } from "../routes";
import { newGraphDrafts, removeDraft } from "../store/drafts";
import { roleLabel, versionRole } from "../versions/rollout";
import { NewGraphDialog } from "./NewGraphDialog";

export function GraphsPage() {
  const [list, setList] = useState<GraphSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [unsaved, setUnsaved] = useState(newGraphDrafts);
  useEffect(() => {
    graphs
      .list()
      .then((found) => setList([...found].sort((a, b) => a.name.localeCompare(b.name))))
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, []);
  return (
    <div className="plait-page" data-testid="graphs-page">
      <div className="plait-page-head">
        <h1>Graphs</h1>
        <button className="primary" data-testid="new-graph" onClick={() => setCreating(true)}>
          New graph
        </button>
      </div>
      {creating && <NewGraphDialog onClose={() => setCreating(false)} />}
      {unsaved.length > 0 && (
        <section className="plait-unsaved" data-testid="unsaved-graphs">
          <h2>Not saved yet</h2>
          <ul>
            {unsaved.map((d) => (
              <li key={`${d.graph}@${d.version}`} data-testid={`unsaved-${d.graph}`}>
                <a href={editorHash(d.graph, d.version)}>
                  {d.graph}@{d.version}
                </a>{" "}
                <span className="plait-muted">kept in this browser since {new Date(d.savedAt).toLocaleString()}</span>{" "}
                <button
                  onClick={() => {
                    if (!window.confirm(`Discard the unsaved graph ${d.graph}? This cannot be undone.`)) return;
                    removeDraft(d.graph, d.version);
                    setUnsaved(newGraphDrafts());
                  }}
                >
                  Discard
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      {error && (
        <p className="plait-error" data-testid="graphs-error">
          Could not list graphs: {error}
        </p>
      )}
      {!list && !error && <p className="plait-muted">Loading…</p>}
      {list && list.length === 0 && (
        <p className="plait-muted">No graphs yet. Start one with New graph, put specs in the specs folder, or publish one with POST /graphs.</p>
      )}
      {list && list.length > 0 && (
        <table className="plait-table">
          <thead>
            <tr>
              <th>Graph</th>
              <th>Description</th>
              <th>Versions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((g) => (
              <tr key={g.name} data-testid={`graph-row-${g.name}`}>
                <td>
                  <a href={editorHash(g.name, g.latest.version)} data-testid={`graph-open-${g.name}`}>
                    {g.name}
                  </a>
                </td>
                <td className="plait-muted">{g.latest.description ?? ""}</td>
                <td>
                  {[...g.versions].reverse().map((v) => (
                    <a key={v} className="plait-version" href={editorHash(g.name, v)} data-testid={`graph-version-${g.name}-${v}`}>
                      {v}
                      {v === g.latest.version ? " (latest)" : ""}
                      {roleLabel(g.rollout, v) && (
                        <span className={`rollout-role rollout-${versionRole(g.rollout, v)}`} data-testid={`graph-rollout-${g.name}-${v}`}>
                          {roleLabel(g.rollout, v)}
                        </span>
                      )}
                    </a>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
