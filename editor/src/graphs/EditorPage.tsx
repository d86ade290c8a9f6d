/**
 * The editor page of one graph version: palette | canvas | YAML, properties and
 * problems, with the toolbar; the Save dialog, version history and run panel
 * (editor helper 2's views) plug in here.
 */
import { ReactFlowProvider, useReactFlow } from "@xyflow/react";
import { useEffect, useState } from "react";
import { useStore } from "zustand";
import { graphs } from "../api/client";
import { addNodeAt, Canvas } from "../canvas/Canvas";
import { Palette } from "../canvas/Palette";
import { ProblemsPanel, useServerValidation } from "../problems/ProblemsPanel";
import { PropertiesPanel } from "../properties/PropertiesPanel";
import { editorHash } from "../routes";
import { RunPanel } from "../runs/RunPanel";
import { redo, undo, useEditorStore } from "../store/editorStore";
import { SaveDialog } from "../versions/SaveDialog";
import { VersionHistory } from "../versions/VersionHistory";
import { YamlEditor } from "../yaml/YamlEditor";
import { loadLayout, saveLayout } from "./layoutApi";

const LAYOUT_SAVE_DEBOUNCE_MS = 500;

type SidePanel = "run" | "history" | null;

export function EditorPage({ name, version }: { name: string; version: string }) {
  const [error, setError] = useState<string | null>(null);
  const loaded = useEditorStore((s) => s.graphName === name && s.version === version);

  useEffect(() => {
    const state = useEditorStore.getState();
    if (state.graphName === name && state.version === version) return; // e.g. just saved as this version
    let live = true;
    setError(null);
    Promise.all([graphs.yaml(name, version), loadLayout(name)])
      .then(([yaml, positions]) => {
        if (live) useEditorStore.getState().load({ name, version, yaml, positions });
      })
      .catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
    };
  }, [name, version]);

  // Positions go to the layout sidecar, debounced (never into the YAML).
  useEffect(() => {
    let timer = 0;
    const unsubscribe = useEditorStore.subscribe((s, prev) => {
      // Only positions a person set are saved: opening a graph writes nothing.
      if (s.layoutEdits === prev.layoutEdits || s.graphName !== name || prev.graphName !== name) return;
      window.clearTimeout(timer);
      timer = window.setTimeout(() => void saveLayout(name, useEditorStore.getState().positions).catch(() => undefined), LAYOUT_SAVE_DEBOUNCE_MS);
    });
    return () => {
      unsubscribe();
      window.clearTimeout(timer);
    };
  }, [name]);

  if (error) return <p className="plait-error plait-page" data-testid="editor-error">Could not open {name}@{version}: {error}</p>;
  if (!loaded) return <p className="plait-muted plait-page">Loading {name}@{version}…</p>;
  return (
    <ReactFlowProvider>
      <EditorLayout name={name} version={version} />
    </ReactFlowProvider>
  );
}

function EditorLayout({ name, version }: { name: string; version: string }) {
  useServerValidation();
  const flow = useReactFlow();
  const yaml = useEditorStore((s) => s.yaml);
  const dirty = useEditorStore((s) => s.yaml !== s.baseYaml);
  const canUndo = useStore(useEditorStore.temporal, (s) => s.pastStates.length > 0);
  const canRedo = useStore(useEditorStore.temporal, (s) => s.futureStates.length > 0);
  const [saving, setSaving] = useState(false);
  const [side, setSide] = useState<SidePanel>(null);
  const toggle = (panel: SidePanel) => setSide((current) => (current === panel ? null : panel));

  return (
    <div className="plait-editor" data-testid="editor">
      <div className="plait-toolbar" data-testid="toolbar">
        <span className="plait-graph-title" data-testid="graph-title">
          {name}@{version}
          {dirty && <span className="plait-dirty" data-testid="dirty-mark" title="Unsaved changes"> ●</span>}
        </span>
        <button data-testid="toolbar-undo" onClick={undo} disabled={!canUndo} title="Undo (Ctrl+Z)">Undo</button>
        <button data-testid="toolbar-redo" onClick={redo} disabled={!canRedo} title="Redo (Ctrl+Shift+Z)">Redo</button>
        <button data-testid="toolbar-auto-layout" onClick={() => useEditorStore.getState().requestLayout()}>Auto layout</button>
        <button data-testid="toolbar-fit" onClick={() => void flow.fitView({ padding: 0.15, duration: 200 })}>Fit view</button>
        <span className="plait-spacer" />
        <button data-testid="toolbar-save" onClick={() => setSaving(true)} className="primary">Save…</button>
        <button data-testid="toolbar-history" onClick={() => toggle("history")} aria-pressed={side === "history"}>History</button>
        <button data-testid="toolbar-run" onClick={() => toggle("run")} aria-pressed={side === "run"}>Run</button>
      </div>
      <div className="plait-workspace">
        <Palette onAdd={(kind) => addNodeAt(kind)} />
        <div className="plait-center">
          <Canvas />
        </div>
        <div className="plait-right">
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
      {saving && (
        <SaveDialog
          graph={name}
          baseVersion={version}
          yaml={yaml}
          onClose={() => setSaving(false)}
          onSaved={(newVersion, savedYaml) => {
            setSaving(false);
            // The stored text carries the new version: it is the new base, with positions kept.
            const store = useEditorStore.getState();
            store.load({ name, version: newVersion, yaml: savedYaml, positions: store.positions });
            window.location.hash = editorHash(name, newVersion);
          }}
        />
      )}
    </div>
  );
}
