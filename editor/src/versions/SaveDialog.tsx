/**
 * Save: validate the text on the server, show its diff against the version
 * the edit started from, ask for the new version (next free patch bump by
 * default) and publish it with `POST /graphs`. Server errors (422 issues,
 * 409 version taken) stay in the dialog.
 */

import { useEffect, useMemo, useState } from "react";
import { ApiError, graphs, type SpecIssue } from "../api/client";
import { TextDiff } from "./TextDiff";
import { nextFreeVersion, withVersion } from "./versioning";

export interface SaveDialogProps {
  graph: string;
  /** The version the edit started from. */
  baseVersion: string;
  /** The current (unsaved) spec text. */
  yaml: string;
  onClose(): void;
  /** Called after publishing, with the new version and the text that was stored. */
  onSaved(version: string, yaml: string): void;
}

type Check = { state: "checking" } | { state: "done"; issues: SpecIssue[] } | { state: "unavailable"; message: string };

export function SaveDialog({ graph, baseVersion, yaml, onClose, onSaved }: SaveDialogProps) {
  const [baseYaml, setBaseYaml] = useState<string | null>(null);
  const [version, setVersion] = useState("");
  const [check, setCheck] = useState<Check>({ state: "checking" });
  const [error, setError] = useState<{ message: string; issues: SpecIssue[] } | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    let live = true;
    graphs
      .yaml(graph, baseVersion)
      .then((text) => live && setBaseYaml(text))
      .catch((e: unknown) => live && setError({ message: `cannot load ${graph}@${baseVersion}: ${String(e)}`, issues: [] }));
    graphs
      .versions(graph)
      .then((known) => live && setVersion((v) => v || nextFreeVersion(baseVersion, known.map((k) => k.version))))
      .catch(() => live && setVersion((v) => v || nextFreeVersion(baseVersion, [])));
    graphs
      .validate(yaml)
      .then((result) => live && setCheck({ state: "done", issues: result.issues }))
      .catch((e: unknown) =>
        live && setCheck({ state: "unavailable", message: e instanceof Error ? e.message : String(e) }),
      );
    return () => {
      live = false;
    };
  }, [graph, baseVersion, yaml]);

  const toSave = useMemo(() => (version ? withVersion(yaml, version) : yaml), [yaml, version]);
  const errors = check.state === "done" ? check.issues.filter((issue) => issue.severity !== "warning") : [];
  const warnings = check.state === "done" ? check.issues.filter((issue) => issue.severity === "warning") : [];

  async function save() {
    setSaving(true);
    setError(null);
    try {
      const stored = await graphs.upload(toSave);
      onSaved(stored.version, toSave);
    } catch (e) {
      if (e instanceof ApiError) setError({ message: e.message, issues: e.issues });
      else setError({ message: String(e), issues: [] });
    } finally {
      setSaving(false);
    }
  }

  return (
    <div className="modal-backdrop" role="presentation">
      <div className="modal save-dialog" role="dialog" aria-label="Save a new version" data-testid="save-dialog">
        <header>
          <h2>
            Save {graph} <small>from {baseVersion}</small>
          </h2>
        </header>
        <section className="save-validation" data-testid="save-validation">
          {check.state === "checking" && <p>Validating on the server…</p>}
          {check.state === "unavailable" && <p className="warn">Server validation unavailable: {check.message}</p>}
          {check.state === "done" && errors.length === 0 && (
            <p className="ok">Valid{warnings.length ? ` (${warnings.length} warning${warnings.length > 1 ? "s" : ""})` : ""}.</p>
          )}
          <IssueList issues={[...errors, ...warnings]} />
        </section>
        <label className="save-version">
          New version
          <input
            data-testid="save-version"
            value={version}
            onChange={(event) => setVersion(event.target.value.trim())}
            spellCheck={false}
          />
        </label>
        <section className="save-diff">
          <h3>Changes against {baseVersion}</h3>
          {baseYaml === null ? <p>Loading {baseVersion}…</p> : <TextDiff before={baseYaml} after={toSave} testId="save-diff" />}
        </section>
        {error && (
          <section className="save-error error" role="alert" data-testid="save-error">
            <p>{error.message}</p>
            <IssueList issues={error.issues} />
          </section>
        )}
        <footer>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className="primary"
            data-testid="save-confirm"
            disabled={saving || !version || errors.length > 0}
            onClick={() => void save()}
          >
            {saving ? "Saving…" : `Save ${version}`}
          </button>
        </footer>
      </div>
    </div>
  );
}

export function IssueList({ issues }: { issues: SpecIssue[] }) {
  if (issues.length === 0) return null;
  return (
    <ul className="issue-list">
      {issues.map((issue, i) => (
        <li key={i} className={`issue issue-${issue.severity ?? "error"}`}>
          {issue.line ? <span className="issue-where">line {issue.line}: </span> : null}
          {issue.message}
          {issue.fix ? <span className="issue-fix"> — {issue.fix}</span> : null}
        </li>
      ))}
    </ul>
  );
}
