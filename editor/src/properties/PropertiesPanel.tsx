/**
 * Properties of the selected node: its id (renaming it renames its edges and
 * references too) and a form generated from the JSON Schema of its kind.
 * Fields that name something the spec defines (a model, tools, an agent, a
 * state field, another node, a graph to call) offer those names. Every change
 * is an edit of the YAML Document that touches only that field's lines.
 */
import { useEffect, useMemo, useState } from "react";
import schema from "../../../schemas/plait-v1.schema.json";
import { graphs } from "../api/client";
import { setField } from "../spec/edit";
import { NODE_KINDS, type GraphModel } from "../spec/model";
import { useEditorStore } from "../store/editorStore";
import { formatValue, formFields, nodeKindSchema, parseValue, type FormField, type JsonSchema, type Reference } from "./schemaForm";

const KINDS = NODE_KINDS.filter((kind) => nodeKindSchema(schema as JsonSchema, kind) !== null);

/** The registered `name@version`s last read: shown at once while they are asked again. */
let knownRefs: string[] = [];

/** Every registered `name@version` (subgraph refs choose among them), asked each time a ref
 * field is shown: a version registered since the page opened is offered too. */
function registeredRefs(): Promise<string[]> {
  return graphs
    .list()
    .then((list) => (knownRefs = list.flatMap((g) => [...g.versions].reverse().map((v) => `${g.name}@${v}`))))
    .catch(() => knownRefs);
}

function useChoices(reference: Reference | null, model: GraphModel, self: string): string[] {
  const [refs, setRefs] = useState<string[]>(knownRefs);
  useEffect(() => {
    if (reference !== "graphs") return;
    let shown = true;
    void registeredRefs().then((found) => shown && setRefs(found));
    return () => {
      shown = false;
    };
  }, [reference]);
  switch (reference) {
    case "kinds":
      return [...KINDS];
    case "models":
    case "agents":
    case "tools":
    case "state":
      return model.definitions[reference];
    case "nodes":
      return model.nodes.map((n) => n.id).filter((id) => id !== self);
    case "graphs":
      return refs;
    default:
      return [];
  }
}

export function PropertiesPanel() {
  const selected = useEditorStore((s) => (s.selectedNodes.length === 1 ? s.selectedNodes[0] : null));
  const node = useEditorStore((s) => s.model.nodes.find((n) => n.id === selected) ?? null);
  const broken = useEditorStore((s) => s.parseProblems.some((p) => p.severity === "error"));
  const kind = node?.kind;
  const fields = useMemo(() => (kind ? formFields(schema as JsonSchema, kind) : []), [kind]);

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
      {broken && (
        <p className="plait-muted" data-testid="properties-paused">
          The YAML does not parse: fix it to edit these fields again.
        </p>
      )}
      <fieldset className="plait-fieldset" disabled={broken}>
        <IdEditor key={node.id} nodeId={node.id} />
        {fields.length === 0 && <p className="plait-muted">The schema has no node kind “{node.kind}”: edit it in the YAML.</p>}
        {fields.map((field) => (
          <FieldEditor key={`${node.id}/${field.name}`} nodeId={node.id} field={field} value={node.fields[field.name]} />
        ))}
        {node.kind === "agent" && <McpTrustNote fields={node.fields} />}
        {extra.length > 0 && fields.length > 0 && (
          <p className="plait-muted" data-testid="properties-unknown">
            Not in the schema for {node.kind}: {extra.join(", ")}
          </p>
        )}
      </fieldset>
    </div>
  );
}

/** Which of an agent's tools come from MCP servers, and that untrusted servers' words are withheld. */
function McpTrustNote({ fields }: { fields: Record<string, unknown> }) {
  const mcp = useEditorStore((s) => s.model.mcp);
  const own = Array.isArray(fields.tools) ? fields.tools.map(String) : [];
  const tools = own.length > 0 ? own : typeof fields.agent === "string" ? (mcp.agentTools[fields.agent] ?? []) : [];
  const used = tools.filter((tool) => tool in mcp.servers);
  if (used.length === 0) return null;
  return (
    <p className="plait-muted" data-testid="properties-mcp-trust">
      MCP tools: {used.map((tool) => `${tool} (${mcp.servers[tool]})`).join(", ")}. The model reads a server’s own tool descriptions only if the operator trusts
      that server for your tenant; otherwise it gets each tool’s name and input schema (the problems list warns).
    </p>
  );
}

/** The node's id: renaming it renames its edges and references (Enter or leaving the field). */
function IdEditor({ nodeId }: { nodeId: string }) {
  const [draft, setDraft] = useState(nodeId);
  const [problem, setProblem] = useState<string | null>(null);
  const commit = () => {
    const next = draft.trim();
    if (next === nodeId) return setProblem(null);
    const why = useEditorStore.getState().rename(nodeId, next);
    setProblem(why);
  };
  return (
    <div className="plait-field">
      <label htmlFor="prop-id">Id</label>
      <input
        id="prop-id"
        data-testid="prop-id"
        value={draft}
        spellCheck={false}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") commit();
          else if (e.key === "Escape") {
            setDraft(nodeId);
            setProblem(null);
          }
        }}
        onBlur={commit}
      />
      <div className="plait-help">Renaming keeps its edges, references and place on the canvas.</div>
      {problem && (
        <div className="plait-error" role="alert" data-testid="prop-id-problem">
          {problem}
        </div>
      )}
    </div>
  );
}

/** A field naming a definition: a choice among the names the spec defines (several for a list). */
function ChoiceEditor({ nodeId, field, value, id }: { nodeId: string; field: FormField; value: unknown; id: string }) {
  const model = useEditorStore((s) => s.model);
  const choices = useChoices(field.reference, model, nodeId);
  const set = (next: unknown) => useEditorStore.getState().edit((doc) => setField(doc, nodeId, [field.name], next));
  const none = field.reference === "graphs" ? "no graphs registered" : `the spec defines no ${field.reference}`;
  if (field.widget === "list") {
    const picked = Array.isArray(value) ? value.map(String) : [];
    const all = [...choices, ...picked.filter((p) => !choices.includes(p))];
    return (
      <div className="plait-choices" id={id} data-testid={id} role="group" aria-label={field.title}>
        {all.length === 0 && <span className="plait-muted">{none}</span>}
        {all.map((name) => (
          <label key={name} className={choices.includes(name) ? undefined : "plait-undefined"}>
            <input
              type="checkbox"
              checked={picked.includes(name)}
              onChange={(e) => {
                const next = e.target.checked ? [...picked, name] : picked.filter((p) => p !== name);
                set(next.length > 0 || field.required ? next : undefined);
              }}
            />
            {name}
            {!choices.includes(name) && " (not defined)"}
          </label>
        ))}
      </div>
    );
  }
  const current = value === undefined || value === null ? "" : String(value);
  const options = current && !choices.includes(current) ? [current, ...choices] : choices;
  return (
    <select id={id} data-testid={id} value={current} onChange={(e) => set(e.target.value === "" ? undefined : e.target.value)}>
      {(!field.required || current === "") && <option value="">{choices.length === 0 ? `— (${none})` : "—"}</option>}
      {options.map((name) => (
        <option key={name} value={name}>
          {name}
          {choices.includes(name) ? "" : " (not defined)"}
        </option>
      ))}
    </select>
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
  if (field.reference)
    return (
      <div className={`plait-field widget-choice`}>
        <label htmlFor={id}>
          {field.title}
          {field.required && <span className="plait-required"> *</span>}
        </label>
        <ChoiceEditor nodeId={nodeId} field={field} value={value} id={id} />
        {field.description && <div className="plait-help">{field.description}</div>}
      </div>
    );
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
      input = (
        <input
          {...common}
          type="number"
          step={field.widget === "integer" ? 1 : "any"}
          value={draft}
          placeholder={placeholder(field)}
          onChange={(e) => commit(e.target.value)}
        />
      );
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
