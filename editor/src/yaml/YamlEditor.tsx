/**
 * The YAML side: CodeMirror 6 with codemirror-json-schema's YAML mode
 * (diagnostics, completion and hover from the spec's JSON Schema, bundled at
 * build time) plus the parse errors and server validation issues as markers.
 *
 * Typing updates the store's text at once (the canvas follows); text changed
 * elsewhere (canvas edits, undo) is patched into the editor as the smallest
 * changed range, so the cursor and scroll stay put. Undo/redo is the store's
 * (one history for both sides), not CodeMirror's.
 */
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, defaultHighlightStyle, foldGutter, foldKeymap, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { linter, lintGutter, lintKeymap, type Diagnostic } from "@codemirror/lint";
import { Annotation, EditorSelection, EditorState, StateEffect, type Text } from "@codemirror/state";
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { yamlSchema } from "codemirror-json-schema/yaml";
import { useEffect, useRef } from "react";
import schema from "../../../schemas/plait-v1.schema.json";
import { useProblems, type Problem } from "../problems/problems";
import { redo, undo, useEditorStore } from "../store/editorStore";

/** Marks transactions that bring outside text in (they must not echo back). */
const external = Annotation.define<boolean>();
/** Dispatched when the problems change, so the markers are linted again. */
const problemsChanged = StateEffect.define<null>();

/** Problems -> CodeMirror diagnostics (line/column are 1-based). */
export function toDiagnostics(doc: Text, problems: Problem[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const p of problems) {
    if (p.line === null || p.line < 1) continue;
    const line = doc.line(Math.min(p.line, doc.lines));
    const from = Math.min(line.from + Math.max((p.column ?? 1) - 1, 0), line.to);
    const to = from < line.to ? line.to : from;
    out.push({
      from,
      to,
      severity: p.severity,
      source: p.source === "server" ? `plait${p.code ? ` ${p.code}` : ""}` : "yaml",
      message: p.fix ? `${p.message}\nFix: ${p.fix}` : p.message,
    });
  }
  return out;
}

export function YamlEditor() {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const problems = useProblems();
  const problemsRef = useRef<Problem[]>(problems);
  problemsRef.current = problems;

  useEffect(() => {
    const state = EditorState.create({
      doc: useEditorStore.getState().yaml,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        foldGutter(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        autocompletion(),
        lintGutter(),
        keymap.of([
          { key: "Mod-z", run: () => (undo(), true), preventDefault: true },
          { key: "Mod-Shift-z", run: () => (redo(), true), preventDefault: true },
          { key: "Mod-y", run: () => (redo(), true), preventDefault: true },
          ...closeBracketsKeymap,
          ...defaultKeymap,
          ...foldKeymap,
          ...completionKeymap,
          ...lintKeymap,
          indentWithTab,
        ]),
        yamlSchema(schema as unknown as Parameters<typeof yamlSchema>[0]),
        linter((v) => toDiagnostics(v.state.doc, problemsRef.current), {
          needsRefresh: (update) => update.transactions.some((t) => t.effects.some((e) => e.is(problemsChanged))),
        }),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged || update.transactions.some((t) => t.annotation(external))) return;
          useEditorStore.getState().setYaml(update.state.doc.toString(), { typing: true });
        }),
        EditorView.theme({ "&": { height: "100%" }, ".cm-scroller": { fontFamily: "ui-monospace, Menlo, Consolas, monospace", fontSize: "12.5px" } }),
      ],
    });
    const editor = new EditorView({ state, parent: host.current! });
    view.current = editor;

    // Outside changes of the text (canvas, undo, load) -> minimal patch.
    const unsubscribe = useEditorStore.subscribe((s, prev) => {
      if (s.yaml !== prev.yaml) syncText(editor, s.yaml);
      if (s.cursorRequest && s.cursorRequest !== prev.cursorRequest) {
        const doc = editor.state.doc;
        const line = doc.line(Math.max(1, Math.min(s.cursorRequest.line, doc.lines)));
        const pos = Math.min(line.from + Math.max(s.cursorRequest.column - 1, 0), line.to);
        editor.dispatch({ selection: EditorSelection.cursor(pos), effects: EditorView.scrollIntoView(pos, { y: "center" }) });
        editor.focus();
      }
    });
    return () => {
      unsubscribe();
      editor.destroy();
      view.current = null;
    };
  }, []);

  useEffect(() => {
    view.current?.dispatch({ effects: problemsChanged.of(null) });
  }, [problems]);

  const yaml = useEditorStore((s) => s.yaml);
  return (
    <div className="plait-yaml" data-testid="yaml-editor">
      <div ref={host} className="plait-yaml-host" />
      {/* The whole text for tests and assistive tech (CodeMirror renders only visible lines). */}
      <textarea data-testid="yaml-text" readOnly hidden value={yaml} />
    </div>
  );
}

function syncText(editor: EditorView, text: string): void {
  const current = editor.state.doc.toString();
  if (current === text) return;
  let start = 0;
  const max = Math.min(current.length, text.length);
  while (start < max && current.charCodeAt(start) === text.charCodeAt(start)) start++;
  let endOld = current.length;
  let endNew = text.length;
  while (endOld > start && endNew > start && current.charCodeAt(endOld - 1) === text.charCodeAt(endNew - 1)) {
    endOld--;
    endNew--;
  }
  editor.dispatch({ changes: { from: start, to: endOld, insert: text.slice(start, endNew) }, annotations: external.of(true) });
}
