/** Version numbers in the spec text: read, bump, and set (a one-scalar splice keeps the file as written). */

import { isScalar, parseDocument } from "yaml";

/** SemVer "MAJOR.MINOR.PATCH[-pre][+build]" -> the next patch ("1.2.3" -> "1.2.4"); pre-release parts dropped. */
export function bumpPatch(version: string): string {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  if (!match) return `${version}.1`;
  return `${match[1]}.${match[2]}.${Number(match[3]) + 1}`;
}

/** The first patch bump of `base` that no stored version uses. */
export function nextFreeVersion(base: string, taken: readonly string[]): string {
  let candidate = bumpPatch(base);
  while (taken.includes(candidate)) candidate = bumpPatch(candidate);
  return candidate;
}

/** `metadata.version` of a spec text, or null. */
export function specVersion(text: string): string | null {
  const node = parseDocument(text).getIn(["metadata", "version"], true);
  return isScalar(node) && node.value !== null ? String(node.value) : null;
}

/**
 * The text with `metadata.version` set to `version`. Only that scalar's
 * characters change (comments, key order, quoting style of everything else
 * stay byte for byte); re-stringifying the document would reflow it.
 */
export function withVersion(text: string, version: string): string {
  const doc = parseDocument(text);
  const node = doc.getIn(["metadata", "version"], true);
  const quoted = JSON.stringify(version);
  if (isScalar(node) && node.range) {
    const [start, end] = node.range;
    return text.slice(0, start) + quoted + text.slice(end);
  }
  // No version key yet: let the Document API add it (rare; the schema requires it).
  doc.setIn(["metadata", "version"], version);
  return String(doc);
}
