/**
 * The editor page of one graph version: palette | canvas | YAML, properties and
 * problems, with the toolbar; the Save dialog, version history and run panel
 * plug in here. The run panel or the history takes the place of the YAML,
 * properties and problems panes (the "Code" toggle shows them beside it), so
 * opening it never squeezes the canvas; the canvas fits the graph again
 * whenever a pane opens or closes (canvas/fitView.ts). Unsaved edits are kept in the browser (store/drafts.ts) and
 * restored when the page opens again; a graph made with "New graph" lives
 * there until its first Save.
 */
import { ReactFlowProvider, useReactFlow } from "@xyflow/react";
import { useEffect, useState } from "react";
import { useStore } from "zustand";
import { ApiError, graphs, type GraphVersionInfo } from "../api/client";
import { addNodeAt, Canvas } from "../canvas/Canvas";
import { FIT_VIEW } from "../canvas/fitView";
import { Palette } from "../canvas/Palette";
import { ProblemsPanel, useServerValidation } from "../problems/ProblemsPanel";
import { PropertiesPanel } from "../properties/PropertiesPanel";
import { editorHash } from "../routes";
import { useRunUrl } from "../runUrl";
import { RunPanel } from "../runs/RunPanel";
import { readDraft, removeDraft } from "../store/drafts";
import { isDirty, redo, undo, useEditorStore } from "../store/editorStore";
import { useDraftKeeper } from "../store/useDraftKeeper";
import { SaveDialog } from "../versions/SaveDialog";
import { VersionHistory } from "../versions/VersionHistory";
import { YamlEditor } from "../yaml/YamlEditor";
import { loadLayout } from "./layoutApi";
import { NewGraphDialog } from "./NewGraphDialog";

type SidePanel = "run" | "history" | null;

/** Open `name@version`: the server's text and layout, or (unless `discard`) the browser's draft of them. */
async function openGraph(name: string, version: string, discard = false): Promise<void> {
  if (discard) removeDraft(name, version);
  const draft = readDraft(name, version);
  let yaml: string;
  try {
    yaml = await graphs.yaml(name, version);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && draft?.isNew) {
      useEditorStore.getState().load({ name, version, yaml: draft.yaml, baseYaml: draft.baseYaml, positions: draft.positions, isNew: true });
      return;
    }
    throw e;
  }
  const positions = await loadLayout(name);
  const store = useEditorStore.getState();
  // A draft that differs from the server's text comes back as unsaved edits on top of it
  // (also a "new graph" someone has since published under the same name and version).
  if (draft && (draft.yaml !== yaml || JSON.stringify(draft.positions) !== JSON.stringify(positions))) {
    store.load({
      name,
      version,
      yaml: draft.yaml,
      baseYaml: yaml,
      positions: draft.positions,
      restoredAt: draft.savedAt,
      layoutChanged: JSON.stringify(draft.positions) !== JSON.stringify(positions),
    });
    return;
  }
  if (draft) removeDraft(name, version); // nothing unsaved in it (or the graph was saved elsewhere)
  store.load({ name, version, yaml, positions });
}

export function EditorPage({ name, version }: { name: string; version: string }) {
  const [error, setError] = useState<string | null>(null);
  // The version the store holds: just after a Save it is the new one before the URL says so,
  // and the editor stays mounted through that (no flash of "Loading").
  const shown = useEditorStore((s) => (s.graphName === name ? s.version : null));
  useDraftKeeper();

  useEffect(() => {
    const state = useEditorStore.getState();
    if (state.graphName === name && state.version === version) return; // e.g. just saved as this version
    let live = true;
    setError(null);
    openGraph(name, version).catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
    };
  }, [name, version]);

  if (error)
    return (
      <p className="plait-error plait-page" data-testid="editor-error">
        Could not open {name}@{version}: {error}
      </p>
    );
  if (!shown)
    return (
      <p className="plait-muted plait-page">
        Loading {name}@{version}…
      </p>
    );
  return (
    <ReactFlowProvider>
      <EditorLayout name={name} version={shown} />
    </ReactFlowProvider>
  );
}

function EditorLayout({ name, version }: { name: string; version: string }) {
  useServerValidation();
  const flow = useReactFlow();
  const dirty = useEditorStore(isDirty);
  const isNew = useEditorStore((s) => s.isNew);
  const restoredAt = useEditorStore((s) => s.restoredAt);
  const canUndo = useStore(useEditorStore.temporal, (s) => s.pastStates.length > 0);
  const canRedo = useStore(useEditorStore.temporal, (s) => s.futureStates.length > 0);
  const [saving, setSaving] = useState<"save" | "save-as" | null>(null);
  const [creating, setCreating] = useState(false);
  const saved = useEditorStore((s) => s.savedNotice);
  const [side, setSide] = useState<SidePanel>(null);
  // The code panes (YAML, properties, problems): shown while editing unless hidden,
  // hidden while the run panel or history is open unless asked for.
  const [codeWhileEditing, setCodeWhileEditing] = useState(true);
  const [codeBesideSide, setCodeBesideSide] = useState(false);
  const codeShown = side ? codeBesideSide : codeWhileEditing;
  const toggleCode = () => (side ? setCodeBesideSide(!codeBesideSide) : setCodeWhileEditing(!codeWhileEditing));
  const toggle = (panel: SidePanel) => {
    setCodeBesideSide(false);
    setSide((current) => (current === panel ? null : panel));
  };
  // The URL's `?thread=` opens that run here; runs started or opened here are named in the URL.
  useRunUrl(name, version, { open: side === "run", show: () => setSide("run") });

  // Ctrl/Cmd+S saves, wherever the focus is (the dialog handles it while open).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.key.toLowerCase() !== "s" || e.shiftKey || e.altKey) return;
      e.preventDefault();
      setSaving((current) => current ?? "save");
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const discardRestored = () => void openGraph(name, version, true);

  const onSaved = (stored: GraphVersionInfo & { layout_saved?: boolean }, text: string) => {
    const state = useEditorStore.getState();
    setSaving(null);
    // What was saved was this graph's draft: the new version (or graph) holds it now.
    removeDraft(name, version);
    state.load({ name: stored.name, version: stored.version, yaml: text, positions: state.positions });
    // The confirmation stays until the text changes again (the store drops it then).
    state.setSavedNotice({ name: stored.name, version: stored.version, note: stored.note ?? null, layoutSaved: !!stored.layout_saved });
    window.location.hash = editorHash(stored.name, stored.version);
  };

  const state = useEditorStore.getState();
  return (
    <div className="plait-editor" data-testid="editor">
      <div className="plait-toolbar" data-testid="toolbar">
        <span className="plait-graph-title" data-testid="graph-title">
          {name}@{version}
          {isNew && (
            <span className="plait-new-badge" data-testid="new-badge" title="Kept in this browser until its first Save">
              {" "}
              not saved yet
            </span>
          )}
          {dirty && !isNew && (
            <span className="plait-dirty" data-testid="dirty-mark" title="Unsaved changes (kept in this browser)">
              {" "}
              ●
            </span>
          )}
        </span>
        <button data-testid="toolbar-undo" onClick={undo} disabled={!canUndo} title="Undo (Ctrl+Z)">
          Undo
        </button>
        <button data-testid="toolbar-redo" onClick={redo} disabled={!canRedo} title="Redo (Ctrl+Shift+Z)">
          Redo
        </button>
        <button
          data-testid="toolbar-auto-layout"
          onClick={() => useEditorStore.getState().requestLayout()}
          title="Lay every node out again (saved with the next Save)"
        >
          Auto layout
        </button>
        <button data-testid="toolbar-fit" onClick={() => void flow.fitView({ ...FIT_VIEW, duration: 200 })}>
          Fit view
        </button>
        <button
          data-testid="toolbar-panes"
          onClick={toggleCode}
          aria-pressed={codeShown}
          title={codeShown ? "Hide the YAML, properties and problems panes" : "Show the YAML, properties and problems panes"}
        >
          Code
        </button>
        <span className="plait-spacer" />
        <button data-testid="toolbar-new" onClick={() => setCreating(true)}>
          New graph
        </button>
        <button
          data-testid="toolbar-save"
          onClick={() => setSaving("save")}
          className="primary"
          disabled={!dirty}
          title={dirty ? "Save (Ctrl+S)" : "Nothing to save"}
        >
          Save…
        </button>
        <button data-testid="toolbar-save-as" onClick={() => setSaving("save-as")} title="Save under another graph name">
          Save as…
        </button>
        <button
          data-testid="toolbar-history"
          onClick={() => toggle("history")}
          aria-pressed={side === "history"}
          disabled={isNew}
          title={isNew ? "Saved versions appear here after the first Save" : undefined}
        >
          History
        </button>
        <button data-testid="toolbar-run" onClick={() => toggle("run")} aria-pressed={side === "run"}>
          Run
        </button>
      </div>
      {restoredAt !== null && (
        <div className="plait-banner info" role="status" data-testid="restored-banner">
          Unsaved edits from {new Date(restoredAt).toLocaleString()} were restored from this browser. Save them, or
          <button onClick={discardRestored} data-testid="restored-discard">
            Discard them
          </button>
          <button onClick={() => useEditorStore.getState().dismissRestored()} aria-label="Hide this message">
            ×
          </button>
        </div>
      )}
      {saved && (
        <div className="plait-banner ok" role="status" data-testid="save-confirmation">
          Saved {saved.name}@{saved.version}
          {saved.note ? `: “${saved.note}”` : ""}
          {saved.layoutSaved ? ", with its layout" : ""}.
          <button onClick={() => useEditorStore.getState().setSavedNotice(null)} aria-label="Hide this message">
            ×
          </button>
        </div>
      )}
      <div className="plait-workspace">
        <Palette onAdd={(kind) => addNodeAt(kind)} />
        <div className="plait-center">
          <Canvas />
        </div>
        {/* Kept mounted when hidden: the YAML editor keeps its cursor, undo and scroll. */}
        <div className={`plait-right${side ? " beside-side" : ""}`} data-testid="code-panes" hidden={!codeShown}>
          <YamlEditor />
          <div className="plait-right-bottom">
            <PropertiesPanel />
            <ProblemsPanel />
          </div>
        </div>
        {side && (
          <div className="plait-side" data-testid={`side-${side}`}>
            {side === "run" && <RunPanel graph={name} version={version} />}
            {side === "history" && <VersionHistory graph={name} current={version} onOpen={(v) => (window.location.hash = editorHash(name, v))} />}
          </div>
        )}
      </div>
      {creating && <NewGraphDialog onClose={() => setCreating(false)} />}
      {saving && (
        <SaveDialog
          graph={name}
          baseVersion={version}
          isNew={isNew}
          saveAs={saving === "save-as"}
          baseYaml={state.baseYaml}
          yaml={state.yaml}
          positions={state.positions}
          layoutChanged={state.layoutEdits !== state.savedLayoutEdits}
          onClose={() => setSaving(null)}
          onSaved={onSaved}
        />
      )}
    </div>
  );
}
