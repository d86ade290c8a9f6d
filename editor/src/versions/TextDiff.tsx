/** A line diff of two texts (jsdiff), shown as a unified view with +/- gutters. */

import { diffLines } from "diff";
import { useMemo } from "react";
import "./versions.css";

export interface DiffLine {
  kind: "added" | "removed" | "same";
  text: string;
}

/** The lines of `before` -> `after`, each marked added, removed or same. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const lines: DiffLine[] = [];
  for (const part of diffLines(before, after)) {
    const kind = part.added ? "added" : part.removed ? "removed" : "same";
    const texts = part.value.replace(/\n$/, "").split("\n");
    for (const text of texts) lines.push({ kind, text });
  }
  return lines;
}

/** Unchanged runs longer than this are folded to their first and last CONTEXT lines. */
const CONTEXT = 3;

export function TextDiff({ before, after, testId }: { before: string; after: string; testId?: string }) {
  const lines = useMemo(() => lineDiff(before, after), [before, after]);
  const changed = lines.some((line) => line.kind !== "same");
  if (!changed)
    return (
      <p className="diff-empty" data-testid={testId}>
        No changes.
      </p>
    );
  const rows: React.ReactNode[] = [];
  let run: DiffLine[] = [];
  const flush = (last: boolean) => {
    const first = rows.length === 0;
    if (run.length > CONTEXT * 2 + 1 || (first && run.length > CONTEXT) || (last && run.length > CONTEXT)) {
      const head = first ? [] : run.slice(0, CONTEXT);
      const tail = last ? [] : run.slice(-CONTEXT);
      head.forEach((line, i) => rows.push(<Row key={`h${rows.length}-${i}`} line={line} />));
      rows.push(
        <div key={`f${rows.length}`} className="diff-fold">
          ⋯ {run.length - head.length - tail.length} unchanged lines
        </div>,
      );
      tail.forEach((line, i) => rows.push(<Row key={`t${rows.length}-${i}`} line={line} />));
    } else {
      run.forEach((line, i) => rows.push(<Row key={`s${rows.length}-${i}`} line={line} />));
    }
    run = [];
  };
  lines.forEach((line, i) => {
    if (line.kind === "same") {
      run.push(line);
      return;
    }
    if (run.length) flush(false);
    rows.push(<Row key={`c${i}`} line={line} />);
  });
  if (run.length) flush(true);
  return (
    <pre className="text-diff" data-testid={testId}>
      {rows}
    </pre>
  );
}

function Row({ line }: { line: DiffLine }) {
  const sign = line.kind === "added" ? "+" : line.kind === "removed" ? "-" : " ";
  return (
    <div className={`diff-line diff-${line.kind}`}>
      <span className="diff-sign">{sign}</span>
      {line.text}
    </div>
  );
}
