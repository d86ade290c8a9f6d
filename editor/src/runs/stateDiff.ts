/** What changed in a thread's state between two checkpoints, field by field. */

export interface FieldChange {
  field: string;
  change: "added" | "removed" | "changed";
  before: unknown;
  after: unknown;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The fields that differ from `before` to `after` (top-level fields, in `after`'s order). */
export function stateDiff(before: Record<string, unknown>, after: Record<string, unknown>): FieldChange[] {
  const changes: FieldChange[] = [];
  const fields = [...new Set([...Object.keys(after), ...Object.keys(before)])];
  for (const field of fields) {
    const was = before[field];
    const now = after[field];
    if (!(field in before)) changes.push({ field, change: "added", before: undefined, after: now });
    else if (!(field in after)) changes.push({ field, change: "removed", before: was, after: undefined });
    else if (!same(was, now)) changes.push({ field, change: "changed", before: was, after: now });
  }
  return changes;
}
