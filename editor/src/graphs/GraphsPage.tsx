/** The registry's graphs (`GET /graphs`), each with its versions; any version opens in the editor. */
import { useEffect, useState } from "react";
import { graphs, type GraphSummary } from "../api/client";
import { editorHash } from "../routes";

export function GraphsPage() {
  const [list, setList] = useState<GraphSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    graphs
      .list()
      .then((found) => setList([...found].sort((a, b) => a.name.localeCompare(b.name))))
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, []);
  return (
    <div className="plait-page" data-testid="graphs-page">
      <h1>Graphs</h1>
      {error && <p className="plait-error" data-testid="graphs-error">Could not list graphs: {error}</p>}
      {!list && !error && <p className="plait-muted">Loading…</p>}
      {list && list.length === 0 && <p className="plait-muted">No graphs yet. Put specs in the specs folder or publish one with POST /graphs.</p>}
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
