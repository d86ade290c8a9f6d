/**
 * The approval form's fields: one per argument, typed from its current value
 * (text, number, yes/no, or JSON for objects, lists and null), parsed back
 * with a message when a value does not fit; and the change an edit makes.
 */

export type FieldKind = "string" | "number" | "boolean" | "json";

export interface ArgumentField {
  key: string;
  kind: FieldKind;
  /** The value as the input holds it (booleans: "true" / "false"). */
  text: string;
}

export type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

/** Whether the arguments can be edited field by field (a plain object). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One field per key of `args`, typed by its value. */
export function fieldsOf(args: Record<string, unknown>): ArgumentField[] {
  return Object.entries(args).map(([key, value]) => {
    if (typeof value === "string") return { key, kind: "string", text: value };
    if (typeof value === "number") return { key, kind: "number", text: String(value) };
    if (typeof value === "boolean") return { key, kind: "boolean", text: String(value) };
    return { key, kind: "json", text: JSON.stringify(value, null, 2) };
  });
}

/** A field's value, or why its text is not one. */
export function parseField(field: ArgumentField): Parsed {
  switch (field.kind) {
    case "string":
      return { ok: true, value: field.text };
    case "boolean":
      return { ok: true, value: field.text === "true" };
    case "number": {
      const value = Number(field.text);
      return field.text.trim() !== "" && Number.isFinite(value) ? { ok: true, value } : { ok: false, error: "not a number" };
    }
    case "json":
      return parseJson(field.text);
  }
}

/** JSON text as a value, or the parser's message. */
export function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** The arguments the fields make, or every field's error by key. */
export function argumentsOf(fields: ArgumentField[]): { value: Record<string, unknown>; errors: Record<string, string> } {
  const value: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const parsed = parseField(field);
    if (parsed.ok) value[field.key] = parsed.value;
    else errors[field.key] = parsed.error;
  }
  return { value, errors };
}

export interface FieldChange {
  /** The argument's key, or "" for arguments that are not an object. */
  key: string;
  /** JSON of the old and new value (undefined: absent). */
  before: string | undefined;
  after: string | undefined;
}

const show = (value: unknown): string | undefined => (value === undefined ? undefined : JSON.stringify(value));

/** What an edit changes, field by field (added, removed or changed keys), in key order of the original. */
export function changesOf(before: unknown, after: unknown): FieldChange[] {
  if (!isRecord(before) || !isRecord(after)) return show(before) === show(after) ? [] : [{ key: "", before: show(before), after: show(after) }];
  const keys = [...Object.keys(before), ...Object.keys(after).filter((key) => !(key in before))];
  return keys.map((key) => ({ key, before: show(before[key]), after: show(after[key]) })).filter((change) => change.before !== change.after);
}
