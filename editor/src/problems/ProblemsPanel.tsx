/**
 * The problems list (YAML parse errors and server validation issues), and the
 * debounced server validation that feeds it. Clicking a problem selects its
 * node and puts the YAML cursor on its line; a mechanical fix is one click.
 */
import { useEffect } from "react";
import { ApiError, graphs } from "../api/client";
import { useEditorStore } from "../store/editorStore";
import { useProblems, type Problem } from "./problems";
import { applyQuickFix } from "./yamlProblem";

const VALIDATE_DEBOUNCE_MS = 300;

/** Validate the text on the server ~300 ms after the last change (only the latest answer counts). */
export function useServerValidation(): void {
  const yaml = useEditorStore((s) => s.yaml);
  const parses = useEditorStore((s) => s.parseProblems.every((p) => p.severity !== "error"));
  useEffect(() => {
    if (!yaml.trim() || !parses) {
      useEditorStore.getState().setServerIssues([]);
      return;
    }
    let stale = false;
    const timer = window.setTimeout(() => {
      graphs
        .validate(yaml)
        .then((answer) => {
          if (!stale) useEditorStore.getState().setServerIssues(answer.issues ?? []);
        })
        .catch((error: unknown) => {
          // A 422 carrying issues is an answer too; anything else leaves the list as it was.
          if (!stale && error instanceof ApiError && error.issues.length > 0) useEditorStore.getState().setServerIssues(error.issues);
        });
    }, VALIDATE_DEBOUNCE_MS);
    return () => {
      stale = true;
      window.clearTimeout(timer);
    };
  }, [yaml, parses]);
}

/** Apply a problem's one-click fix to the text (one undo step). */
export function applyProblemFix(problem: Problem): void {
  if (!problem.quickFix) return;
  const state = useEditorStore.getState();
  state.setYaml(applyQuickFix(state.yaml, problem.quickFix));
}

export function goToProblem(problem: Problem): void {
  const state = useEditorStore.getState();
  if (problem.nodeId) state.select([problem.nodeId]);
  if (problem.line !== null) state.revealLine(problem.line, problem.column ?? 1);
}

export function ProblemsPanel() {
  const problems = useProblems();
  return (
    <div className="plait-problems" data-testid="problems-panel">
      <div className="plait-panel-title">
        Problems{" "}
        <span className="plait-count" data-testid="problems-count">
          {problems.length}
        </span>
      </div>
      {problems.length === 0 && <p className="plait-muted">No problems.</p>}
      <ul>
        {problems.map((p, i) => (
          <li
            key={i}
            className={`plait-problem sev-${p.severity}`}
            data-testid="problem-row"
            data-node={p.nodeId ?? ""}
            data-line={p.line ?? ""}
            onClick={() => goToProblem(p)}
          >
            <span className="plait-problem-sev">{p.severity}</span>
            <span className="plait-problem-where">
              {p.line !== null ? `${p.line}:${p.column ?? 1}` : ""}
              {p.nodeId ? ` ${p.nodeId}` : ""}
            </span>
            <span className="plait-problem-msg">{p.message}</span>
            {p.fix && <span className="plait-problem-fix">Fix: {p.fix}</span>}
            {p.quickFix && (
              <button
                className="plait-problem-quick-fix"
                data-testid="problem-quick-fix"
                onClick={(e) => {
                  e.stopPropagation();
                  applyProblemFix(p);
                }}
              >
                {p.quickFix.label}
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
