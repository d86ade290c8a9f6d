/**
 * "Edit arguments": a form with one typed input per argument (text, number,
 * yes/no, JSON for nested values, each checked as you type), or the whole
 * arguments as JSON. Reports the arguments it holds, or null while invalid.
 */

import { useState } from "react";
import { argumentsOf, fieldsOf, isRecord, parseJson, type ArgumentField } from "./argumentFields";

export interface ArgumentsEditorProps {
  initial: unknown;
  /** The edited arguments, or null while some input does not parse. */
  onChange(value: unknown | null): void;
}

export function ArgumentsEditor({ initial, onChange }: ArgumentsEditorProps) {
  // Arguments that are not an object (rare) can only be edited as JSON.
  const [mode, setMode] = useState<"form" | "json">(isRecord(initial) ? "form" : "json");
  const [fields, setFields] = useState<ArgumentField[]>(() => (isRecord(initial) ? fieldsOf(initial) : []));
  const [text, setText] = useState(() => JSON.stringify(initial ?? {}, null, 2));
  const formState = argumentsOf(fields);
  const jsonState = parseJson(text);

  function editField(index: number, fieldText: string) {
    const next = fields.map((field, i) => (i === index ? { ...field, text: fieldText } : field));
    setFields(next);
    const { value, errors } = argumentsOf(next);
    onChange(Object.keys(errors).length ? null : value);
  }

  function editJson(next: string) {
    setText(next);
    const parsed = parseJson(next);
    onChange(parsed.ok ? parsed.value : null);
  }

  function switchTo(next: "form" | "json") {
    if (next === "json" && Object.keys(formState.errors).length === 0) setText(JSON.stringify(formState.value, null, 2));
    if (next === "form") {
      if (!jsonState.ok || !isRecord(jsonState.value)) return;
      setFields(fieldsOf(jsonState.value));
    }
    setMode(next);
  }

  const formAllowed = jsonState.ok && isRecord(jsonState.value);
  return (
    <div className="arguments-editor" data-testid="approval-arguments-editor" data-mode={mode}>
      <div className="arguments-mode" role="tablist">
        <button
          type="button"
          role="tab"
          aria-selected={mode === "form"}
          disabled={mode === "json" && !formAllowed}
          data-testid="arguments-mode-form"
          onClick={() => switchTo("form")}
          title={formAllowed ? undefined : "The JSON must be a valid object to edit it as a form"}
        >
          Form
        </button>
        <button type="button" role="tab" aria-selected={mode === "json"} data-testid="arguments-mode-json" onClick={() => switchTo("json")}>
          JSON
        </button>
      </div>
      {mode === "form" ? (
        <div className="arguments-form">
          {fields.map((field, index) => {
            const error = formState.errors[field.key];
            const id = `arg-${field.key}`;
            return (
              <label key={field.key} className="argument-field" data-field={field.key} data-kind={field.kind}>
                <span className="argument-name">{field.key}</span>
                {field.kind === "boolean" ? (
                  <input type="checkbox" name={id} checked={field.text === "true"} onChange={(e) => editField(index, String(e.target.checked))} />
                ) : field.kind === "json" ? (
                  <textarea
                    name={id}
                    className={error ? "invalid" : undefined}
                    value={field.text}
                    rows={Math.min(8, field.text.split("\n").length + 1)}
                    spellCheck={false}
                    onChange={(e) => editField(index, e.target.value)}
                  />
                ) : (
                  <input
                    name={id}
                    type={field.kind === "number" ? "number" : "text"}
                    step="any"
                    className={error ? "invalid" : undefined}
                    value={field.text}
                    onChange={(e) => editField(index, e.target.value)}
                  />
                )}
                {error && <span className="error argument-error">{error}</span>}
              </label>
            );
          })}
        </div>
      ) : (
        <>
          <textarea
            data-testid="approval-arguments-json"
            className={jsonState.ok ? undefined : "invalid"}
            value={text}
            rows={Math.min(12, text.split("\n").length + 1)}
            spellCheck={false}
            onChange={(e) => editJson(e.target.value)}
          />
          {!jsonState.ok && <span className="error argument-error">{jsonState.error}</span>}
        </>
      )}
    </div>
  );
}
