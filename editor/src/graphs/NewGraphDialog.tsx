/**
 * "New graph": a name, a version (0.1.0 unless changed) and a template (blank,
 * or any graph's newest version). The graph opens in the editor as a draft
 * kept in the browser; its first Save creates it on the server.
 */
import { useEffect, useState } from "react";
import { graphs, type GraphSummary } from "../api/client";
import { editorHash } from "../routes";
import { newGraphDrafts, writeDraft } from "../store/drafts";
import { loadLayout } from "./layoutApi";
import { blankSpec, DEFAULT_VERSION, fromTemplate, graphNameProblem, versionProblem } from "./newGraph";
import "../versions/versions.css";

const BLANK = "";
/** A blank graph's START and END, with room between them for the first nodes. */
const BLANK_POSITIONS = { START: { x: 69, y: 0 }, END: { x: 69, y: 420 } };

export function NewGraphDialog({ onClose }: { onClose(): void }) {
  const [known, setKnown] = useState<GraphSummary[]>([]);
  const [name, setName] = useState("");
  const [version, setVersion] = useState(DEFAULT_VERSION);
  const [template, setTemplate] = useState(BLANK);
  const [touched, setTouched] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    graphs
      .list()
      .then((found) => live && setKnown([...found].sort((a, b) => a.name.localeCompare(b.name))))
      .catch((e: unknown) => live && setError(`cannot list graphs for the templates: ${e instanceof Error ? e.message : String(e)}`));
    return () => {
      live = false;
    };
  }, []);

  const taken = [...known.map((g) => g.name), ...newGraphDrafts().map((d) => d.graph)];
  const nameProblem = graphNameProblem(name, taken);
  const versionError = versionProblem(version);

  async function create() {
    setTouched(true);
    if (nameProblem || versionError) return;
    setBusy(true);
    setError(null);
    try {
      const source = known.find((g) => g.name === template);
      const [text, positions] = source
        ? await Promise.all([graphs.yaml(source.name, source.latest.version), loadLayout(source.name)])
        : [blankSpec(name, version), BLANK_POSITIONS];
      const yaml = source ? fromTemplate(text, name, version) : text;
      if (!writeDraft({ graph: name, version, yaml, baseYaml: yaml, positions, isNew: true }))
        throw new Error("the browser refused to keep the draft (storage full or disabled)");
      onClose();
      window.location.hash = editorHash(name, version);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="modal-backdrop" role="presentation">
      <form
        className="modal new-graph-dialog"
        role="dialog"
        aria-label="New graph"
        data-testid="new-graph-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <h2>New graph</h2>
        <label className="dialog-field">
          Name
          <input
            data-testid="new-graph-name"
            value={name}
            autoFocus
            spellCheck={false}
            placeholder="e.g. refund-desk"
            onChange={(e) => setName(e.target.value.trim())}
          />
          {touched && nameProblem && (
            <span className="plait-error" data-testid="new-graph-name-error">
              {nameProblem}
            </span>
          )}
        </label>
        <label className="dialog-field">
          Version
          <input data-testid="new-graph-version" value={version} spellCheck={false} onChange={(e) => setVersion(e.target.value.trim())} />
          {touched && versionError && <span className="plait-error">{versionError}</span>}
        </label>
        <label className="dialog-field">
          Start from
          <select data-testid="new-graph-template" value={template} onChange={(e) => setTemplate(e.target.value)}>
            <option value={BLANK}>Blank: state in and out, a scripted model, no nodes</option>
            {known.map((g) => (
              <option key={g.name} value={g.name}>
                {g.name}@{g.latest.version}
                {g.latest.description ? ` — ${g.latest.description}` : ""}
              </option>
            ))}
          </select>
        </label>
        <p className="plait-muted">It opens in the editor and is kept in this browser until you save it; Save creates it on the server.</p>
        {error && (
          <p className="plait-error" role="alert">
            {error}
          </p>
        )}
        <footer>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" data-testid="new-graph-create" disabled={busy}>
            {busy ? "Creating…" : "Create"}
          </button>
        </footer>
      </form>
    </div>
  );
}
