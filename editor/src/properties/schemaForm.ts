/**
 * The form of a node kind, read from the spec's JSON Schema: the node map's
 * discriminator (`kind` -> `$defs/<Kind>Node`) picks the definition, and each
 * property becomes a field whose widget follows its type (optional values are
 * `anyOf [X, null]`, durations `anyOf [number, string]`, nested definitions
 * `$ref`s that are edited as YAML text).
 */
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";

import { NODE_KINDS } from "../spec/model";

export type JsonSchema = { [key: string]: unknown };

export type Widget = "readonly" | "string" | "text" | "number" | "integer" | "boolean" | "enum" | "list" | "scalar" | "yaml";

/** What a field names, when it names something the spec (or the registry) defines. */
export type Reference = "kinds" | "models" | "agents" | "tools" | "state" | "nodes" | "graphs";

/**
 * Fields whose value is a name of something defined elsewhere: the form
 * offers those names to choose from (a list field, several of them).
 */
export const REFERENCES: Record<string, Reference> = {
  kind: "kinds",
  model: "models",
  agent: "agents",
  tool: "tools",
  tools: "tools",
  output: "state",
  on_reject: "nodes",
  join: "nodes",
  branches: "nodes",
  ref: "graphs",
};

export interface FormField {
  /** Set when the field names a definition: the form offers a choice. */
  reference: Reference | null;
  name: string;
  title: string;
  description: string | null;
  widget: Widget;
  required: boolean;
  options: string[];
  default: unknown;
}

/** Fields every node kind has (description, writes, retry...): listed after a kind's own. */
function commonFields(root: JsonSchema): Set<string> {
  const defs = NODE_KINDS.map((kind) => nodeKindSchema(root, kind)).filter((def): def is JsonSchema => def !== null);
  const names = defs.map((def) => new Set(Object.keys((def.properties ?? {}) as object)));
  if (names.length === 0) return new Set();
  return new Set([...names[0]].filter((name) => name !== "kind" && names.every((set) => set.has(name))));
}
const MULTILINE = /Jinja2 template/;

function resolve(root: JsonSchema, schema: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref === "string" && ref.startsWith("#/")) {
    let target: unknown = root;
    for (const part of ref.slice(2).split("/")) target = (target as JsonSchema)[part];
    return { ...(target as JsonSchema), ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "$ref")) };
  }
  return schema;
}

/** The `$defs` entry for a node kind, or null when the schema has no such kind. */
export function nodeKindSchema(root: JsonSchema, kind: string): JsonSchema | null {
  const nodes = (((root.$defs as JsonSchema)?.GraphBody as JsonSchema)?.properties as JsonSchema)?.nodes as JsonSchema | undefined;
  const entry = nodes?.patternProperties ? (Object.values(nodes.patternProperties as JsonSchema)[0] as JsonSchema) : null;
  const mapping = (entry?.discriminator as JsonSchema | undefined)?.mapping as Record<string, string> | undefined;
  if (mapping?.[kind]) return resolve(root, { $ref: mapping[kind] });
  // No discriminator: find the oneOf member whose `kind` is const `kind`.
  for (const option of (entry?.oneOf as JsonSchema[] | undefined) ?? []) {
    const def = resolve(root, option);
    if (((def.properties as JsonSchema)?.kind as JsonSchema)?.const === kind) return def;
  }
  return null;
}

function widgetOf(root: JsonSchema, prop: JsonSchema): { widget: Widget; options: string[]; description: string | null } {
  let schema = resolve(root, prop);
  let description = typeof schema.description === "string" ? schema.description : null;
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) {
    const nonNull = variants.map((v) => resolve(root, v)).filter((v) => v.type !== "null");
    if (nonNull.length === 1) schema = { ...nonNull[0] };
    else if (nonNull.length > 1 && nonNull.every((v) => ["string", "number", "integer"].includes(String(v.type)) || v.anyOf)) {
      const inner = nonNull.flatMap((v) => (v.anyOf as JsonSchema[] | undefined) ?? [v]);
      if (inner.every((v) => ["string", "number", "integer"].includes(String(v.type))))
        return { widget: "scalar", options: [], description: description ?? (nonNull.find((v) => v.description)?.description as string) ?? null };
      return { widget: "yaml", options: [], description };
    } else return { widget: "yaml", options: [], description };
    description ??= typeof schema.description === "string" ? schema.description : null;
    if (schema.anyOf) return widgetOf(root, schema);
  }
  if (schema.const !== undefined) return { widget: "readonly", options: [], description };
  if (Array.isArray(schema.enum)) return { widget: "enum", options: schema.enum.map(String), description };
  switch (schema.type) {
    case "string":
      return { widget: MULTILINE.test(String(schema.description ?? "")) ? "text" : "string", options: [], description };
    case "integer":
      return { widget: "integer", options: [], description };
    case "number":
      return { widget: "number", options: [], description };
    case "boolean":
      return { widget: "boolean", options: [], description };
    case "array": {
      const items = resolve(root, (schema.items as JsonSchema) ?? {});
      return { widget: items.type === "string" && !items.enum ? "list" : "yaml", options: [], description };
    }
    default:
      return { widget: "yaml", options: [], description };
  }
}

/** The form fields of a node kind (kind first, then its own fields, then the shared ones). */
export function formFields(root: JsonSchema, kind: string): FormField[] {
  const def = nodeKindSchema(root, kind);
  if (!def) return [];
  const props = (def.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((def.required as string[] | undefined) ?? []);
  const names = Object.keys(props);
  const common = commonFields(root);
  const ordered = [...names.filter((n) => n === "kind"), ...names.filter((n) => n !== "kind" && !common.has(n)), ...names.filter((n) => common.has(n))];
  return ordered.map((name) => {
    const prop = props[name];
    const { widget, options, description } = widgetOf(root, prop);
    return {
      reference: REFERENCES[name] ?? null,
      name,
      title: typeof prop.title === "string" ? prop.title : name,
      description,
      widget,
      required: required.has(name),
      options,
      default: prop.default,
    };
  });
}

/** The text a widget shows for a value. */
export function formatValue(widget: Widget, value: unknown): string {
  if (value === undefined || value === null) return "";
  if (widget === "list") return Array.isArray(value) ? value.join("\n") : String(value);
  if (widget === "yaml") return typeof value === "object" ? stringifyYaml(value, { lineWidth: 0 }).trimEnd() : String(value);
  return String(value);
}

/**
 * The value a widget's text stands for: `undefined` (remove the key) for an
 * empty optional field; throws on YAML that does not parse.
 */
export function parseValue(widget: Widget, text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === "" && widget !== "text" && widget !== "string") return undefined;
  switch (widget) {
    case "number":
      return Number(trimmed);
    case "integer":
      return Math.trunc(Number(trimmed));
    case "scalar":
      return /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
    case "list":
      return text
        .split("\n")
        .map((s) => s.trim())
        .filter(Boolean);
    case "yaml":
      return parseYaml(text);
    case "string":
    case "text":
      return text === "" ? undefined : text;
    default:
      return text;
  }
}
