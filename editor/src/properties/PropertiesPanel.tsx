/**
 * Properties of the selected node: a form generated from the JSON Schema of its
 * kind. Every change is a `setField` edit of the YAML Document, so the text
 * (and its comments) follows at once.
 */
import { useEffect, useMemo, useState } from "react";
import schema from "../../../schemas/plait-v1.schema.json";
import { setField } from "../spec/edit";
import { useEditorStore } from "../store/editorStore";
import { formatValue, formFields, parseValue, type FormField, type JsonSchema } from "./schemaForm";

export function PropertiesPanel() {
  const selected = useEditorStore((s) => (s.selectedNodes.length === 1 ? s.selectedNodes[0] : null));
  const node = useEditorStore((s) => s.model.nodes.find((n) => n.id === selected) ?? null);
  const fields = useMemo(() => (node ? formFields(schema as JsonSchema, node.kind) : []), [node?.kind]);

  if (!node) {
    return (
      <div className="plait-properties" data-testid="properties-panel">
        <div className="plait-panel-title">Properties</div>
        <p className="plait-muted">Select a node to edit its fields.</p>
      </div>
    );
  }
  const known = new Set(fields.map((f) => f.name));
  const extra = Object.keys(node.fields).filter((k) => !known.has(k));
  return (
    <div className="plait-properties" data-testid="properties-panel" data-node={node.id}>
      <div className="plait-panel-title">
        {node.id} <span className="plait-muted">({node.kind || "no kind"})</span>
      </div>
      {fields.length === 0 && <p className="plait-muted">The schema has no node kind “{node.kind}”: edit it in the YAML.</p>}
      {fields.map((field) => (
        <FieldEditor key={`${node.id}/${field.name}`} nodeId={node.id} field={field} value={node.fields[field.name]} />
      ))}
      {extra.length > 0 && fields.length > 0 && (
        <p className="plait-muted" data-testid="properties-unknown">
          Not in the schema for {node.kind}: {extra.join(", ")}
        </p>
      )}
    </div>
  );
}

function FieldEditor({ nodeId, field, value }: { nodeId: string; field: FormField; value: unknown }) {
  const shown = formatValue(field.widget, value);
  const [draft, setDraft] = useState(shown);
  const [focused, setFocused] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Follow the YAML while the user is not typing in this field.
  useEffect(() => {
    if (!focused) setDraft(shown);
  }, [shown, focused]);

  const commit = (text: string) => {
    setDraft(text);
    let parsed: unknown;
    try {
      parsed = parseValue(field.widget, text);
    } catch (e) {
      setError(e instanceof Error ? e.message.split("\n")[0] : String(e));
      return;
    }
    if (typeof parsed === "number" && Number.isNaN(parsed)) {
      setError("not a number");
      return;
    }
    setError(null);
    useEditorStore.getState().edit((doc) => setField(doc, nodeId, [field.name], parsed));
  };

  const id = `prop-${field.name}`;
  const common = {
    id,
    "data-testid": id,
    onFocus: () => setFocused(true),
    onBlur: () => setFocused(false),
  };
  let input;
  switch (field.widget) {
    case "readonly":
      input = <input {...common} value={shown} readOnly />;
      break;
    case "boolean":
      input = <input {...common} type="checkbox" checked={value === true} onChange={(e) => commit(e.target.checked ? "true" : "")} />;
      break;
    case "enum":
      input = (
        <select {...common} value={draft} onChange={(e) => commit(e.target.value)}>
          <option value="">{field.default !== undefined && field.default !== null ? `(default: ${String(field.default)})` : "—"}</option>
          {field.options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
      break;
    case "number":
    case "integer":
      input = <input {...common} type="number" step={field.widget === "integer" ? 1 : "any"} value={draft} placeholder={placeholder(field)} onChange={(e) => commit(e.target.value)} />;
      break;
    case "text":
    case "list":
    case "yaml":
      input = (
        <textarea
          {...common}
          rows={field.widget === "text" ? 3 : Math.min(8, Math.max(2, draft.split("\n").length))}
          value={draft}
          className={field.widget === "yaml" ? "mono" : undefined}
          placeholder={field.widget === "list" ? "one per line" : field.widget === "yaml" ? "YAML" : placeholder(field)}
          onChange={(e) => (field.widget === "yaml" ? setDraft(e.target.value) : commit(e.target.value))}
          // YAML is committed when it is complete (on leaving the field), not at every keystroke.
          onBlur={(e) => {
            setFocused(false);
            if (field.widget === "yaml" && e.target.value !== shown) commit(e.target.value);
          }}
        />
      );
      break;
    default:
      input = <input {...common} type="text" value={draft} placeholder={placeholder(field)} onChange={(e) => commit(e.target.value)} />;
  }
  return (
    <div className={`plait-field widget-${field.widget}`}>
      <label htmlFor={id}>
        {field.title}
        {field.required && <span className="plait-required"> *</span>}
      </label>
      {input}
      {field.description && <div className="plait-help">{field.description}</div>}
      {error && <div className="plait-error">{error}</div>}
    </div>
  );
}

const placeholder = (field: FormField) => (field.default !== undefined && field.default !== null ? `default: ${String(field.default)}` : "");
