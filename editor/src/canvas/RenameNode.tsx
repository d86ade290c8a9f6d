/**
 * Renaming a node on the canvas: double-click it (or press F2 with it
 * selected) and type the new id over its title. Enter or leaving the field
 * renames (edges, references and its position follow); Escape cancels.
 */
import { useLayoutEffect, useRef, useState } from "react";
import { useEditorStore } from "../store/editorStore";

export function RenameNode({ nodeId, container, onDone }: { nodeId: string; container: HTMLElement | null; onDone(): void }) {
  const [value, setValue] = useState(nodeId);
  const [problem, setProblem] = useState<string | null>(null);
  const [box, setBox] = useState<{ left: number; top: number; width: number } | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const finished = useRef(false);

  useLayoutEffect(() => {
    const el = container?.querySelector(`.react-flow__node[data-id="${CSS.escape(nodeId)}"]`);
    if (!el || !container) return onDone();
    const rect = el.getBoundingClientRect();
    const outer = container.getBoundingClientRect();
    setBox({ left: rect.left - outer.left, top: rect.top - outer.top, width: Math.max(rect.width, 180) });
    requestAnimationFrame(() => input.current?.select());
  }, [nodeId, container, onDone]);

  const commit = () => {
    if (finished.current) return;
    const next = value.trim();
    if (next === nodeId) {
      finished.current = true;
      return onDone();
    }
    const why = useEditorStore.getState().rename(nodeId, next);
    if (why) {
      setProblem(why);
      input.current?.focus();
      return;
    }
    finished.current = true;
    onDone();
  };

  if (!box) return null;
  return (
    <div className="plait-rename" style={{ left: box.left, top: box.top, width: box.width }} data-testid="rename-node">
      <input
        ref={input}
        aria-label={`New id for ${nodeId}`}
        data-testid="rename-node-input"
        value={value}
        spellCheck={false}
        onChange={(e) => {
          setValue(e.target.value);
          setProblem(null);
        }}
        onKeyDown={(e) => {
          e.stopPropagation(); // Backspace and Delete edit the id, not the graph
          if (e.key === "Enter") commit();
          else if (e.key === "Escape") {
            finished.current = true;
            onDone();
          }
        }}
        onBlur={() => (problem ? onDone() : commit())}
      />
      {problem && (
        <div className="plait-rename-problem" role="alert" data-testid="rename-node-problem">
          {problem}
        </div>
      )}
    </div>
  );
}
