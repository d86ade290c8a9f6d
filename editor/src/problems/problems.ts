/**
 * One list of problems for the three places that show them (editor markers,
 * node badges, the problems list): YAML parse errors and the server's
 * validation issues, each tied to a line and, through its JSON pointer, to a
 * node.
 */
import type { SpecIssue } from "../api/errors";
import { issueFix } from "./issueFixes";
import type { QuickFix } from "./yamlProblem";
import { edgeIndexFromPointer, nodeIdFromPointer, pointerLines, type GraphModel, type ParseProblem } from "../spec/model";
import { useEditorStore } from "../store/editorStore";

export interface Problem {
  source: "yaml" | "server";
  /** A one-click fix, when the fix is mechanical. */
  quickFix: QuickFix | null;
  severity: "error" | "warning" | "info";
  message: string;
  fix: string | null;
  code: string | null;
  pointer: string | null;
  /** 1-based; null when the issue has no position. */
  line: number | null;
  column: number | null;
  nodeId: string | null;
}

/** Merge parse problems and server issues (pointers resolved to nodes and lines). */
export function collectProblems(yaml: string, model: GraphModel, parse: ParseProblem[], server: SpecIssue[]): Problem[] {
  const out: Problem[] = parse.map((p) => ({
    source: "yaml",
    severity: p.severity,
    message: p.message,
    fix: p.fix,
    quickFix: p.quickFix,
    code: p.code,
    pointer: null,
    line: p.line,
    column: p.column,
    nodeId: null,
  }));
  const nodeIds = new Set(model.nodes.map((n) => n.id));
  // Issues without a line are placed through their pointer: one parse for all of them.
  let lineOf: ((pointer: string) => number | null) | null = null;
  for (const issue of server) {
    let nodeId = nodeIdFromPointer(issue.pointer);
    const edgeIndex = edgeIndexFromPointer(issue.pointer);
    if (nodeId === null && edgeIndex !== null) nodeId = model.edges.find((e) => e.edgeIndex === edgeIndex)?.source ?? null;
    if (nodeId !== null && !nodeIds.has(nodeId)) nodeId = null;
    const line = issue.line ?? (issue.pointer && parse.length === 0 ? (lineOf ??= pointerLines(yaml))(issue.pointer) : null);
    out.push({
      source: "server",
      severity: issue.severity === "warning" ? "warning" : issue.severity === "info" ? "info" : "error",
      message: issue.message,
      fix: issue.fix ?? null,
      quickFix: issueFix(yaml, issue),
      code: issue.code ?? null,
      pointer: issue.pointer ?? null,
      line,
      column: issue.column ?? null,
      nodeId,
    });
  }
  return out;
}

/** The last inputs and result of `collectProblems`, shared by every view that shows problems. */
let last: { inputs: Parameters<typeof collectProblems>; problems: Problem[] } | null = null;

/**
 * The current problems. The editor markers, the canvas badges and the problems
 * list all call this on each edit; they share one computation (memoised on the
 * store's inputs) instead of each collecting its own.
 */
export function useProblems(): Problem[] {
  const inputs: Parameters<typeof collectProblems> = [
    useEditorStore((s) => s.yaml),
    useEditorStore((s) => s.model),
    useEditorStore((s) => s.parseProblems),
    useEditorStore((s) => s.serverIssues),
  ];
  if (!last || inputs.some((value, i) => value !== last!.inputs[i])) last = { inputs, problems: collectProblems(...inputs) };
  return last.problems;
}

/** Messages per node id, for the canvas badges. */
export function problemsByNode(problems: Problem[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const p of problems) if (p.nodeId) (out[p.nodeId] ??= []).push(p.message);
  return out;
}
