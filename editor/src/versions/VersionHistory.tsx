/**
 * Version history of one graph: every stored version; pick two to see what
 * changed — a graph diff (nodes marked added / removed / changed, on a diff
 * canvas and on the editor's canvas through the editor store's `nodeDiff`) and a text diff.
 */

import { useCallback, useEffect, useState } from "react";
import "./versions.css";
import { graphs, type GraphDiff, type GraphVersionInfo } from "../api/client";
import { DiffGraph } from "./DiffGraph";
import { type NodeDiffMark, useEditorStore } from "../store/editorStore";
import { marksOf } from "./diffMarks";
import { TextDiff } from "./TextDiff";

export interface VersionHistoryProps {
  graph: string;
  /** The version open in the editor. */
  current: string;
  onOpen(version: string): void;
}

interface Comparison {
  diff: GraphDiff;
  marks: Record<string, NodeDiffMark>;
  before: string;
  after: string;
}

export function VersionHistory({ graph, current, onOpen }: VersionHistoryProps) {
  const [versions, setVersions] = useState<GraphVersionInfo[]>([]);
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [comparison, setComparison] = useState<Comparison | null>(null);
  const [error, setError] = useState<string | null>(null);
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

  // The canvas marks belong to this panel: clear them when it closes.
  useEffect(() => clear, [clear]);

  async function compare() {
    setError(null);
    try {
      const [diff, before, after] = await Promise.all([
        graphs.diff(graph, from, to),
        graphs.yaml(graph, from),
        graphs.yaml(graph, to),
      ]);
      const marks = marksOf(diff);
      setComparison({ diff, marks, before, after });
      setNodeDiff(marks);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  return (
    <div className="version-history" data-testid="version-history">
      <h3>Versions of {graph}</h3>
      <table className="version-list">
        <tbody>
          {[...versions].reverse().map((v) => (
            <tr key={v.version} className={v.version === current ? "current" : undefined} data-version={v.version}>
              <td>{v.version}</td>
              <td className="muted">{new Date(v.created_at).toLocaleString()}</td>
              <td className="muted" title={v.digest}>
                {v.digest.replace(/^sha256:/, "").slice(0, 8)}
              </td>
              <td>
                {v.version === current ? (
                  <span className="muted">open</span>
                ) : (
                  <button type="button" onClick={() => onOpen(v.version)}>
                    Open
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
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
        {comparison && (
          <button
            type="button"
            onClick={() => {
              setComparison(null);
              clear();
            }}
          >
            Clear
          </button>
        )}
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {comparison && (
        <div className="version-diff" data-testid="version-diff">
          <ul className="diff-summary">
            {Object.entries(comparison.marks).map(([node, mark]) => (
              <li key={node} className={`diff-${mark}`} data-node={node} data-mark={mark}>
                {mark === "added" ? "+" : mark === "removed" ? "−" : "~"} {node} <span className="muted">{mark}</span>
              </li>
            ))}
          </ul>
          <DiffGraph before={comparison.before} after={comparison.after} marks={comparison.marks} />
          <TextDiff before={comparison.before} after={comparison.after} testId="version-text-diff" />
        </div>
      )}
    </div>
  );
}
