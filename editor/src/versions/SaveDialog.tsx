/**
 * Save: validate the text on the server, show its diff against the version
 * the edit started from, ask for the new version (next free patch bump by
 * default; a new graph keeps its own, a copy under a new name starts at 0.1.0)
 * and a change note, and publish it with `POST /graphs`, the layout travelling
 * with it. When only the layout changed, it is saved with the same version.
 * "Save as" publishes the text under another graph name. Server errors (422
 * issues, 409 version taken) stay in the dialog; Ctrl/Cmd+S or Enter saves.
 */

import { useEffect, useMemo, useState } from "react";
import { ApiError, graphs, type GraphSummary, type GraphVersionInfo, type SpecIssue } from "../api/client";
import { layoutForSave } from "../graphs/layoutApi";
import { DEFAULT_VERSION, fromTemplate, graphNameProblem, versionProblem } from "../graphs/newGraph";
import type { XY } from "../spec/layout";
import { TextDiff } from "./TextDiff";
import { nextFreeVersion, withVersion } from "./versioning";

export interface SaveDialogProps {
  graph: string;
  /** The version the edit started from (for a new graph: its own, not on the server). */
  baseVersion: string;
  /** A graph never saved: the first Save creates it. */
  isNew: boolean;
  /** Save under another name ("Save as"). */
  saveAs?: boolean;
  /** The text the edit started from, and the current (unsaved) text and positions. */
  baseYaml: string;
  yaml: string;
  positions: Record<string, XY>;
  /** Whether the positions changed since the last save. */
  layoutChanged: boolean;
  onClose(): void;
  /** Called after publishing, with what was stored and the text that was sent. */
  onSaved(saved: GraphVersionInfo, yaml: string): void;
}

type Check = { state: "checking" } | { state: "done"; issues: SpecIssue[] } | { state: "unavailable"; message: string };

export function SaveDialog(props: SaveDialogProps) {
  const { graph, baseVersion, isNew, saveAs = false, baseYaml, yaml, positions, layoutChanged, onClose, onSaved } = props;
  const textChanged = isNew || saveAs || yaml !== baseYaml;
  const [name, setName] = useState(saveAs ? "" : graph);
  // A copy under a new name starts its own history, as a new graph does.
  const [version, setVersion] = useState(isNew || !textChanged ? baseVersion : saveAs ? DEFAULT_VERSION : "");
  const [note, setNote] = useState("");
  const [known, setKnown] = useState<GraphSummary[]>([]);
  const [check, setCheck] = useState<Check>({ state: "checking" });
  const [error, setError] = useState<{ message: string; issues: SpecIssue[] } | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    let live = true;
    if (!isNew && !saveAs && textChanged)
      graphs
        .versions(graph)
        .then(
          (found) =>
            live &&
            setVersion(
              (v) =>
                v ||
                nextFreeVersion(
                  baseVersion,
                  found.map((k) => k.version),
                ),
            ),
        )
        .catch(() => live && setVersion((v) => v || nextFreeVersion(baseVersion, [])));
    if (saveAs)
      graphs
        .list()
        .then((found) => live && setKnown(found))
        .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [graph, baseVersion, isNew, saveAs, textChanged]);

  const nameError = saveAs
    ? graphNameProblem(
        name,
        known.map((g) => g.name),
      )
    : null;
  const versionError = version ? versionProblem(version) : null;
  const toSave = useMemo(() => {
    if (!version || versionError) return yaml;
    if (saveAs) return name && !nameError ? fromTemplate(yaml, name, version) : yaml;
    return withVersion(yaml, version);
  }, [yaml, version, versionError, saveAs, name, nameError]);
  // What is validated is what would be stored (its name and version included).
  useEffect(() => {
    let live = true;
    setCheck({ state: "checking" });
    const timer = window.setTimeout(() => {
      graphs
        .validate(toSave)
        .then((result) => live && setCheck({ state: "done", issues: result.issues }))
        .catch((e: unknown) => live && setCheck({ state: "unavailable", message: e instanceof Error ? e.message : String(e) }));
    }, 200);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [toSave]);
  const errors = check.state === "done" ? check.issues.filter((issue) => issue.severity !== "warning") : [];
  const warnings = check.state === "done" ? check.issues.filter((issue) => issue.severity === "warning") : [];
  const blocked = saving || check.state === "checking" || !version || !!versionError || !!nameError || errors.length > 0;

  async function save() {
    if (blocked) return;
    setSaving(true);
    setError(null);
    try {
      const stored = await graphs.upload(toSave, { note: note.trim() || undefined, layout: layoutForSave(positions) });
      onSaved(stored, toSave);
    } catch (e) {
      if (e instanceof ApiError) setError({ message: e.message, issues: e.issues });
      else setError({ message: String(e), issues: [] });
    } finally {
      setSaving(false);
    }
  }

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
        e.preventDefault();
        e.stopPropagation();
        void save();
      } else if (e.key === "Escape") onClose();
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  });

  const title = saveAs ? `Save ${graph} as a new graph` : isNew ? `Save the new graph ${graph}` : `Save ${graph}`;
  return (
    <div className="modal-backdrop" role="presentation">
      <form
        className="modal save-dialog"
        role="dialog"
        aria-label={saveAs ? "Save as" : "Save a new version"}
        data-testid="save-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <header>
          <h2>
            {title} {!isNew && !saveAs && <small>from {baseVersion}</small>}
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
        {/* At the top, by the version it is usually about: below the diff it was out of sight. */}
        {error && (
          <section className="save-error error" role="alert" data-testid="save-error">
            <p>{error.message}</p>
            <IssueList issues={error.issues} />
          </section>
        )}
        {saveAs && (
          <label className="dialog-field">
            New graph name
            <input data-testid="save-name" value={name} autoFocus spellCheck={false} onChange={(e) => setName(e.target.value.trim())} />
            {name && nameError && (
              <span className="plait-error" data-testid="save-name-error">
                {nameError}
              </span>
            )}
          </label>
        )}
        <label className="save-version">
          {textChanged ? (isNew || saveAs ? "Version" : "New version") : "Version (the text is unchanged)"}
          <input
            data-testid="save-version"
            value={version}
            readOnly={!textChanged}
            autoFocus={!saveAs}
            onChange={(event) => setVersion(event.target.value.trim())}
            spellCheck={false}
          />
          {versionError && <span className="plait-error">{versionError}</span>}
        </label>
        <label className="dialog-field">
          Change note <span className="plait-muted">(optional, kept with the version and shown in History)</span>
          <textarea
            data-testid="save-note"
            rows={2}
            value={note}
            maxLength={2000}
            placeholder="What changed and why"
            onChange={(e) => setNote(e.target.value)}
          />
        </label>
        <p className="plait-muted" data-testid="save-layout-note">
          The node layout is saved with it ({saveAs ? name || "<name>" : graph}.layout.json beside the spec)
          {layoutChanged && !isNew && !saveAs ? ": you moved nodes since the last save." : "."}
          {!textChanged && " Only the layout changed: no new version is made."}
        </p>
        <section className="save-diff">
          <h3>{isNew || saveAs ? "The spec" : `Changes against ${baseVersion}`}</h3>
          <TextDiff before={isNew || saveAs ? "" : baseYaml} after={toSave} testId="save-diff" />
        </section>
        <footer>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" data-testid="save-confirm" disabled={blocked} title="Save (Ctrl+S)">
            {saving ? "Saving…" : saveAs ? `Save as ${name || "…"}@${version}` : textChanged ? `Save ${version}` : "Save layout"}
          </button>
        </footer>
      </form>
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
