/**
 * The YAML side: CodeMirror 6 with the YAML language, completion and hovers
 * from the spec's JSON Schema (codemirror-json-schema, bundled at build
 * time), and the problems (one per YAML error, the server's issues) as
 * markers.
 *
 * Typing updates the store's text at once (the canvas follows); text changed
 * elsewhere (canvas edits, undo) is patched into the editor as the smallest
 * changed range, so the cursor and scroll stay put. Undo/redo is the store's
 * (one history for both sides), not CodeMirror's. The pane wraps long lines
 * (a toggle), searches and replaces (Ctrl+F), goes to a line (Ctrl+Alt+G),
 * indents after `key:`, keeps hovers inside itself, and follows the canvas
 * selection: the selected node's lines are highlighted, and putting the
 * cursor in a node's lines selects it on the canvas.
 */
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, indentWithTab } from "@codemirror/commands";
import { yaml, yamlLanguage } from "@codemirror/lang-yaml";
import { bracketMatching, defaultHighlightStyle, foldGutter, foldKeymap, indentOnInput, indentService, syntaxHighlighting } from "@codemirror/language";
import { linter, lintGutter, lintKeymap, type Diagnostic } from "@codemirror/lint";
import { gotoLine, highlightSelectionMatches, openSearchPanel, search, searchKeymap } from "@codemirror/search";
import { Annotation, Compartment, EditorSelection, EditorState, Prec, RangeSetBuilder, StateEffect, StateField, type Text } from "@codemirror/state";
import {
  Decoration,
  type DecorationSet,
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  hoverTooltip,
  keymap,
  lineNumbers,
  tooltips,
  ViewPlugin,
  type ViewUpdate,
} from "@codemirror/view";
import { stateExtensions } from "codemirror-json-schema";
import { yamlCompletion, yamlSchemaHover } from "codemirror-json-schema/yaml";
import { useEffect, useRef, useState } from "react";
import schema from "../../../schemas/plait-v1.schema.json";
import { useProblems, type Problem } from "../problems/problems";
import { redo, undo, useEditorStore } from "../store/editorStore";
import { yamlIndent } from "./indent";
import { formatHover, hoverTexts } from "./schemaHover";

/** Marks transactions that bring outside text in (they must not echo back). */
const external = Annotation.define<boolean>();
/** Dispatched when the problems change, so the markers are linted again. */
const problemsChanged = StateEffect.define<null>();
/** The text span of the node selected on the canvas (null: none). */
const setSelectedSpan = StateEffect.define<[number, number] | null>();

const WRAP_KEY = "plait.yaml.wrap";

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

/**
 * Wrapped lines keep their indentation: a line's continuation starts two
 * columns right of its own indentation (a hanging indent), so wrapping never
 * hides the structure.
 */
const hangingIndent = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    constructor(view: EditorView) {
      this.decorations = this.build(view);
    }
    update(update: ViewUpdate) {
      if (update.docChanged || update.viewportChanged) this.decorations = this.build(update.view);
    }
    build(view: EditorView): DecorationSet {
      const builder = new RangeSetBuilder<Decoration>();
      for (const { from, to } of view.visibleRanges) {
        for (let pos = from; pos <= to;) {
          const line = view.state.doc.lineAt(pos);
          const indent = /^[ -]*/.exec(line.text)![0].length + 2;
          builder.add(line.from, line.from, Decoration.line({ attributes: { style: `padding-left: calc(6px + ${indent}ch); text-indent: -${indent}ch` } }));
          pos = line.to + 1;
        }
      }
      return builder.finish();
    }
  },
  { decorations: (plugin) => plugin.decorations },
);

/** Lines of the selected node, highlighted (a line decoration per line of its span). */
const selectedSpan = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    let next = deco.map(tr.changes);
    for (const effect of tr.effects) {
      if (!effect.is(setSelectedSpan)) continue;
      if (!effect.value) {
        next = Decoration.none;
        continue;
      }
      const [from, to] = effect.value;
      const builder = new RangeSetBuilder<Decoration>();
      const doc = tr.state.doc;
      const first = doc.lineAt(Math.min(from, doc.length)).number;
      const last = doc.lineAt(Math.min(Math.max(from, to - 1), doc.length)).number;
      for (let n = first; n <= last; n++) builder.add(doc.line(n).from, doc.line(n).from, Decoration.line({ class: "cm-plait-selected" }));
      next = builder.finish();
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

export function YamlEditor() {
  const host = useRef<HTMLDivElement>(null);
  const pane = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const wrap = useRef(new Compartment());
  const [wrapping, setWrapping] = useState(() => localStorage.getItem(WRAP_KEY) !== "off");
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
        highlightSelectionMatches(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        autocompletion(),
        lintGutter(),
        search({ top: true }),
        wrap.current.of(wrapping ? [EditorView.lineWrapping, hangingIndent] : []),
        keymap.of([
          { key: "Mod-z", run: () => (undo(), true), preventDefault: true },
          { key: "Mod-Shift-z", run: () => (redo(), true), preventDefault: true },
          { key: "Mod-y", run: () => (redo(), true), preventDefault: true },
          ...closeBracketsKeymap,
          ...searchKeymap,
          ...defaultKeymap,
          ...foldKeymap,
          ...completionKeymap,
          ...lintKeymap,
          indentWithTab,
        ]),
        yaml(),
        Prec.high(indentService.of((context, pos) => yamlIndent(context.lineAt(pos, -1).text))),
        yamlLanguage.data.of({ autocomplete: yamlCompletion() }),
        hoverTooltip(yamlSchemaHover({ getHoverTexts: hoverTexts, formatHover }), { hoverTime: 500 }),
        stateExtensions(schema as unknown as Parameters<typeof stateExtensions>[0]),
        // Hovers and completions stay inside the YAML pane, never over the canvas.
        tooltips({ tooltipSpace: () => pane.current?.getBoundingClientRect() ?? new DOMRect(0, 0, innerWidth, innerHeight) }),
        linter((v) => toDiagnostics(v.state.doc, problemsRef.current), {
          needsRefresh: (update) => update.transactions.some((t) => t.effects.some((e) => e.is(problemsChanged))),
        }),
        selectedSpan,
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !update.transactions.some((t) => t.annotation(external)))
            useEditorStore.getState().setYaml(update.state.doc.toString(), { typing: true });
          // The cursor moved by the person into a node's lines: select it on the canvas.
          const moved = update.transactions.some((t) => t.isUserEvent("select") || t.isUserEvent("input"));
          if (update.selectionSet && moved) selectNodeAt(update.state.selection.main.head);
        }),
        EditorView.theme({
          "&": { height: "100%" },
          ".cm-scroller": { fontFamily: "ui-monospace, Menlo, Consolas, monospace", fontSize: "12.5px" },
          ".cm-plait-selected": { backgroundColor: "rgba(47, 95, 208, 0.09)" },
        }),
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
        editor.dispatch({ selection: EditorSelection.cursor(pos), effects: EditorView.scrollIntoView(pos, { y: "center", x: "nearest" }) });
        editor.focus();
      }
      if (s.selectedNodes !== prev.selectedNodes || s.model !== prev.model)
        showSelection(editor, s.selectedNodes, s.model.nodes, s.selectedNodes !== prev.selectedNodes);
    });
    const { selectedNodes, model } = useEditorStore.getState();
    showSelection(editor, selectedNodes, model.nodes, false);
    return () => {
      unsubscribe();
      editor.destroy();
      view.current = null;
    };
    // The editor is made once; the wrap toggle reconfigures it below.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- made once, not on `wrapping`
  }, []);

  useEffect(() => {
    view.current?.dispatch({ effects: problemsChanged.of(null) });
  }, [problems]);

  useEffect(() => {
    localStorage.setItem(WRAP_KEY, wrapping ? "on" : "off");
    view.current?.dispatch({ effects: wrap.current.reconfigure(wrapping ? [EditorView.lineWrapping, hangingIndent] : []) });
  }, [wrapping]);

  const run = (command: (v: EditorView) => boolean) => {
    if (view.current) {
      command(view.current);
      view.current.focus();
    }
  };
  const yamlText = useEditorStore((s) => s.yaml);
  return (
    <div className="plait-yaml" data-testid="yaml-editor" ref={pane}>
      <div className="plait-yaml-bar">
        <span className="plait-panel-title">YAML</span>
        <span className="plait-spacer" />
        <button data-testid="yaml-find" onClick={() => run(openSearchPanel)} title="Find and replace (Ctrl+F)">
          Find
        </button>
        <button data-testid="yaml-goto" onClick={() => run(gotoLine)} title="Go to line (Ctrl+Alt+G)">
          Go to line
        </button>
        <button data-testid="yaml-wrap" aria-pressed={wrapping} onClick={() => setWrapping((w) => !w)} title="Wrap long lines">
          Wrap
        </button>
      </div>
      <div ref={host} className="plait-yaml-host" />
      {/* The whole text for tests and assistive tech (CodeMirror renders only visible lines). */}
      <textarea data-testid="yaml-text" readOnly hidden value={yamlText} />
    </div>
  );
}

/** Select on the canvas the node whose lines hold `pos` (nothing when it is already). */
function selectNodeAt(pos: number): void {
  const state = useEditorStore.getState();
  const node = state.model.nodes.find((n) => n.span && pos >= n.span[0] && pos <= n.span[1]);
  if (node && !(state.selectedNodes.length === 1 && state.selectedNodes[0] === node.id)) state.select([node.id]);
}

/** Highlight the lines of the one selected node; scroll them into view when the selection just changed. */
function showSelection(editor: EditorView, selected: string[], nodes: { id: string; span: [number, number] | null }[], reveal: boolean): void {
  const node = selected.length === 1 ? nodes.find((n) => n.id === selected[0]) : undefined;
  const span = node?.span && node.span[1] <= editor.state.doc.length ? node.span : null;
  const effects: StateEffect<unknown>[] = [setSelectedSpan.of(span)];
  // Only when the canvas picked it: the cursor already is there when the YAML picked it.
  const cursor = editor.state.selection.main.head;
  if (span && reveal && !(cursor >= span[0] && cursor <= span[1])) effects.push(EditorView.scrollIntoView(span[0], { y: "start", yMargin: 48, x: "nearest" }));
  editor.dispatch({ effects });
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
