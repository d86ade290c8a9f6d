/**
 * One-click fixes for the server's spec issues where the fix is mechanical:
 * a "did you mean `x`?" (the misspelled name is replaced), a missing top-level
 * key the fix spells out (`apiVersion: plait/v1`), and an edge the fix spells
 * out (`- {from: a, to: b}`).
 */
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node as YamlNode } from "yaml";
import type { SpecIssue } from "../api/errors";
import { applyEdit, connect } from "../spec/edit";
import type { QuickFix, TextChange } from "./yamlProblem";

/** The single change that turns `before` into `after` (their common start and end kept). */
export function changeBetween(before: string, after: string): TextChange {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return { from: start, to: before.length - end, insert: after.slice(start, after.length - end) };
}

let parsed: { text: string; doc: Document } | null = null;
/** The text's Document, parsed once for all of its issues. */
function docOf(text: string): Document {
  if (parsed?.text !== text) parsed = { text, doc: parseDocument(text) };
  return parsed.doc;
}

/** The deepest node a JSON pointer reaches (keys and values both searched below it). */
function nodeAt(doc: Document, pointer: string): unknown {
  let current: unknown = doc.contents;
  for (const part of pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))) {
    const next = isMap(current)
      ? current.items.find((p) => isScalar(p.key) && String(p.key.value) === part)?.value
      : isSeq(current)
        ? current.items[Number(part)]
        : undefined;
    if (next === undefined || next === null) break;
    current = next;
  }
  return current;
}

/** The first scalar (a key or a value) at or below `node` that reads `word`. */
function findScalar(node: unknown, word: string): YamlNode | null {
  if (isScalar(node)) return String(node.value) === word ? node : null;
  if (isMap(node)) {
    for (const pair of node.items) {
      if (isScalar(pair.key) && String(pair.key.value) === word) return pair.key;
      const found = findScalar(pair.value, word);
      if (found) return found;
    }
  }
  if (isSeq(node))
    for (const item of node.items) {
      const found = findScalar(item, word);
      if (found) return found;
    }
  return null;
}

function didYouMean(text: string, issue: SpecIssue): QuickFix | null {
  const suggestion = /did you mean `([^`]+)`/i.exec(issue.fix ?? "")?.[1];
  if (!suggestion || !issue.pointer) return null;
  const doc = docOf(text);
  if (doc.errors.length > 0) return null;
  const parent = issue.pointer.split("/").slice(0, -1).join("/");
  // The misspelled word is one the message quotes: look for it at the pointer, then beside it.
  const words = [...(issue.message.matchAll(/`([^`]+)`/g) ?? [])].map((m) => m[1]).filter((w) => w !== suggestion);
  for (const word of words) {
    const scalar = findScalar(nodeAt(doc, issue.pointer), word) ?? findScalar(nodeAt(doc, parent), word);
    const range = scalar?.range;
    if (!scalar || !range) continue;
    const quote = isScalar(scalar) && scalar.type === "QUOTE_DOUBLE" ? '"' : isScalar(scalar) && scalar.type === "QUOTE_SINGLE" ? "'" : "";
    return { label: `Change \`${word}\` to \`${suggestion}\``, changes: [{ from: range[0], to: range[1], insert: `${quote}${suggestion}${quote}` }] };
  }
  return null;
}

function missingTopKey(text: string, issue: SpecIssue): QuickFix | null {
  const line = /add `([A-Za-z]+: [^`]+)` at the top/.exec(issue.fix ?? "")?.[1];
  if (!line || issue.code !== "schema-missing-key") return null;
  // After the leading comment lines (the schema comment stays first).
  const lines = text.split("\n");
  let at = 0;
  for (const l of lines) {
    if (!l.startsWith("#")) break;
    at += l.length + 1;
  }
  return { label: `Add \`${line}\``, changes: [{ from: at, to: at, insert: `${line}\n` }] };
}

function missingEdge(text: string, issue: SpecIssue): QuickFix | null {
  const m = /`- \{from: ([A-Za-z_][\w]*), to: ([A-Za-z_][\w]*)\}`/.exec(issue.fix ?? "");
  if (!m) return null;
  try {
    const after = applyEdit(text, (doc) => connect(doc, m[1], m[2])).text;
    return after === text ? null : { label: `Add the edge ${m[1]} → ${m[2]}`, changes: [changeBetween(text, after)] };
  } catch {
    return null;
  }
}

/** A one-click fix for `issue` of spec `text`, or null when its fix needs a person. */
export function issueFix(text: string, issue: SpecIssue): QuickFix | null {
  return didYouMean(text, issue) ?? missingTopKey(text, issue) ?? missingEdge(text, issue);
}
