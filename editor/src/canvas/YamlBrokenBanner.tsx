/**
 * Over the canvas while the YAML does not parse: where and what is wrong, and
 * its one-click fix. The graph under it is the last one that parsed, dimmed
 * and read-only, so it is never mistaken for what the text says now.
 */
import { applyProblemFix, goToProblem } from "../problems/ProblemsPanel";
import { useProblems } from "../problems/problems";

export function YamlBrokenBanner() {
  const problem = useProblems().find((p) => p.source === "yaml" && p.severity === "error");
  if (!problem) return null;
  return (
    <div className="plait-canvas-broken" role="alert" data-testid="canvas-yaml-broken">
      <strong>The YAML does not parse</strong>
      {problem.line !== null && (
        <button className="linkish" onClick={() => goToProblem(problem)} data-testid="canvas-yaml-broken-where">
          line {problem.line}, column {problem.column ?? 1}
        </button>
      )}
      <span>{problem.message}.</span>
      {problem.fix && <span className="plait-muted">Fix: {problem.fix}.</span>}
      {problem.quickFix && (
        <button className="primary" onClick={() => applyProblemFix(problem)} data-testid="canvas-yaml-quick-fix">
          {problem.quickFix.label}
        </button>
      )}
      <span className="plait-muted">The canvas shows the last graph that parsed; fix the YAML to edit it again.</span>
    </div>
  );
}
