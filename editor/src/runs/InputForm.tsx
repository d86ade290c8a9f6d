/**
 * The run's input form, generated from the graph's input schema
 * (`GET /assistants/{id}/schemas` -> input_schema) and prefilled from the
 * spec's examples. Strings, numbers, integers and booleans get their own
 * inputs; objects and arrays are edited as JSON; untyped fields take a JSON
 * value or, when the text is not JSON, the text itself. A field the input
 * schema leaves untyped takes its type from the state schema when that has one.
 */

import { useState } from "react";
import type { JsonSchema } from "../api/client";
import type { SpecExample } from "../spec/model";

export type FieldKind = "string" | "number" | "integer" | "boolean" | "json" | "enum" | "any";

export interface FormField {
  name: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  options?: unknown[];
}

function typeOf(schema: JsonSchema): string | undefined {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null");
  if (schema.type) return schema.type;
  // Optional fields are often `anyOf: [{type: X}, {type: null}]`.
  const options = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  return options?.map(typeOf).find((t) => t && t !== "null");
}

/** The form's fields from an object schema (`types`: the state schema, for fields it leaves untyped). */
export function formFields(schema: JsonSchema | null, types: JsonSchema | null = null): FormField[] {
  const properties = schema?.properties ?? {};
  const required = new Set(schema?.required ?? []);
  return Object.entries(properties).map(([name, own]) => {
    const property = typeOf(own) === undefined && !own.enum && types?.properties?.[name] ? types.properties[name] : own;
    const type = typeOf(property);
    const kind: FieldKind = Array.isArray(property.enum)
      ? "enum"
      : type === "string" || type === "number" || type === "integer" || type === "boolean"
        ? type
        : type === "object" || type === "array"
          ? "json"
          : "any";
    return { name, kind, required: required.has(name), description: property.description, options: property.enum };
  });
}

/** Text shown for a value in a field of `kind`. */
function display(kind: FieldKind, value: unknown): string {
  if (value === undefined || value === null) return "";
  if (kind === "json") return JSON.stringify(value, null, 2);
  if (kind === "any" && typeof value !== "string") return JSON.stringify(value);
  return String(value);
}

/** Parse the text of a field; throws with a readable message. */
export function parseField(field: FormField, text: string): unknown {
  if (text.trim() === "") {
    if (field.required) throw new Error(`${field.name} is required`);
    return undefined;
  }
  switch (field.kind) {
    case "number":
    case "integer": {
      const number = Number(text);
      if (!Number.isFinite(number) || (field.kind === "integer" && !Number.isInteger(number)))
        throw new Error(`${field.name} must be ${field.kind === "integer" ? "an integer" : "a number"}`);
      return number;
    }
    case "json":
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new Error(`${field.name}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
    case "enum":
      return field.options?.find((option) => String(option) === text) ?? text;
    case "any":
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    default:
      return text;
  }
}

export interface InputFormProps {
  schema: JsonSchema | null;
  /** The state schema: types for input fields the input schema leaves untyped. */
  stateSchema?: JsonSchema | null;
  examples: SpecExample[];
  disabled?: boolean;
  onSubmit(input: Record<string, unknown>): void;
}

export function InputForm({ schema, stateSchema = null, examples, disabled, onSubmit }: InputFormProps) {
  const fields = formFields(schema, stateSchema);
  const initial = examples[0]?.input ?? {};
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries(fields.map((field) => [field.name, display(field.kind, initial[field.name])])),
  );
  const [checks, setChecks] = useState<Record<string, boolean>>(() =>
    Object.fromEntries(fields.filter((f) => f.kind === "boolean").map((f) => [f.name, Boolean(initial[f.name])])),
  );
  const [error, setError] = useState<string | null>(null);

  function applyExample(name: string) {
    const example = examples.find((e) => e.name === name);
    if (!example) return;
    setTexts(Object.fromEntries(fields.map((field) => [field.name, display(field.kind, example.input[field.name])])));
    setChecks(Object.fromEntries(fields.filter((f) => f.kind === "boolean").map((f) => [f.name, Boolean(example.input[f.name])])));
  }

  function submit(event: React.FormEvent) {
    event.preventDefault();
    try {
      const input: Record<string, unknown> = {};
      for (const field of fields) {
        const value = field.kind === "boolean" ? checks[field.name] : parseField(field, texts[field.name] ?? "");
        if (value !== undefined) input[field.name] = value;
      }
      setError(null);
      onSubmit(input);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  return (
    <form className="input-form" data-testid="run-input-form" onSubmit={submit}>
      {examples.length > 0 && (
        <label className="input-example">
          Example
          <select data-testid="run-example" onChange={(event) => applyExample(event.target.value)}>
            {examples.map((example) => (
              <option key={example.name} value={example.name} title={example.description}>
                {example.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {fields.length === 0 && <p className="muted">This graph takes no input.</p>}
      {fields.map((field) => (
        <label key={field.name} className="input-field" title={field.description}>
          <span>
            {field.name}
            {field.required ? " *" : ""}
          </span>
          {field.kind === "boolean" ? (
            <input
              type="checkbox"
              name={field.name}
              checked={checks[field.name] ?? false}
              onChange={(event) => setChecks({ ...checks, [field.name]: event.target.checked })}
            />
          ) : field.kind === "enum" ? (
            <select name={field.name} value={texts[field.name] ?? ""} onChange={(event) => setTexts({ ...texts, [field.name]: event.target.value })}>
              <option value="" />
              {field.options?.map((option) => (
                <option key={String(option)}>{String(option)}</option>
              ))}
            </select>
          ) : field.kind === "json" ? (
            <textarea
              name={field.name}
              rows={3}
              spellCheck={false}
              value={texts[field.name] ?? ""}
              onChange={(event) => setTexts({ ...texts, [field.name]: event.target.value })}
            />
          ) : (
            <input
              name={field.name}
              inputMode={field.kind === "string" ? undefined : "decimal"}
              value={texts[field.name] ?? ""}
              onChange={(event) => setTexts({ ...texts, [field.name]: event.target.value })}
            />
          )}
        </label>
      ))}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="primary" data-testid="run-start" disabled={disabled}>
        Run
      </button>
    </form>
  );
}
